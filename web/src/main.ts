import './styles/base.css';
import './styles/components.css';
import './styles/pages.css';
import './styles/files.css';
import { Api, ApiError } from './api/client.js';
import { clearToken, loadToken, takeTokenFromUrl } from './api/token.js';
import type { Page } from './app/page.js';
import { currentLocation, href, navigate } from './app/router.js';
import { buildShell, type Shell } from './app/shell.js';
import { renderAgent } from './pages/agent.js';
import { renderCompare } from './pages/compare.js';
import { renderJobs } from './pages/jobs.js';
import { renderLogin } from './pages/login.js';
import { renderMachine } from './pages/machine.js';
import { renderTaskDetail } from './pages/task-detail.js';
import { renderTaskSubmit } from './pages/task-submit.js';
import { renderTasks } from './pages/tasks.js';
import { renderWorkspace } from './pages/workspace.js';
import { notice } from './ui/dom.js';

const root = document.getElementById('app')!;
const api = new Api();
let shell: Shell | null = null;
let current: AbortController | null = null;

/** Picks the page for a location: `tasks/<id>` is a Task, `tasks/new/<definition>` a submit form. */
function pageFor(segments: readonly string[]): Page {
  const [section, a, b] = segments;
  if (section === 'tasks' && a === 'new') return (c, ctx) => renderTaskSubmit(c, ctx, b ?? null);
  if (section === 'tasks' && a) return (c, ctx) => renderTaskDetail(c, ctx, a);
  switch (section) {
    case 'jobs':
      return renderJobs;
    case 'workspace':
      return renderWorkspace;
    case 'compare':
      return renderCompare;
    case 'machine':
      return renderMachine;
    case 'agent':
      return renderAgent;
    default:
      return renderTasks;
  }
}

/** Shows the page of the current hash; the previous page's work is aborted first. */
function show(): void {
  current?.abort();
  if (!shell) return;
  current = new AbortController();
  const location = currentLocation();
  shell.select(location.segments[0] ?? 'tasks');
  const container = document.createElement('div');
  container.className = 'page';
  shell.main.replaceChildren(container);
  try {
    pageFor(location.segments)(container, { api, location, signal: current.signal });
  } catch (err) {
    container.replaceChildren(notice(String(err), 'error'));
  }
}

/** After a machine switch: paths and Task IDs belong to the other machine, so start at the section. */
function showSectionRoot(): void {
  const section = currentLocation().segments[0] ?? 'tasks';
  navigate(href([section]), true);
}

function enter(): void {
  shell = buildShell(api, { onTargetChange: showSectionRoot, onSignOut: () => login(null) });
  root.replaceChildren(shell.element);
  show();
}

function login(message: string | null): void {
  current?.abort();
  shell = null;
  clearToken();
  renderLogin(root, api, message, enter);
}

let booting = true;
api.onUnauthorized((err) => {
  // On the login page the form shows the error itself; elsewhere the token went stale.
  if (!booting && shell) login(err.detail);
});

/**
 * The first call tells whether the stored token (if any) works; an open service needs none.
 * Without a stored token a 401 is expected: ask for one without showing an error.
 */
function boot(): void {
  booting = true;
  const hadToken = loadToken() !== null;
  api
    .catalog()
    .then(enter)
    .catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 401) login(hadToken ? err.detail : null);
      else root.replaceChildren(notice(`Cannot reach the service: ${String(err)}`, 'error'));
    })
    .finally(() => {
      booting = false;
    });
}

// A console link pasted into this same tab (`/#token=…`, e.g. after a wrong token) only changes
// the hash: take the token, clear it from the address bar, and start again with it.
window.addEventListener('hashchange', () => {
  if (takeTokenFromUrl()) boot();
  else show();
});
takeTokenFromUrl();
boot();
