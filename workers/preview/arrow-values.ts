import { DataType, type Field, type Schema, type Table } from 'apache-arrow';
import type { ColumnSchema } from '../../schemas/workspace.js';

/** A readable, stable type name: dictionary-encoded columns are named by their value type. */
function typeName(type: DataType): string {
  return String(DataType.isDictionary(type) ? type.dictionary : type);
}

/** Column names, types and nullability of an Arrow schema. */
export function describeColumns(schema: Schema): ColumnSchema[] {
  return schema.fields.map((f: Field) => ({ name: f.name, type: typeName(f.type), nullable: f.nullable }));
}

const hasToJson = (v: object): v is { toJSON(): unknown } => typeof (v as { toJSON?: unknown }).toJSON === 'function';

/**
 * Turns an Arrow cell into JSON: BigInt becomes a number when exact (else a decimal string),
 * non-finite floats null, binary base64, nested rows and lists plain objects and arrays.
 */
export function toJsonValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'bigint':
      return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'string':
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      return String(value);
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (hasToJson(value)) return toJsonValue(value.toJSON());
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<unknown>, toJsonValue);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonValue(v)]));
}

/** Arrow hands dates and timestamps over as epoch milliseconds; show them as ISO 8601. */
function cellConverter(type: DataType): (value: unknown) => unknown {
  const inner = DataType.isDictionary(type) ? type.dictionary : type;
  if (DataType.isTimestamp(inner) || DataType.isDate(inner)) {
    return (v) => (typeof v === 'number' || typeof v === 'bigint' ? toJsonValue(new Date(Number(v))) : toJsonValue(v));
  }
  return toJsonValue;
}

/** The rows of an Arrow table as arrays of JSON values, in schema column order. */
export function tableRows(table: Table): unknown[][] {
  const columns = table.schema.fields.map((f, i) => ({ vector: table.getChildAt(i), convert: cellConverter(f.type) }));
  const rows: unknown[][] = [];
  for (let r = 0; r < table.numRows; r++) rows.push(columns.map(({ vector, convert }) => convert(vector?.get(r))));
  return rows;
}
