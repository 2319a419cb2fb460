// Minimal Job client; the full CLI (schema-typed --field values, --stream, help) replaces this.
export async function jobCommand(argv: string[]): Promise<number> {
  const [name] = argv;
  if (!name) {
    console.error('usage: taskyard <job> [--field value ...] | taskyard serve ...');
    return 2;
  }
  const url = process.env['TASKYARD_URL'] ?? 'http://127.0.0.1:8420';
  const token = process.env['TASKYARD_TOKEN'];
  const response = await fetch(`${url}/jobs/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ arguments: {} }),
  });
  const body = (await response.json()) as { success?: boolean };
  console.log(JSON.stringify(body, null, 2));
  return body.success ? 0 : 1;
}
