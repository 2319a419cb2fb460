const KEY = 'taskyard.token';

/**
 * The bearer token lives in sessionStorage: it survives reloads of this tab but not the browser
 * session. A token handed over in the URL (`/#token=...`, printed by `taskyard serve`) is taken
 * and removed from the address bar at once, so it never stays in history or bookmarks.
 */
export function takeTokenFromUrl(): void {
  const match = /^#token=([^&]*)/.exec(location.hash);
  if (!match) return;
  saveToken(decodeURIComponent(match[1] ?? ''));
  history.replaceState(null, '', `${location.pathname}${location.search}#/`);
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
