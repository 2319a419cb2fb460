import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Test } from 'tap';

/** An official MCP SDK client connected to the service's `/mcp`, closed at test end. */
export async function connectMcp(t: Test, url: string, token: string | null): Promise<Client> {
  const client = new Client({ name: 'taskyard-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  await client.connect(transport);
  t.teardown(() => client.close());
  return client;
}
