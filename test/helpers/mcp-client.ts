import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator, JsonSchemaValidatorResult, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import type { Test } from 'tap';

/**
 * The SDK's own ajv validator, compiling each schema when a result first needs it, once per test
 * process. The client asks for a validator of every tool's `outputSchema` at `listTools`, and
 * compiling all of them cost ~0.5 s of CPU per connected client (the most of several MCP test
 * files); a tool's answers are still checked against its schema by the SDK's ajv whenever the
 * tool is called, as a client that validates does.
 */
class LazySharedValidator implements jsonSchemaValidator {
  readonly #ajv = new AjvJsonSchemaValidator();
  readonly #compiled = new Map<string, JsonSchemaValidator<unknown>>();

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const key = JSON.stringify(schema);
    return (input) => {
      let validate = this.#compiled.get(key);
      if (!validate) this.#compiled.set(key, (validate = this.#ajv.getValidator<unknown>(schema)));
      return validate(input) as JsonSchemaValidatorResult<T>;
    };
  }
}

const validator = new LazySharedValidator();

/** An official MCP SDK client connected to the service's `/mcp`, closed at test end. */
export async function connectMcp(t: Test, url: string, token: string | null): Promise<Client> {
  const client = new Client({ name: 'taskyard-test', version: '0.0.0' }, { jsonSchemaValidator: validator });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  await client.connect(transport);
  t.teardown(() => client.close());
  return client;
}
