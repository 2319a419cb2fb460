import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpExchange } from './mcp-exchange.js';
import { buildServer, type McpToolsOptions } from './mcp-tools.js';

/** A server connected to its exchange, serving one POST at a time. */
export interface PooledServer {
  readonly server: Server;
  readonly exchange: McpExchange;
}

/** Idle servers kept for the next POSTs; beyond this, a finished one is left to the GC. */
const MAX_IDLE = 64;

/**
 * Reuses connected MCP servers across stateless POSTs. Building and closing a server per request
 * cost more than the tool call: the SDK's close() aborts every registered AbortController
 * (a DOMException each) and builds an McpError('Connection closed'), ~21 % of MCP CPU. A server
 * whose requests have all been answered holds no state worth closing, so it is put back instead.
 */
export class McpServerPool {
  readonly #idle: PooledServer[] = [];

  constructor(private readonly opts: McpToolsOptions) {}

  async acquire(): Promise<PooledServer> {
    const idle = this.#idle.pop();
    if (idle) return idle;
    const exchange = new McpExchange();
    const server = buildServer(this.opts, () => exchange.callerGone);
    await server.connect(exchange);
    return { server, exchange };
  }

  /** Puts back a server whose exchange has resolved (every request in its POST answered). */
  release(pooled: PooledServer): void {
    if (this.#idle.length < MAX_IDLE) this.#idle.push(pooled);
  }
}
