import type { Job } from '../core/job.js';
import { declareCapability } from './capability-contract.js';
import { controlJobs } from '../supervisor/tasks/jobs/control-jobs.js';
import { definitionJobs } from '../supervisor/tasks/jobs/definition-jobs.js';
import { followJobs } from '../supervisor/tasks/jobs/follow-jobs.js';
import { lineageJobs } from '../supervisor/tasks/jobs/lineage-jobs.js';
import { metricsJobs } from '../supervisor/tasks/jobs/metrics-jobs.js';
import { columnJobs } from '../supervisor/tasks/jobs/column-jobs.js';
import { historyJobs } from '../supervisor/tasks/jobs/history-jobs.js';
import { queryJobs } from '../supervisor/tasks/jobs/query-jobs.js';
import { submitJob } from '../supervisor/tasks/jobs/submit-job.js';
import { localCapacity } from '../supervisor/tasks/runs/capacity.js';
import { Tasks } from '../supervisor/tasks/tasks.js';

/**
 * Task Jobs: definitions, submit, waits and streams, queries, lineage, cancel and delete. Provides
 * the Tasks facade to the capabilities that need it (plugins, snapshots, metrics, machine).
 */
export const tasksCapability = declareCapability({
  name: 'tasks',
  provides: ['tasks'],
  build: async (env) => {
    const tasks = new Tasks(env.workspace, env.config, await localCapacity(env.config), env.runAs ?? null, typeof env.token === 'string');
    await tasks.start();
    const jobs = [...definitionJobs(tasks), submitJob(tasks), ...followJobs(tasks), ...queryJobs(tasks), ...metricsJobs(tasks), ...columnJobs(tasks), ...historyJobs(tasks), ...lineageJobs(tasks), ...controlJobs(tasks)];
    return {
      // Answers wait for the start-up check of the index file (a second or two after a start with a long history).
      jobs: jobs.map((job: Job): Job => ({ ...job, run: async (args, ctx) => tasks.ready.then(() => job.run(args, ctx)) })),
      close: async () => tasks.close(),
      provided: { tasks },
    };
  },
});
