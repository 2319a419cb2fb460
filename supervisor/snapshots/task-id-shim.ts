// TEMPORARY until the tasks branch lands: same rule as supervisor/tasks/task-ids.ts parseTaskId.
const TYPE = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const NAME = /^[A-Za-z0-9-]{1,32}$/;
export function parseTaskId(id: string): { type: string; registration: string; name: string } | null {
  const parts = id.split('#');
  if (parts.length !== 3) return null;
  const [type, registration, name] = parts as [string, string, string];
  if (!TYPE.test(type) || !TYPE.test(registration) || !NAME.test(name)) return null;
  return { type, registration, name };
}
