import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';
import { TaskDefinition } from './tasks.js';
import { check, describeIssues } from './validator.js';

const { name, task_type, description, input_schema, output_schema, resources, retries, cache } = TaskDefinition.properties;

/** A definition the describer found in a plugin: the catalog's fields, its plugin, and the module a runner loads. */
export const DescribedTask = Type.Object({ name, task_type, description, input_schema, output_schema, resources, retries, cache, plugin: Type.String(), module: Type.String() }, { additionalProperties: false });
export type DescribedTask = Static<typeof DescribedTask>;

/**
 * The describer child's answer (runner/describe.ts writes it after DESCRIBE_MARKER, the
 * definition catalog reads it): what it described, and each plugin's problem. The describer
 * imports only the type, so it loads no validator.
 */
export const DescribeAnswer = Type.Object({ definitions: Type.Array(DescribedTask), errors: Type.Array(Type.String()) }, { additionalProperties: false });
export type DescribeAnswer = Static<typeof DescribeAnswer>;

/**
 * The answer in `text`, checked (plugin code ran in that process, so its output is not trusted
 * blindly), or what is wrong with it.
 */
export function parseDescribeAnswer(text: string): DescribeAnswer | { readonly problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'the describer answered something that is not JSON' };
  }
  const checked = check(DescribeAnswer, value);
  return checked.ok ? checked.value : { problem: `the describer's answer is not valid: ${describeIssues(checked.issues)}` };
}
