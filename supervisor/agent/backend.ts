import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, type LanguageModel } from 'ai';
import { RuntimeError } from '../../core/errors.js';
import type { AgentSection } from '../../schemas/config.js';
import { boundedFetch, lineTooLong } from './bounded-fetch.js';

/**
 * The model of the configured backend, spoken to through the `ai` SDK's providers. The key is
 * read from the environment at each turn (so a fixed variable needs no restart) and handed only
 * to the provider, which sends it as a request header.
 */
export function createModel(agent: AgentSection, env: NodeJS.ProcessEnv = process.env): LanguageModel {
  let apiKey = '';
  if (agent.api_key_env !== undefined) {
    const value = env[agent.api_key_env];
    if (!value) throw new RuntimeError(`the environment variable ${agent.api_key_env} (named by agent.api_key_env) is not set in the service's environment: set it to the model server's API key and restart the service`);
    apiKey = value;
  }
  const fetch = boundedFetch();
  if (agent.backend === 'anthropic') return createAnthropic({ baseURL: agent.base_url, apiKey, fetch })(agent.model);
  const provider = createOpenAICompatible({ name: 'openai-compatible', baseURL: agent.base_url, includeUsage: true, fetch, ...(apiKey ? { apiKey } : {}) });
  return provider.chatModel(agent.model);
}

/** Error codes that mean no connection was made. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

function causeCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/**
 * What went wrong with the model server, in words that say what to do. Never includes request
 * headers (the key travels there); the server's own error text is kept short.
 */
export function describeBackendError(err: unknown, agent: AgentSection): string {
  const where = `the model server at ${agent.base_url} (agent.backend ${agent.backend})`;
  const inner = err instanceof Error && err.name === 'AI_RetryError' ? ((err as { lastError?: unknown }).lastError ?? err) : err;
  const status = APICallError.isInstance(inner) ? inner.statusCode : undefined;
  if (APICallError.isInstance(inner) && status !== undefined && status >= 400) {
    if (status === 401 || status === 403) {
      const key = agent.api_key_env ? `check the key in the environment variable ${agent.api_key_env}` : 'set agent.api_key_env to the name of an environment variable holding a valid key';
      return `${where} refused the request (HTTP ${status}): ${key}`;
    }
    if (status === 404) return `${where} answered 404: check agent.base_url (it usually ends in /v1) and agent.model (${agent.model})`;
    return `${where} answered HTTP ${status}: ${(inner.responseBody ?? inner.message).slice(0, 300)}`;
  }
  const tooLong = lineTooLong(inner);
  if (tooLong) return `${where} ${tooLong.message.replace('the model server ', '')}: the turn was stopped there and the session kept everything said before; check the server, or ask for a shorter answer`;
  const code = causeCode(inner);
  // A connection error after a 2xx head is a stream that broke off, not a server out of reach.
  if (status === undefined && code !== undefined && UNREACHABLE.has(code)) return `cannot reach ${where} (${code}): check agent.base_url and that the server is running`;
  const message = inner instanceof Error ? inner.message : String(inner);
  return `${where} broke off or sent an unreadable answer (${message.slice(0, 300)}): check the server's log; the session kept everything said before`;
}
