import { type Api, errorText } from '../api/client.js';
import { saveToken } from '../api/token.js';
import { h } from '../ui/dom.js';

/**
 * Asks for the bearer token and checks it against `GET /jobs` before entering. A rejected token
 * shows the service's own words (`Invalid bearer token`).
 */
export function renderLogin(container: HTMLElement, api: Api, message: string | null, onSuccess: () => void): void {
  const input = h('input', { id: 'token', type: 'password', autocomplete: 'current-password', required: true, spellcheck: false, placeholder: 'bearer token' });
  const error = h('p', { class: 'form-error', role: 'alert', id: 'login-error' }, message ?? '');
  const button = h('button', { type: 'submit', class: 'primary' }, 'Open console');
  const form = h(
    'form',
    { class: 'login card', 'aria-labelledby': 'login-title' },
    h('h1', { id: 'login-title' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }), 'taskyard'),
    h('p', { class: 'muted' }, 'Enter the service token. ', h('code', {}, 'taskyard serve'), ' prints a console link that carries it.'),
    h('label', { for: 'token' }, 'Token'),
    input,
    error,
    button,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    button.disabled = true;
    error.textContent = '';
    saveToken(input.value.trim());
    api
      .catalog()
      .then(onSuccess)
      .catch((err: unknown) => {
        error.textContent = errorText(err);
        button.disabled = false;
        input.select();
      });
  });
  container.replaceChildren(h('main', { class: 'login-page' }, form));
  input.focus();
}
