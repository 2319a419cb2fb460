import type { Job } from '../core/job.js';
import type { Capability, CapabilityFactory, Environment } from './capability-contract.js';
import { controlJobs } from '../supervisor/tasks/jobs/control-jobs.js';
import { definitionJobs } from '../supervisor/tasks/jobs/definition-jobs.js';
import { followJobs } from '../supervisor/tasks/jobs/follow-jobs.js';
import { lineageJobs } from '../supervisor/tasks/jobs/lineage-jobs.js';
import { queryJobs } from '../supervisor/tasks/jobs/query-jobs.js';
import { submitJob } from '../supervisor/tasks/jobs/submit-job.js';
import { localCapacity } from '../supervisor/tasks/runs/capacity.js';
import { Tasks } from '../supervisor/tasks/tasks.js';

const runtimes = new WeakMap<Environment, Tasks>();

/**
 * The task runtime built for this service, for other capabilities (the plugin installer calls
 * `reloadDefinitions()` and `isRegistrationActive()`). The tasks capability must come first.
 */
export function taskRuntimeOf(env: Environment): Tasks {
  const rt = findTaskRuntime(env);
  if (!rt) throw new Error('the tasks capability is not built for this service (it must precede its users)');
  return rt;
}

/** The task runtime of this service, if it has the tasks capability (built so far). */
export function findTaskRuntime(env: Environment): Tasks | undefined {
  return runtimes.get(env);
}

/** Task Jobs: definitions, submit, waits and streams, queries, lineage, cancel and delete. */
export const tasksCapability: CapabilityFactory = async (env): Promise<Capability> => {
  const rt = new Tasks(env.workspace, env.config, await localCapacity(env.config), env.runAs ?? null);
  await rt.start();
  runtimes.set(env, rt);
  const jobs = [...definitionJobs(rt), submitJob(rt), ...followJobs(rt), ...queryJobs(rt), ...lineageJobs(rt), ...controlJobs(rt)];
  return {
    // Answers wait for the start-up check of the index file (a second or two after a start with a long history).
    jobs: jobs.map((job: Job): Job => ({ ...job, run: async (args, ctx) => rt.ready.then(() => job.run(args, ctx)) })),
    close: async () => rt.close(),
  };
};
