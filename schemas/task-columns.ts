import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';
import { TASK_COLUMN_KINDS, TASK_COLUMNS_LIMITS } from './task-column-keys.js';

export { TASK_COLUMN_KINDS, TASK_COLUMNS_LIMITS, columnKey, type TaskColumnKind } from './task-column-keys.js';

export const TaskColumn = Type.Object(
  {
    kind: Type.Union(TASK_COLUMN_KINDS.map((k) => Type.Literal(k))),
    name: Type.String({ minLength: 1, maxLength: 200, description: 'The input or output field, or the metric name' }),
  },
  { additionalProperties: false },
);
export type TaskColumn = Static<typeof TaskColumn>;

/** Input of `read_task_columns` (beyond the spec). */
export const ReadTaskColumnsInput = Type.Object(
  {
    task_ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: TASK_COLUMNS_LIMITS.tasks, uniqueItems: true, description: 'The Tasks to read' }),
    columns: Type.Array(TaskColumn, {
      minItems: 1,
      maxItems: TASK_COLUMNS_LIMITS.columns,
      description: 'What to read of each, e.g. [{"kind": "input", "name": "lr"}, {"kind": "metric", "name": "loss"}]',
    }),
  },
  { additionalProperties: false },
);
export type ReadTaskColumnsInput = Static<typeof ReadTaskColumnsInput>;

/** A cell: scalars as they are (text cut), an object or array as its JSON text (cut). */
export const TaskColumnValue = Type.Union([Type.Number(), Type.String(), Type.Boolean(), Type.Null()]);
export type TaskColumnValue = Static<typeof TaskColumnValue>;

/** Answer of `read_task_columns`. */
export const TaskColumnValues = Type.Object({
  values: Type.Record(Type.String(), Type.Record(Type.String(), TaskColumnValue), {
    description: 'Task ID → `<kind>:<name>` → value; a column the Task has no value for is left out',
  }),
  unknown: Type.Array(Type.String(), { description: 'Asked IDs with no Task status (deleted, or never there)' }),
});
export type TaskColumnValues = Static<typeof TaskColumnValues>;
