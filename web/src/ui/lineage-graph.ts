import { Graph, layout, type EdgeLabel, type GraphLabel, type NodeLabel } from '@dagrejs/dagre';
import type { GraphNode, TaskGraph } from '../api/types.js';
import { svg } from './dom.js';
import { instanceName } from './task-bits.js';

const NODE_W = 200;
const NODE_H = 46;
const PAD = 12;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A smooth path through dagre's edge points: straight at the ends, rounded at each bend. */
function pathThrough(points: ReadonlyArray<{ x: number; y: number }>): string {
  const [first, ...rest] = points;
  if (!first) return '';
  let d = `M${first.x},${first.y}`;
  rest.forEach((p, i) => {
    const next = rest[i + 1];
    // Quadratic through each bend point's midpoint keeps the curve inside dagre's routing channel.
    d += next ? ` Q${p.x},${p.y} ${(p.x + next.x) / 2},${(p.y + next.y) / 2}` : ` L${p.x},${p.y}`;
  });
  return d;
}

/**
 * Layered layout (dagre): sources left, descendants right. An edge that spans several layers is
 * routed through a slot of its own in each layer it crosses, so it never passes under a box and
 * a `ghost → grandchild` edge cannot be read as `ghost → child`.
 */
function place(nodes: readonly GraphNode[]): { g: Graph<GraphLabel, NodeLabel, EdgeLabel>; width: number; height: number } {
  const g = new Graph<GraphLabel, NodeLabel, EdgeLabel>({ multigraph: false });
  g.setGraph({ rankdir: 'LR', nodesep: 18, ranksep: 64, edgesep: 14, marginx: PAD, marginy: PAD });
  g.setDefaultEdgeLabel(() => ({}));
  const ordered = [...nodes].sort((a, b) => (a.created_at ?? '').localeCompare(b.created_at ?? '') || a.task_id.localeCompare(b.task_id));
  for (const n of ordered) g.setNode(n.task_id, { width: NODE_W, height: NODE_H });
  for (const n of ordered) for (const p of n.parent_ids) if (p !== n.task_id && g.hasNode(p)) g.setEdge(p, n.task_id);
  layout(g);
  const label = g.graph();
  return { g, width: Math.ceil(label.width ?? NODE_W + 2 * PAD), height: Math.ceil(label.height ?? NODE_H + 2 * PAD) };
}

/**
 * The lineage of a Task as an SVG graph: one box per Task (coloured by state, dashed when
 * missing, faded when provisional), the selected one outlined. Boxes link to their Task.
 * `linkOf` makes a box's link from its Task ID (the page knows the console's routes; this widget
 * does not). `liveState` overrides the selected Task's recorded state with the one the page follows.
 */
export function lineageGraph(graph: TaskGraph, linkOf: (taskId: string) => string, liveState?: string): SVGElement {
  const { g, width, height } = place(graph.nodes);
  const edges = g.edges().map((e) => svg('path', { class: 'edge', 'data-from': e.v, 'data-to': e.w, d: pathThrough(g.edge(e).points ?? []), 'marker-end': 'url(#arrow)' }));
  const boxes = graph.nodes.map((n) => {
    const c = g.node(n.task_id);
    const x = (c.x ?? 0) - NODE_W / 2;
    const y = (c.y ?? 0) - NODE_H / 2;
    const state = (n.task_id === graph.selected_id && liveState) || n.state || 'unknown';
    const shown = n.missing ? 'missing' : state;
    const cls = ['node', `state-${state}`, n.missing ? 'missing' : '', n.provisional ? 'provisional' : '', n.task_id === graph.selected_id ? 'selected' : ''].filter(Boolean).join(' ');
    return svg(
      'a',
      { href: linkOf(n.task_id), class: cls, 'data-task-id': n.task_id, 'aria-label': `${n.task_id} ${shown}` },
      svg('title', {}, `${n.task_id}\nstate: ${state}${n.missing ? '\nmissing' : ''}${n.provisional ? '\nprovisional' : ''}`),
      svg('rect', { x, y, width: NODE_W, height: NODE_H, rx: 7 }),
      svg('circle', { cx: x + 14, cy: y + 16, r: 4.5, class: 'dot' }),
      svg('text', { x: x + 26, y: y + 20, class: 'name' }, clip(instanceName(n.task_id), 22)),
      svg('text', { x: x + 12, y: y + 36, class: 'sub' }, clip(`${n.kind || n.task_id.split('#')[0]} · ${shown}`, 30)),
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
