import { closestNames } from '../../core/closest-names.js';
import type { ValidationIssue } from '../../schemas/validator.js';

/** The parts of a JSON Schema node the messages look at (TypeBox schemas are plain JSON Schema). */
interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  patternProperties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  const?: unknown;
  enum?: unknown[];
}

/** The schema of the value at `loc` (object keys and array indexes), through unions; undefined when unknown. */
function schemaAt(root: SchemaNode, loc: readonly string[]): SchemaNode | undefined {
  let nodes: SchemaNode[] = [root];
  for (const key of loc) {
    const next: SchemaNode[] = [];
    for (const node of nodes.flatMap((n) => [n, ...(n.anyOf ?? [])])) {
      const child = node.properties?.[key] ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined) ?? Object.values(node.patternProperties ?? {})[0] ?? (/^\d+$/.test(key) ? node.items : undefined);
      if (child) next.push(child);
    }
    if (next.length === 0) return undefined;
    nodes = next;
  }
  return nodes[0];
}

/** The values an enum-like node allows (`enum`, or a union of constants such as TypeBox literals). */
function allowedValues(node: SchemaNode | undefined): unknown[] | undefined {
  if (!node) return undefined;
  if (node.enum) return node.enum;
  const branches = node.anyOf;
  if (branches?.length && branches.every((b) => 'const' in b)) return branches.map((b) => b.const);
  return undefined;
}

function valueAt(raw: unknown, loc: readonly string[]): unknown {
  let value = raw;
  for (const key of loc) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/**
 * One line per configuration problem, each saying how to fix it: an unknown key names the
 * closest known key at its place, a value outside an enum lists the allowed values (once, for
 * the several issues a union of constants raises), anything else keeps the validator's words.
 */
export function configIssueLines(issues: readonly ValidationIssue[], configSchema: object, raw: unknown): string[] {
  // Read as plain JSON Schema: a TypeBox schema is one, its static types aside.
  const schema = configSchema as SchemaNode;
  const lines: string[] = [];
  const enumsSaid = new Set<string>();
  for (const issue of issues) {
    const field = issue.loc.join('.') || '(top level)';
    if (issue.type === 'extra_forbidden') {
      const parent = issue.loc.slice(0, -1);
      const known = Object.keys(schemaAt(schema, parent)?.properties ?? {});
      const closest = closestNames(issue.loc.at(-1) ?? '', known, 1)[0];
      const hint = closest ? `; did you mean ${[...parent, closest].join('.')}?` : known.length ? `; known keys here: ${known.join(', ')}` : '';
      lines.push(`${field}: unknown field${hint}`);
      continue;
    }
    const allowed = allowedValues(schemaAt(schema, issue.loc));
    if (allowed) {
      if (!enumsSaid.has(field)) lines.push(`${field}: must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')} (got ${JSON.stringify(valueAt(raw, issue.loc))})`);
      enumsSaid.add(field);
      continue;
    }
    lines.push(`${field}: ${issue.msg}`);
  }
  return lines;
}
