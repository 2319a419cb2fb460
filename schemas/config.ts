import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';
import { TaskResources, TaskRetries } from './tasks.js';
import { DEFAULT_WORKSPACE } from './workspace-path.js';
import { WebhookEntry, WebhookHosts } from './webhooks.js';
import { MachineSection } from './machine-history.js';

const MiB = 1024 * 1024;

/** Config `jobs.<name>`: overrides of a Job's exposure flags. */
export const JobOverride = Type.Object(
  {
    enable_serve: Type.Optional(Type.Boolean()),
    requires_auth: Type.Optional(Type.Boolean()),
    enable_stream: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type JobOverride = Static<typeof JobOverride>;

/**
 * `service.tokens[]`: a token that may call only `jobs` (`["*"]`: every Job), known by `name` in
 * the audit log and the console. Its value is given inline (`token`) or read from `token_file`.
 */
export const ScopedTokenEntry = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$', description: 'Shown in the audit log and the console' }),
    token: Type.Optional(Type.String({ minLength: 16 })),
    token_file: Type.Optional(Type.String({ minLength: 1 })),
    jobs: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, uniqueItems: true }),
  },
  { additionalProperties: false },
);
export type ScopedTokenEntry = Static<typeof ScopedTokenEntry>;

/** `audit`: the append-only log of every Job call (JSON lines), rotated by size. */
export const AuditSection = Type.Object(
  {
    /** null: `<workspace>/.taskyard/audit.jsonl`; a relative path is taken from the workspace. */
    path: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { default: null }),
    /** Past this size the log is renamed to `<path>.1` (older ones shift up) and a new one begun. */
    max_bytes: Type.Integer({ minimum: 4096, default: 16 * MiB }),
    /** Rotated files kept besides the current one. */
    keep: Type.Integer({ minimum: 0, maximum: 100, default: 3 }),
  },
  { additionalProperties: false, default: {} },
);
export type AuditSection = Static<typeof AuditSection>;

export const ServiceSection = Type.Object(
  {
    host: Type.String({ minLength: 1, default: '127.0.0.1' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 8420 }),
    workspace: Type.String({ minLength: 1, default: DEFAULT_WORKSPACE }),
    token: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { default: null }),
    upload_limit_bytes: Type.Integer({ minimum: 1, default: 256 * MiB }),
    json_body_limit_bytes: Type.Integer({ minimum: 1024, default: 16 * MiB }),
    max_running_tasks: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { default: null }),
    /** Task runners started ahead of need, so a submit does not wait for a Node start (0: none). */
    runner_pool_size: Type.Integer({ minimum: 0, maximum: 64, default: 2 }),
    /** How long a cancelled Task gets after SIGTERM before SIGKILL, in milliseconds. */
    cancel_grace_ms: Type.Integer({ minimum: 0, maximum: 600_000, default: 3000 }),
    /** Extra browser origins allowed to call any route besides loopback ones and the service's own. */
    allowed_origins: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
    /** MCP calls with a progress token get a progress notification at least this often (ms). */
    mcp_progress_interval_ms: Type.Integer({ minimum: 50, maximum: 3_600_000, default: 10_000 }),
    /** Bearer tokens with a scope: each may call only its Jobs (see ScopedTokenEntry). */
    tokens: Type.Array(ScopedTokenEntry, { default: [] }),
    /** GPUs the local executor leases to Tasks; null: as many as machine_status detects. */
    gpus: Type.Union([Type.Integer({ minimum: 0, maximum: 64 }), Type.Null()], { default: null }),
    /** Who Task code and shell commands run as (a service run by root); null: the service's own user. */
    run_as: Type.Union([Type.Object({ user: Type.String({ minLength: 1 }) }, { additionalProperties: false }), Type.Null()], { default: null }),
  },
  { additionalProperties: false, default: {} },
);

export const TargetEntry = Type.Object(
  {
    address: Type.String({ minLength: 1 }),
    token: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { default: null }),
  },
  { additionalProperties: false },
);

// --- agent section (issue 13): kept in its own block ---

/** The read-only Jobs an agent may call when `agent.tools` is not given. */
export const DEFAULT_AGENT_TOOLS = Object.freeze([
  'version', 'machine_status', 'list_machines', 'list_entries', 'preview_file', 'list_task_runs',
  'list_installed_task_definitions', 'get_task_definition', 'list_task_ids', 'list_task_statuses',
  'status', 'read_task_log', 'read_task_metrics', 'get_task_graph', 'get_task_context',
]);

/** `agent`: the model server behind the Agent Jobs; absent, every Agent Job says what to set. */
export const AgentSection = Type.Object(
  {
    backend: Type.Union([Type.Literal('openai'), Type.Literal('anthropic')]),
    base_url: Type.String({ minLength: 1, pattern: '^https?://' }),
    model: Type.String({ minLength: 1 }),
    /** The name of the environment variable holding the key (never the key itself). */
    api_key_env: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' })),
    max_steps: Type.Integer({ minimum: 1, maximum: 256, default: 16 }),
    /** Attempts after a failed model call (connection lost, 429, 5xx), as the client library does them. */
    max_retries: Type.Integer({ minimum: 0, maximum: 10, default: 2 }),
    tools: Type.Array(Type.String({ minLength: 1 }), { default: [...DEFAULT_AGENT_TOOLS], uniqueItems: true }),
    system_prompt: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type AgentSection = Static<typeof AgentSection>;

// --- end of the agent section ---
// ---- Executors and Task resources (issue 14) ----

/**
 * Slurm only: talk to slurmrestd instead of running sbatch/squeue/scancel. Exactly one of `url`
 * (http://host:port) and `socket` (a unix socket path); the token (JWT, `scontrol token`) inline
 * or in a file only its owner may read; `user`: the Slurm user the requests act as (default: the
 * service's own). Checked beyond the schema in supervisor/common/slurm-rest-config.ts.
 */
export const SlurmRestSection = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1 })),
    socket: Type.Optional(Type.String({ minLength: 1 })),
    token: Type.Optional(Type.String({ minLength: 1 })),
    token_file: Type.Optional(Type.String({ minLength: 1 })),
    user: Type.Optional(Type.String({ minLength: 1, pattern: '^[A-Za-z0-9_.][A-Za-z0-9_.-]*$' })),
  },
  { additionalProperties: false },
);
export type SlurmRestSection = Static<typeof SlurmRestSection>;

/** Where Task runs execute: this machine (`local`), or one Slurm batch job per run (`slurm`). */
export const ExecutorSection = Type.Object(
  {
    kind: Type.Union([Type.Literal('local'), Type.Literal('slurm')], { default: 'local' }),
    /** Slurm only: `--partition`. */
    partition: Type.Optional(Type.String({ minLength: 1 })),
    /** Slurm only: `--account`. */
    account: Type.Optional(Type.String({ minLength: 1 })),
    /** Slurm only: extra sbatch arguments, added before the service's own. */
    sbatch_args: Type.Array(Type.String(), { default: [] }),
    /** Slurm only: seconds an `sbatch` may take before it is killed and its job cancelled by name (default 20). */
    sbatch_timeout_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
    /** Slurm only: submit, watch and cancel through slurmrestd (absent: the client commands). */
    rest: Type.Optional(SlurmRestSection),
  },
  { additionalProperties: false, default: {} },
);
export type ExecutorSection = Static<typeof ExecutorSection>;

/**
 * Per registration name: `tasks.<registration>.resources` overrides the definition's, field by
 * field; `retries` and `cache` replace the definition's.
 */
export const TasksSection = Type.Record(
  Type.String({ minLength: 1 }),
  Type.Object({ resources: Type.Optional(TaskResources), retries: Type.Optional(TaskRetries), cache: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
  { default: {} },
);

// ---- end of issue 14 ----

export const ConfigFile = Type.Object(
  {
    service: ServiceSection,
    targets: Type.Array(TargetEntry, { default: [] }),
    jobs: Type.Record(Type.String(), JobOverride, { default: {} }),
    proxy: Type.Record(
      Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' }),
      Type.Object({ url: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
      { default: {} },
    ),
    environment: Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Type.String(), { default: {} }),
    agent: Type.Optional(AgentSection),
    executor: ExecutorSection,
    tasks: TasksSection,
    audit: AuditSection,
    webhooks: Type.Array(WebhookEntry, { default: [] }),
    webhook_hosts: WebhookHosts,
    machine: MachineSection,
  },
  { additionalProperties: false },
);

export type ConfigFile = Static<typeof ConfigFile>;
export type ServiceSection = Static<typeof ServiceSection>;
export type TargetEntry = Static<typeof TargetEntry>;
