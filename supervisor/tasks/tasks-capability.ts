import type { Job } from '../../core/job.js';
import type { Capability, CapabilityFactory, Environment } from '../capability-contract.js';
import { controlJobs } from './jobs/control-jobs.js';
import { definitionJobs } from './jobs/definition-jobs.js';
import { followJobs } from './jobs/follow-jobs.js';
import { lineageJobs } from './jobs/lineage-jobs.js';
import { queryJobs } from './jobs/query-jobs.js';
import { submitJob } from './jobs/submit-job.js';
import { localCapacity } from './runs/capacity.js';
import { TaskRuntime } from './task-runtime.js';

const runtimes = new WeakMap<Environment, TaskRuntime>();

/**
 * The task runtime built for this service, for other capabilities (the plugin installer calls
 * `reloadDefinitions()` and `isRegistrationActive()`). The tasks capability must come first.
 */
export function taskRuntimeOf(env: Environment): TaskRuntime {
  const rt = findTaskRuntime(env);
  if (!rt) throw new Error('the tasks capability is not built for this service (it must precede its users)');
  return rt;
}

/** The task runtime of this service, if it has the tasks capability (built so far). */
export function findTaskRuntime(env: Environment): TaskRuntime | undefined {
  return runtimes.get(env);
}

/** Task Jobs: definitions, submit, waits and streams, queries, lineage, cancel and delete. */
export const tasksCapability: CapabilityFactory = async (env): Promise<Capability> => {
  const rt = new TaskRuntime(env.workspace, env.config, await localCapacity(env.config), env.runAs ?? null);
  await rt.start();
  runtimes.set(env, rt);
  const jobs = [...definitionJobs(rt), submitJob(rt), ...followJobs(rt), ...queryJobs(rt), ...lineageJobs(rt), ...controlJobs(rt)];
  return {
    // Answers wait for the start-up check of the index file (a second or two after a start with a long history).
    jobs: jobs.map((job: Job): Job => ({ ...job, run: async (args, ctx) => rt.ready.then(() => job.run(args, ctx)) })),
    close: async () => rt.close(),
  };
};
