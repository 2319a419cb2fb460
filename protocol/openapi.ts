import type { TSchema } from '@sinclair/typebox';
import { Health, JobCatalog, JobResponse, responseSchemaOf } from '../schemas/job-response.js';
import { FileCopy } from '../schemas/workspace.js';
import { PACKAGE_VERSION } from '../core/build-info.js';
import { HttpError } from '../core/errors.js';
import type { JobRegistry } from '../core/registry.js';
import { requestCaller } from './token-scopes.js';
import type { IncomingRequest, ResponseSink } from './http.js';
import { JSON_HEADERS } from './reply.js';
import type { Route } from './route.js';

type Doc = Record<string, unknown>;

/** A TypeBox schema as plain JSON (its symbol keys dropped), fit for the document. */
const plain = (schema: TSchema | Doc): Doc => JSON.parse(JSON.stringify(schema)) as Doc;
const ref = (name: string): Doc => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Doc, description: string): Doc => ({ description, content: { 'application/json': { schema } } });
const detail = (description: string): Doc => json(ref('Detail'), description);
/** A 200 JobResponse whose answer has this schema (or a business failure's error text). */
const answered = (name: string, answer: TSchema, description: string): Doc => json(plain(responseSchemaOf(name, answer)), description);

const COMMON_ERRORS: Doc = { '401': detail('Missing or mismatched bearer token (`Invalid bearer token`)') };
const JOB_ERRORS: Doc = {
  ...COMMON_ERRORS,
  '403': detail("The Job is outside the scope of the caller's token (service.tokens)"),
  '404': json(ref('UnknownJob'), 'The Job is not public, unknown, or its /events route is disabled (`Unknown job`; `unknown_job` names the closest Jobs)'),
  '422': json(ref('ValidationDetail'), 'Invalid request envelope or arguments'),
};

/** The request envelope of one Job: its own input schema under `arguments`. */
function envelope(input: TSchema): Doc {
  return {
    type: 'object',
    properties: { arguments: { ...plain(input), default: {} }, target: { type: 'string', minLength: 1, description: 'Address of a configured target to forward to' } },
    additionalProperties: false,
  };
}

function jobPaths(registry: JobRegistry): Doc {
  const paths: Doc = {};
  for (const { job, flags, response } of registry.list()) {
    const body = { required: true, content: { 'application/json': { schema: envelope(job.input) } } };
    const typed = json(plain(response), 'The JobResponse, its answer typed for this Job (a business failure has success=false and error text)');
    paths[`/jobs/${job.name}`] = {
      post: { operationId: job.name, summary: job.name, description: job.description, tags: ['jobs'], requestBody: body, responses: { '200': typed, ...JOB_ERRORS } },
    };
    if (!flags.enable_stream) continue;
    paths[`/jobs/${job.name}/events`] = {
      post: {
        operationId: `${job.name}_events`,
        summary: `${job.name} (server-sent events)`,
        description: `${job.description}\n\nEvents as \`event: <kind>\` and \`data: <JSON>\` lines; the last one is \`result\` (a JobResponse with kind=result).`,
        tags: ['events'],
        requestBody: body,
        responses: { '200': { description: 'progress, log, artifact and agent_message events, then result', content: { 'text/event-stream': { schema: { type: 'string' } } } }, ...JOB_ERRORS },
      },
    };
  }
  return paths;
}

const pathQuery = (description: string): Doc => ({ name: 'path', in: 'query', required: true, schema: { type: 'string' }, description });
const header = (name: string, description: string, required = false): Doc => ({ name, in: 'header', required, schema: { type: 'string' }, description });
const bytes: Doc = { type: 'string', contentMediaType: 'application/octet-stream' };

const FIXED_PATHS: Doc = {
  '/health': { get: { operationId: 'health', tags: ['service'], responses: { '200': answered('health', Health, 'answer is {running: true}'), ...COMMON_ERRORS } } },
  '/jobs': {
    get: {
      operationId: 'list_jobs',
      tags: ['service'],
      parameters: [{ name: 'target', in: 'query', required: false, schema: { type: 'string' }, description: 'A configured target whose catalog to list' }],
      responses: { '200': answered('list_jobs', JobCatalog, 'answer is the JobCatalog'), '422': detail('Not a configured target'), ...COMMON_ERRORS },
    },
  },
  '/files': {
    get: {
      operationId: 'download_file',
      tags: ['files'],
      description: 'Streams a workspace file. Single byte ranges are honoured (206); several ranges get the whole file.',
      parameters: [pathQuery('Workspace-relative file path'), header('range', 'bytes=<start>-<end>'), header('if-none-match', 'An ETag from an earlier answer'), header('if-range', 'Apply Range only while this ETag is current')],
      responses: {
        '200': { description: 'The whole file', content: { 'application/octet-stream': { schema: bytes } } },
        '206': { description: 'The asked range', content: { 'application/octet-stream': { schema: bytes } } },
        '304': { description: 'Not modified' },
        '403': detail('The service-private directory, or not a regular file'),
        '404': detail('No such file'),
        '416': detail('Range not satisfiable'),
        '422': detail('Missing path, a directory, or a path escaping the workspace'),
        ...COMMON_ERRORS,
      },
    },
    post: {
      operationId: 'upload_file',
      tags: ['files'],
      parameters: [header('x-file-name', 'File name (percent-encoded)', true), header('x-file-directory', 'Staging subdirectory beginning with tmp')],
      requestBody: { required: true, content: { 'application/octet-stream': { schema: bytes } } },
      responses: { '200': answered('upload_file', FileCopy, 'answer is the FileCopy of the staged file'), '400': detail('Invalid Content-Length'), '409': detail('Staging conflict'), '413': detail('Over the upload limit'), '422': detail('Bad file name or directory'), ...COMMON_ERRORS },
    },
    delete: {
      operationId: 'delete_staged_file',
      tags: ['files'],
      parameters: [pathQuery('A staged path below tmp/')],
      responses: { '200': json(ref('JobResponse'), 'answer is {path}'), '422': detail('Not a staged path'), ...COMMON_ERRORS },
    },
  },
  '/metrics': { get: { operationId: 'metrics', tags: ['service'], responses: { '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } }, ...COMMON_ERRORS } } },
  '/openapi.json': { get: { operationId: 'openapi', tags: ['service'], responses: { '200': { description: 'This document', content: { 'application/json': { schema: { type: 'object' } } } }, ...COMMON_ERRORS } } },
};

/**
 * The OpenAPI 3.1 document of this service, built from the one Job registry: every public Job's
 * JSON and SSE routes with its input schema, plus the fixed routes and the bearer scheme.
 */
export function buildOpenApi(registry: JobRegistry, secured: boolean): Doc {
  return {
    openapi: '3.1.0',
    info: { title: 'taskyard', version: PACKAGE_VERSION, description: 'Job Execution Service: Jobs over HTTP JSON, SSE and MCP (`/mcp`, not described here).' },
    ...(secured ? { security: [{ bearer: [] }] } : {}),
    paths: { ...FIXED_PATHS, ...jobPaths(registry) },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The service token' } },
      schemas: {
        JobResponse: plain(JobResponse),
        Detail: { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'] },
        ValidationDetail: { type: 'object', properties: { detail: {} }, required: ['detail'] },
        UnknownJob: {
          type: 'object',
          properties: {
            detail: { type: 'string', const: 'Unknown job' },
            unknown_job: {
              type: 'object',
              description: 'For a person to fix the call: the name asked for, the closest public names, and why a Job that exists is not offered',
              properties: { name: { type: 'string' }, closest: { type: 'array', items: { type: 'string' } }, reason: { type: 'string' } },
              required: ['name', 'closest'],
            },
          },
          required: ['detail'],
        },
      },
    },
  };
}

/**
 * `GET /openapi.json`: the document fixed when the app was built, like the catalog; a scoped
 * token reads the document of its own Jobs (built at its first request, then kept).
 */
export function createOpenApiRoute(registry: JobRegistry, secured: boolean): Route {
  const texts = new WeakMap<JobRegistry, string>();
  const textOf = (scope: JobRegistry): string => {
    let text = texts.get(scope);
    if (text === undefined) texts.set(scope, (text = JSON.stringify(buildOpenApi(scope, secured))));
    return text;
  };
  return {
    prefix: '/openapi.json',
    async handle(req: IncomingRequest, res: ResponseSink): Promise<void> {
      if (req.path !== '/openapi.json') throw new HttpError(404, 'Not found');
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'Method not allowed; use GET');
      res.send(200, JSON_HEADERS, textOf(requestCaller(req)?.registry ?? registry));
    },
  };
}
