import { parseTaskId } from './task-ids.js';
import type { TaskIndex, TaskRecord } from './task-index.js';
import type { GraphEdge, GraphNode, Relations, TaskGraph } from '../../schemas/tasks.js';

export type { GraphEdge, GraphNode, Relations, TaskGraph };


/**
 * Nodes of records, with their JSON text: a record is replaced, never changed, so its node stays
 * true. A lineage of 50,000 nodes then costs lookups and one join, not 50,000 serialisations.
 */
const nodes = new WeakMap<TaskRecord, { node: GraphNode; json: string }>();

function cachedNodeOf(id: string, record: TaskRecord | undefined): { node: GraphNode; json: string } {
  let cached = record && nodes.get(record);
  if (!cached) {
    const node = nodeOf(id, record);
    cached = { node, json: JSON.stringify(node) };
    if (record) nodes.set(record, cached);
  }
  return cached;
}

function nodeOf(id: string, record: TaskRecord | undefined): GraphNode {
  const parts = record?.parts ?? parseTaskId(id);
  const state = record?.status?.state ?? (record?.hasMetadata ? 'succeeded' : null);
  return {
    task_id: id,
    kind: parts?.type ?? '',
    task_name: parts?.registration ?? '',
    created_at: record?.createdAt ?? null,
    parent_ids: [...(record?.sources ?? [])],
    state,
    missing: !record,
    provisional: state === 'queued' || state === 'running',
  };
}

/** Breadth-first closure from `start` along `next`, excluding `start`, cycle-safe. */
function closure(start: string, next: (id: string) => readonly string[]): string[] {
  const seen = new Set([start]);
  const order: string[] = [];
  // `order` doubles as the queue: index `head` is the next to expand.
  let current: string | undefined = start;
  for (let head = 0; current !== undefined; current = order[head++]) {
    for (const id of next(current)) {
      if (seen.has(id)) continue;
      seen.add(id);
      order.push(id);
    }
  }
  return order;
}

/** A lineage: the graph and relations, with the graph's JSON text built from cached node texts. */
export interface Lineage {
  graph: TaskGraph;
  relations: Relations;
  graphJson: string;
}

/**
 * The lineage of one Task from recorded `source_tasks` (status, else metadata): its ancestors,
 * itself and its descendants. Referenced IDs without a record become `missing` nodes. Nothing is
 * executed: this only reads the index, whose child links make the cost that of the answer.
 */
export function buildLineage(index: TaskIndex, selected: string): Lineage {
  const parentsOf = (id: string) => index.get(id)?.sources ?? [];
  const ancestors = closure(selected, parentsOf);
  const directChildren = index.childrenOf(selected);
  const descendants = closure(selected, (id) => (id === selected ? directChildren : index.childrenOf(id)));
  const ids = [...ancestors.slice().reverse(), selected, ...descendants];
  const inGraph = new Set(ids);
  const nodeList: GraphNode[] = [];
  const nodeTexts: string[] = [];
  const edges: GraphEdge[] = [];
  const edgeTexts: string[] = [];
  const missing: string[] = [];
  const provisional: string[] = [];
  // One pass: a fan-out of 50,000 makes every intermediate array count.
  for (const id of ids) {
    const { node, json } = cachedNodeOf(id, index.get(id));
    nodeList.push(node);
    nodeTexts.push(json);
    for (const parent of node.parent_ids) {
      if (!inGraph.has(parent)) continue;
      edges.push({ source: parent, target: id });
      edgeTexts.push(`{"source":${JSON.stringify(parent)},"target":${JSON.stringify(id)}}`);
    }
    if (node.missing) missing.push(id);
    if (node.provisional) provisional.push(id);
  }
  // The root is the first ancestor without parents (the selected Task itself when it has none).
  const root = nodeList.find((n) => n.parent_ids.length === 0)?.task_id ?? selected;
  return {
    graph: { root_id: root, selected_id: selected, nodes: nodeList, edges },
    relations: { direct_upstream: [...parentsOf(selected)], ancestors, direct_downstream: [...directChildren], missing, provisional },
    graphJson: `{"root_id":${JSON.stringify(root)},"selected_id":${JSON.stringify(selected)},"nodes":[${nodeTexts.join(',')}],"edges":[${edgeTexts.join(',')}]}`,
  };
}
