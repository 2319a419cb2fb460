const KEY = 'taskyard.token';

/**
 * The bearer token lives in sessionStorage: it survives reloads of this tab but not the browser
 * session. A token handed over in the URL (`/#token=...`, printed by `taskyard serve`) is taken
 * and removed from the address bar at once, so it never stays in history or bookmarks.
 */
export function takeTokenFromUrl(): boolean {
  const match = /^#token=([^&]*)/.exec(location.hash);
  if (!match) return false;
  let token = match[1] ?? '';
  try {
    token = decodeURIComponent(token);
  } catch {
    // A token with a stray `%` is used as written.
  }
  saveToken(token);
  history.replaceState(null, '', `${location.pathname}${location.search}#/`);
  return true;
}

export function loadToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function saveToken(token: string): void {
  if (token) sessionStorage.setItem(KEY, token);
  else sessionStorage.removeItem(KEY);
}

export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}
