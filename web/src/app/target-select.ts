import type { Api } from '../api/client.js';
import type { MachineHealth } from '../api/types.js';
import { h } from '../ui/dom.js';

/**
 * The machine selector in the header: this service or one of its configured targets (from a
 * local `list_machines`). Choosing a target makes every later call carry the envelope `target`.
 */
export function targetSelect(api: Api, onChange: () => void): HTMLElement {
  const select = h('select', { id: 'target', 'aria-label': 'Machine that runs the calls' }, h('option', { value: '' }, 'this service'));
  const wrap = h('label', { class: 'target-select', for: 'target', hidden: true }, h('span', { class: 'muted' }, 'machine'), select);
  select.addEventListener('change', () => {
    api.setTarget(select.value || null);
    onChange();
  });
  if (!api.may('list_machines')) {
    // A token that may not list the machines has none to choose from.
    if (api.target) api.setTarget(null);
    return wrap;
  }
  api
    .answer<MachineHealth[]>('list_machines', {}, { local: true })
    .then((machines) => {
      for (const m of machines) select.append(h('option', { value: m.address }, `${m.healthy ? '●' : '○'} ${m.address}`));
      if (api.target && !machines.some((m) => m.address === api.target)) api.setTarget(null);
      select.value = api.target ?? '';
      wrap.hidden = machines.length === 0 && !api.target;
    })
    .catch(() => {
      // No list_machines on this service (or not public): there is nothing to choose from.
      if (api.target) api.setTarget(null);
    });
  return wrap;
}
