import { errorText } from '../api/client.js';
import type { GpuDevice, MachineHealth, MachineInfo } from '../api/types.js';
import { href } from '../app/router.js';
import { every, type PageContext } from '../app/page.js';
import { h, notice } from '../ui/dom.js';
import { formatBytes, formatPercent } from '../ui/format.js';
import { progressBar } from '../ui/progress-bar.js';
import { MachineHistoryPanel } from './machine-history.js';
import { refreshWebhooks } from './machine-webhooks.js';

const REFRESH_MS = 5000;

function figure(label: string, value: string, extra?: Node): HTMLElement {
  return h('div', { class: 'figure' }, h('dt', {}, label), h('dd', {}, value, extra ?? null));
}

function statusCards(info: MachineInfo): HTMLElement[] {
  const build = info.axonx;
  const { cpu, memory } = info;
  return [
    h('section', { class: 'card stat', 'aria-label': 'Service' }, h('h3', {}, 'Service'), h('dl', {}, figure('version', build.version), figure('git commit', build.git_commit?.slice(0, 12) ?? '—'), figure('git branch', build.git_branch ?? '—'))),
    h(
      'section',
      { class: 'card stat', 'aria-label': 'CPU' },
      h('h3', {}, 'CPU'),
      h('p', { class: 'big' }, formatPercent(cpu.usage_percent)),
      progressBar(cpu.usage_percent, 'CPU usage'),
      h('dl', {}, figure('logical cores', String(cpu.total_cores ?? '—')), figure('physical cores', String(cpu.physical_cores ?? '—'))),
    ),
    h(
      'section',
      { class: 'card stat', 'aria-label': 'Memory' },
      h('h3', {}, 'Memory'),
      h('p', { class: 'big' }, formatPercent(memory.usage_percent)),
      progressBar(memory.usage_percent, 'Memory usage'),
      h('dl', {}, figure('used', formatBytes(memory.used_bytes)), figure('available', formatBytes(memory.available_bytes)), figure('total', formatBytes(memory.total_bytes))),
    ),
  ];
}

function gpuTable(gpus: readonly GpuDevice[]): HTMLElement {
  if (!gpus.length) return notice('No GPU detected on this machine.', 'empty');
  return h(
    'table',
    { class: 'grid' },
    h('thead', {}, h('tr', {}, ['#', 'vendor', 'name', 'memory', 'utilisation', 'temperature'].map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      gpus.map((g) =>
        h(
          'tr',
          {},
          h('td', {}, String(g.index)),
          h('td', {}, g.vendor),
          h('td', {}, g.name ?? '—'),
          h('td', {}, g.memory_total_bytes === null ? '—' : `${formatBytes(g.memory_used_bytes)} / ${formatBytes(g.memory_total_bytes)}`),
          h('td', {}, g.utilization_percent === null ? '—' : progressBar(g.utilization_percent, `GPU ${g.index} utilisation`), ' ', formatPercent(g.utilization_percent)),
          h('td', {}, g.temperature_celsius === null ? '—' : `${g.temperature_celsius} °C`),
        ),
      ),
    ),
  );
}

/** Which Task holds which GPU (the local executor's leases). */
function leasesTable(leases: MachineInfo['gpu_leases']): HTMLElement {
  if (!leases.length) return notice('No GPU is leased to a Task.', 'empty');
  return h(
    'table',
    { class: 'grid', 'aria-label': 'GPU leases' },
    h('thead', {}, h('tr', {}, ['GPU', 'Task', 'run'].map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      leases.map((l) => h('tr', {}, h('td', {}, String(l.index)), h('td', {}, h('a', { href: href(['tasks', l.task_id]) }, l.task_id)), h('td', {}, h('code', {}, l.run_id.slice(0, 12))))),
    ),
  );
}

function targetsTable(machines: readonly MachineHealth[], ctx: PageContext): HTMLElement {
  if (!machines.length) return notice('No targets configured: calls run on this service only.', 'empty');
  return h(
    'table',
    { class: 'grid' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'address'), h('th', { scope: 'col' }, 'health'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'select')))),
    h(
      'tbody',
      {},
      machines.map((m) => {
        const use = h('button', { type: 'button', class: 'small' }, ctx.api.target === m.address ? 'selected' : 'use');
        use.disabled = ctx.api.target === m.address;
        use.addEventListener('click', () => {
          const select = document.getElementById('target') as HTMLSelectElement | null;
          if (select) {
            select.value = m.address;
            select.dispatchEvent(new Event('change'));
          }
        });
        return h('tr', {}, h('td', {}, h('code', {}, m.address)), h('td', {}, h('span', { class: `badge ${m.healthy ? 'badge-ok' : 'badge-fail'}` }, m.healthy ? 'healthy' : 'unreachable')), h('td', {}, use));
      }),
    ),
  );
}

/** The Machine page: figures of the selected machine, refreshed, and this service's targets. */
export function renderMachine(container: HTMLElement, ctx: PageContext): void {
  const where = ctx.api.target ?? 'this service';
  const cards = h('div', { class: 'stat-grid' }, notice('Sampling…'));
  const gpus = h('div', {});
  const leases = h('div', {});
  const targets = h('div', {}, notice('Checking targets…'));
  const webhooks = h('div', {}, notice('Reading webhooks…'));
  const history = new MachineHistoryPanel(ctx.api, ctx.signal);
  container.replaceChildren(
    h('div', { class: 'page-head' }, h('h1', {}, 'Machine'), h('span', { class: 'muted' }, `figures of ${where}, refreshed every ${REFRESH_MS / 1000} s`)),
    cards,
    h('section', { class: 'card', 'aria-label': 'History' }, h('h2', {}, 'History'), history.element),
    h('section', { class: 'card' }, h('h2', {}, 'GPUs'), gpus, h('h3', {}, 'Leases'), leases),
    h('section', { class: 'card' }, h('h2', {}, 'Targets'), h('p', { class: 'muted' }, `Machines this service forwards calls to, checked every ${REFRESH_MS / 1000} s. Selecting one sends every call of the console there.`), targets),
    h('section', { class: 'card', 'aria-label': 'Webhooks' }, h('h2', {}, 'Webhooks'), h('p', { class: 'muted' }, 'Signed deliveries of Task ends by this service (config webhooks), and their outbox.'), webhooks),
  );
  every(() => history.intervalMs, ctx.signal, () => history.refresh());
  every(REFRESH_MS, ctx.signal, () => refreshWebhooks(webhooks, ctx));
  every(REFRESH_MS, ctx.signal, async () => {
    try {
      const info = await ctx.api.answer<MachineInfo>('machine_status', {}, { signal: ctx.signal });
      cards.replaceChildren(...statusCards(info));
      gpus.replaceChildren(gpuTable(info.gpus));
      // An older target answers without leases.
      leases.replaceChildren(leasesTable(info.gpu_leases ?? []));
    } catch (err) {
      if (!ctx.signal.aborted) cards.replaceChildren(notice(errorText(err), 'error'));
    }
  });
  // Checked again with the figures: a target that was slow to answer (reported unreachable after
  // the check's timeout) or that comes up later shows healthy without a reload of the page.
  every(REFRESH_MS, ctx.signal, async () => {
    try {
      const machines = await ctx.api.answer<MachineHealth[]>('list_machines', {}, { signal: ctx.signal, local: true });
      targets.replaceChildren(targetsTable(machines, ctx));
    } catch (err) {
      if (!ctx.signal.aborted) targets.replaceChildren(notice(errorText(err), 'error'));
    }
  });
}
