import type { GraphNode, TaskGraph } from '../api/types.js';
import { href } from '../app/router.js';
import { svg } from './dom.js';
import { instanceName } from './task-bits.js';

const NODE_W = 200;
const NODE_H = 46;
const GAP_X = 64;
const GAP_Y = 18;
const PAD = 12;

/** Column of each node: the longest chain of parents above it (so every edge points right). */
function layers(nodes: readonly GraphNode[]): Map<string, number> {
  const byId = new Map(nodes.map((n) => [n.task_id, n]));
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const visit = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0; // A cycle in bad records must not hang the page.
    visiting.add(id);
    const parents = byId.get(id)?.parent_ids.filter((p) => byId.has(p)) ?? [];
    const d = parents.length ? Math.max(...parents.map(visit)) + 1 : 0;
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const n of nodes) visit(n.task_id);
  return depth;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The lineage of a Task as an SVG graph: sources on the left, descendants to the right, one
 * box per Task (coloured by state, dashed when missing, faded when provisional), the selected one
 * outlined. Boxes link to their Task.
 */
export function lineageGraph(graph: TaskGraph): SVGElement {
  const depth = layers(graph.nodes);
  const columns: GraphNode[][] = [];
  for (const n of [...graph.nodes].sort((a, b) => (a.created_at ?? '').localeCompare(b.created_at ?? '') || a.task_id.localeCompare(b.task_id))) {
    (columns[depth.get(n.task_id) ?? 0] ??= []).push(n);
  }
  const pos = new Map<string, { x: number; y: number }>();
  columns.forEach((col, c) => col.forEach((n, r) => pos.set(n.task_id, { x: PAD + c * (NODE_W + GAP_X), y: PAD + r * (NODE_H + GAP_Y) })));
  const width = PAD * 2 + columns.length * NODE_W + Math.max(0, columns.length - 1) * GAP_X;
  const height = PAD * 2 + Math.max(1, ...columns.map((c) => c.length)) * (NODE_H + GAP_Y) - GAP_Y;

  const edges = graph.nodes.flatMap((n) =>
    n.parent_ids.flatMap((p) => {
      const from = pos.get(p);
      const to = pos.get(n.task_id);
      if (!from || !to) return [];
      const x1 = from.x + NODE_W;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x;
      const y2 = to.y + NODE_H / 2;
      const mid = (x1 + x2) / 2;
      return [svg('path', { class: 'edge', d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2 - 4},${y2}`, 'marker-end': 'url(#arrow)' })];
    }),
  );
  const boxes = graph.nodes.map((n) => {
    const { x, y } = pos.get(n.task_id)!;
    const cls = ['node', `state-${n.state ?? 'unknown'}`, n.missing ? 'missing' : '', n.provisional ? 'provisional' : '', n.task_id === graph.selected_id ? 'selected' : ''].filter(Boolean).join(' ');
    return svg(
      'a',
      { href: href(['tasks', n.task_id]), class: cls, 'aria-label': `${n.task_id} ${n.state ?? ''}` },
      svg('title', {}, `${n.task_id}\nstate: ${n.state ?? 'unknown'}${n.missing ? '\nmissing' : ''}${n.provisional ? '\nprovisional' : ''}`),
      svg('rect', { x, y, width: NODE_W, height: NODE_H, rx: 7 }),
      svg('circle', { cx: x + 14, cy: y + 16, r: 4.5, class: 'dot' }),
      svg('text', { x: x + 26, y: y + 20, class: 'name' }, clip(instanceName(n.task_id), 22)),
      svg('text', { x: x + 12, y: y + 36, class: 'sub' }, clip(`${n.kind || n.task_id.split('#')[0]} · ${n.missing ? 'missing' : (n.state ?? '?')}`, 30)),
    );
  });
  return svg(
    'svg',
    { class: 'lineage', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': `Lineage graph with ${graph.nodes.length} Tasks` },
    svg('defs', {}, svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }))),
    edges,
    boxes,
  );
}
