/** Where the console is: hash routes like `#/tasks/<id>?state=running` (the server only serves `/`). */
export interface Location {
  readonly segments: readonly string[];
  readonly query: URLSearchParams;
}

/** Parses `location.hash`; an empty hash is the Tasks page, where a researcher starts. */
export function currentLocation(): Location {
  const raw = location.hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  const segments = path.split('/').filter(Boolean).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  return { segments: segments.length ? segments : ['tasks'], query: new URLSearchParams(q === -1 ? '' : raw.slice(q + 1)) };
}

/** The hash link for a route; segments are encoded, so Task IDs with `#` survive. */
export function href(segments: readonly string[], query: Record<string, string | null | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) params.set(k, v);
  const qs = params.toString();
  return `#/${segments.map(encodeURIComponent).join('/')}${qs ? `?${qs}` : ''}`;
}

/** Goes to a route; `replace` changes the current history entry (filters, paging). */
export function navigate(link: string, replace = false): void {
  if (replace) {
    history.replaceState(null, '', link);
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  } else {
    location.hash = link;
  }
}
