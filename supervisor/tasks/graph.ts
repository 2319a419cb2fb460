import { BytePieces } from './byte-pieces.js';
import { parseTaskId } from './records/task-ids.js';
import type { TaskIndex } from './records/task-index.js';
import type { TaskRecord } from './records/task-record.js';
import type { GraphEdge, GraphNode, Relations, TaskGraph } from '../../schemas/tasks.js';

export type { GraphEdge, GraphNode, Relations, TaskGraph };

/**
 * A record's node as JSON text, and the texts of its edges (one per parent, in parent order). A
 * record is replaced, never changed, so these stay true: a lineage of 50,000 nodes then costs
 * lookups and copies, not 100,000 serialisations and the garbage they leave. Each text starts
 * with the comma that separates it from the one before (one write per item; the first of a list
 * drops it), and `ascii` says whether they can be copied into the answer's bytes as they are.
 */
interface NodeTexts {
  readonly node: string;
  readonly parents: readonly string[];
  readonly edges: readonly string[];
  readonly ascii: boolean;
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
  const text = `,${JSON.stringify(node)}`;
  const target = JSON.stringify(id);
  const edges = node.parent_ids.map((parent) => `,{"source":${JSON.stringify(parent)},"target":${target}}`);
  return {
    node: text,
    parents: node.parent_ids,
    edges,
    ascii: isAscii(text) && edges.every(isAscii),
    missing: node.missing,
    provisional: node.provisional,
  };
}

const isAscii = (text: string) => Buffer.byteLength(text) === text.length;

/** An item's text as the list's first item (without its leading comma) or as a later one. */
const item = (text: string, first: boolean) => (first ? text.slice(1) : text);

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

/** The last lineage asked of each index, and the index version (cursor) it is known true at. */
const lastBuilt = new WeakMap<TaskIndex, { readonly cursor: string; readonly lineage: Lineage }>();
const MAX_CHECKED_CHANGES = 4096;

/** Relations of get_task_context, as read-only views (some are the index's own arrays). */
export type LineageRelations = { readonly [K in keyof Relations]: readonly string[] };

/**
 * The lineage of one Task from recorded `source_tasks` (status, else metadata): its ancestors,
 * itself and its descendants. Referenced IDs without a record become `missing` nodes. Nothing is
 * executed: this only reads the index, whose child links make the cost that of the answer.
 * The records are taken when it is built; the answer is JSON bytes written from their cached
 * texts, in pieces (a fan-out of 50,000 is a 14 MB answer: built as one string it cost more in
 * joins, copies and garbage collection than everything else).
 */
export class Lineage {
  readonly selected: string;
  readonly relations: LineageRelations;
  #relationsJson: string | undefined;
  /** Ancestors (farthest first), the selected Task, then its descendants breadth-first. */
  readonly #nodes: NodeTexts[] = [];
  /** Where the descendants start in #nodes. */
  readonly #firstDescendant: number;
  /** The ancestors' closure set (holds the selected Task). */
  readonly #upstream: Set<string>;
  readonly #descendants: string[];
  /** Every node's ID, made only if needed (a descendant with several parents, a reuse after changes). */
  #members: Set<string> | undefined;
  readonly #root: string;

  /**
   * The lineage of `selected` as the index holds it now. A lineage depends only on the records
   * of its nodes and on which records name them as sources, so the last one built is reused
   * while no change since touched either (calls in a row, graph then context, Tasks of other
   * lineages running meanwhile: a fan-out of 50,000 is then only written again). One per index:
   * its memory is a few references per node.
   */
  static of(index: TaskIndex, selected: string): Lineage {
    const last = lastBuilt.get(index);
    const cursor = index.changes.cursor();
    const lineage = last?.lineage.selected === selected && last.lineage.#unchangedSince(index, last.cursor) ? last.lineage : new Lineage(index, selected);
    lastBuilt.set(index, { cursor, lineage });
    return lineage;
  }

  /** Whether no record changed since `cursor` is a node of this graph or names one as a source. */
  #unchangedSince(index: TaskIndex, cursor: string): boolean {
    if (cursor === index.changes.cursor()) return true;
    const changed = index.changes.since(cursor);
    // Past a few thousand changes, building again costs about as much as checking them.
    if (!changed || changed.length > MAX_CHECKED_CHANGES) return false;
    const touches = (members: Set<string>) => (id: string) => members.has(id) || (index.get(id)?.sources ?? []).some((parent) => members.has(parent));
    // The ancestors' set (at hand) decides the common change of a lineage's own, a new child of
    // the selected Task, without making the set of every node only to build the lineage again.
    return !changed.some(touches(this.#upstream)) && !changed.some(touches(this.#memberSet()));
  }

  /** The relations as JSON text, made once (a lineage is reused, and 50,000 IDs are 1.5 MB of text). */
  get relationsJson(): string {
    return (this.#relationsJson ??= JSON.stringify(this.relations));
  }

  /** Every node's ID (made once, when first needed). */
  #memberSet(): Set<string> {
    return (this.#members ??= new Set([...this.#upstream, ...this.#descendants]));
  }

  private constructor(index: TaskIndex, selected: string) {
    this.selected = selected;
    const parentsOf = (id: string) => index.get(id)?.sources ?? [];
    const up = closure(selected, parentsOf);
    const missing: string[] = [];
    const provisional: string[] = [];
    const take = (id: string, texts: NodeTexts) => {
      this.#nodes.push(texts);
      if (texts.missing) missing.push(id);
      if (texts.provisional) provisional.push(id);
    };
    const upstreamIds = [...up.order].reverse();
    upstreamIds.push(selected);
    for (const id of upstreamIds) take(id, textsOf(id, index.get(id)));
    this.#firstDescendant = this.#nodes.length;
    this.#upstream = up.seen;
    this.#descendants = this.#walkDown(index, take);
    // The root is the first ancestor without parents (the selected Task itself when it has none).
    this.#root = upstreamIds.find((_, i) => this.#nodes[i]!.parents.length === 0) ?? selected;
    this.relations = { direct_upstream: parentsOf(selected), ancestors: up.order, direct_downstream: index.childrenOf(selected), missing, provisional };
  }

  /**
   * The descendants breadth-first (the queue is the answer). A child with one parent is reached
   * only from that parent, which is expanded once, so only children with several parents (and
   * the selected Task, in a cycle) need a seen-set: a fan-out of 50,000 skips 50,000 set entries.
   */
  #walkDown(index: TaskIndex, take: (id: string, texts: NodeTexts) => void): string[] {
    const order: string[] = [];
    const seen = new Set([this.selected]);
    let current: string | undefined = this.selected;
    for (let head = 0; current !== undefined; current = order[head++]) {
      for (const id of index.childrenOf(current)) {
        const texts = textsOf(id, index.get(id));
        if (texts.parents.length > 1 ? seen.has(id) : id === this.selected) continue;
        if (texts.parents.length > 1) seen.add(id);
        order.push(id);
        take(id, texts);
      }
    }
    return order;
  }

  /** Whether an edge from `parent` into descendant `node` is in the graph (its parent is). */
  #hasParent(node: NodeTexts, parent: string): boolean {
    // A single parent is the one the descendant was reached from.
    if (node.parents.length === 1) return true;
    return this.#memberSet().has(parent);
  }

  /**
   * The answer's JSON bytes in pieces, made as they are asked for (the first goes out while the
   * rest is made): `head`, the graph, then `tail`.
   */
  *pieces(head = '', tail = ''): Generator<Buffer> {
    const out = new BytePieces();
    const nodes = this.#nodes;
    out.add(head);
    out.add(`{"root_id":${JSON.stringify(this.#root)},"selected_id":${JSON.stringify(this.selected)},"nodes":[`);
    for (let i = 0; i < nodes.length; i++) {
      out.add(item(nodes[i]!.node, i === 0), nodes[i]!.ascii);
      if (out.hasReady) yield* out.take();
    }
    out.add('],"edges":[', true);
    let first = true;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      // Every parent of an ancestor or of the selected Task is an ancestor: only descendants' edges are checked.
      const checked = i >= this.#firstDescendant;
      for (let j = 0; j < node.parents.length; j++) {
        if (checked && !this.#hasParent(node, node.parents[j]!)) continue;
        out.add(item(node.edges[j]!, first), node.ascii);
        first = false;
      }
      if (out.hasReady) yield* out.take();
    }
    out.add(']}', true);
    out.add(tail);
    yield* out.take(true);
  }
}
