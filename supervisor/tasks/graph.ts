import { parseTaskId } from './task-ids.js';
import type { TaskIndex, TaskRecord } from './task-index.js';
import type { GraphEdge, GraphNode, Relations, TaskGraph } from '../../schemas/tasks.js';

export type { GraphEdge, GraphNode, Relations, TaskGraph };

/** Characters gathered before a piece of the answer's text is handed on (a few writes per MB). */
const CHUNK_CHARS = 1 << 20;

/**
 * A record's node as JSON text, and the texts of its edges (one per parent, in parent order). A
 * record is replaced, never changed, so these stay true: a lineage of 50,000 nodes then costs
 * lookups and copies, not 100,000 serialisations and the garbage they leave.
 */
interface NodeTexts {
  readonly node: string;
  readonly parents: readonly string[];
  readonly edges: readonly string[];
  readonly missing: boolean;
  readonly provisional: boolean;
}

const cache = new WeakMap<TaskRecord, NodeTexts>();

function textsOf(id: string, record: TaskRecord | undefined): NodeTexts {
  let texts = record && cache.get(record);
  if (!texts) {
    texts = nodeTexts(id, record);
    if (record) cache.set(record, texts);
  }
  return texts;
}

function nodeTexts(id: string, record: TaskRecord | undefined): NodeTexts {
  const parts = record?.parts ?? parseTaskId(id);
  // `state`, not `status.state`: a stored record's status stays unparsed.
  const state = record?.state ?? (record?.hasMetadata ? 'succeeded' : null);
  const node: GraphNode = {
    task_id: id,
    kind: parts?.type ?? '',
    task_name: parts?.registration ?? '',
    created_at: record?.createdAt ?? null,
    parent_ids: [...(record?.sources ?? [])],
    state,
    missing: !record,
    provisional: state === 'queued' || state === 'running',
  };
  const target = JSON.stringify(id);
  return {
    node: JSON.stringify(node),
    parents: node.parent_ids,
    edges: node.parent_ids.map((parent) => `{"source":${JSON.stringify(parent)},"target":${target}}`),
    missing: node.missing,
    provisional: node.provisional,
  };
}

/** Breadth-first closure from `start` along `next`, excluding `start`, cycle-safe; `seen` includes `start`. */
function closure(start: string, next: (id: string) => readonly string[]): { order: string[]; seen: Set<string> } {
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
  return { order, seen };
}

/** Gathers small texts into pieces of about CHUNK_CHARS: no answer is ever one huge string. */
class Pieces {
  readonly #ready: string[] = [];
  #parts: string[] = [];
  #size = 0;

  add(text: string): void {
    this.#parts.push(text);
    this.#size += text.length;
    if (this.#size >= CHUNK_CHARS) this.#cut();
  }

  get hasReady(): boolean {
    return this.#ready.length > 0;
  }

  /** The pieces completed so far; with `end`, the rest too. */
  take(end = false): string[] {
    if (end) this.#cut();
    return this.#ready.splice(0);
  }

  #cut(): void {
    if (this.#parts.length) this.#ready.push(this.#parts.join(''));
    this.#parts = [];
    this.#size = 0;
  }
}

/**
 * The lineage of one Task from recorded `source_tasks` (status, else metadata): its ancestors,
 * itself and its descendants. Referenced IDs without a record become `missing` nodes. Nothing is
 * executed: this only reads the index, whose child links make the cost that of the answer.
 * The records are taken when it is built; the answer is JSON text written from their cached
 * texts, in pieces (a fan-out of 50,000 is a 14 MB answer: built as one string it cost more in
 * joins, copies and garbage collection than everything else).
 */
export class Lineage {
  readonly selected: string;
  readonly relations: Relations;
  readonly #nodes: NodeTexts[] = [];
  /** Who is in the graph: the two closures' sets (both hold the selected Task), not a third one. */
  readonly #upstream: Set<string>;
  readonly #downstream: Set<string>;
  readonly #root: string;

  constructor(index: TaskIndex, selected: string) {
    this.selected = selected;
    const parentsOf = (id: string) => index.get(id)?.sources ?? [];
    const up = closure(selected, parentsOf);
    const ancestors = up.order;
    const directChildren = index.childrenOf(selected);
    const down = closure(selected, (id) => (id === selected ? directChildren : index.childrenOf(id)));
    this.#upstream = up.seen;
    this.#downstream = down.seen;
    const ids = [...ancestors.slice().reverse(), selected, ...down.order];
    const missing: string[] = [];
    const provisional: string[] = [];
    for (const id of ids) {
      const texts = textsOf(id, index.get(id));
      this.#nodes.push(texts);
      if (texts.missing) missing.push(id);
      if (texts.provisional) provisional.push(id);
    }
    // The root is the first ancestor without parents (the selected Task itself when it has none).
    this.#root = ids[this.#nodes.findIndex((n) => n.parents.length === 0)] ?? selected;
    this.relations = { direct_upstream: [...parentsOf(selected)], ancestors, direct_downstream: [...directChildren], missing, provisional };
  }

  /**
   * The answer's JSON text in pieces, made as they are asked for (the first goes out while the
   * rest is made): `head`, the graph, then `tail`. Separators are pieces of their own, so no text
   * is copied before the pieces are joined.
   */
  *pieces(head = '', tail = ''): Generator<string> {
    const out = new Pieces();
    out.add(head);
    out.add(`{"root_id":${JSON.stringify(this.#root)},"selected_id":${JSON.stringify(this.selected)},"nodes":[`);
    for (let i = 0; i < this.#nodes.length; i++) {
      if (i > 0) out.add(',');
      out.add(this.#nodes[i]!.node);
      if (out.hasReady) yield* out.take();
    }
    out.add('],"edges":[');
    let first = true;
    for (const { parents, edges } of this.#nodes) {
      for (let i = 0; i < parents.length; i++) {
        const parent = parents[i]!;
        if (!this.#upstream.has(parent) && !this.#downstream.has(parent)) continue;
        if (!first) out.add(',');
        out.add(edges[i]!);
        first = false;
      }
      if (out.hasReady) yield* out.take();
    }
    out.add(']}');
    out.add(tail);
    yield* out.take(true);
  }
}
