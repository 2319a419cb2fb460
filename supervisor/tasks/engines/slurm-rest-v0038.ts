import { isObject } from '../../../core/is-object.js';
import type { RestJob, SlurmRestApi } from './slurm-rest-api.js';
import { minutesOf, type SubmitJob, type TransportConfig } from './slurm-transport.js';

const BASE = '/slurm/v0.0.38';

/** slurmrestd's OpenAPI v0.0.38 (Slurm 22.05): `job_properties` with an environment object, times in minutes. */
export const V0038: SlurmRestApi = {
  version: 'v0.0.38',
  submitPath: `${BASE}/job/submit`,
  jobsPath: `${BASE}/jobs`,
  jobPath: (jobId) => `${BASE}/job/${encodeURIComponent(jobId)}`,
  submitBody(job: SubmitJob, config: TransportConfig) {
    const { cpus, gpus, memory_mb, time_limit_s } = job.resources;
    return {
      script: job.script,
      job: {
        name: job.jobName,
        current_working_directory: job.cwd,
        standard_output: job.logFile,
        standard_error: job.logFile,
        open_mode: 'append',
        // The whole environment, as an object: no value is cut at a comma (sbatch --export would).
        environment: job.env,
        ...(cpus !== undefined && { cpus_per_task: cpus }),
        ...(gpus ? { gres: `gpu:${gpus}` } : {}),
        ...(memory_mb !== undefined && { memory_per_node: memory_mb }),
        ...(time_limit_s !== undefined && { time_limit: minutesOf(time_limit_s) }),
        ...(config.partition !== undefined && { partition: config.partition }),
        ...(config.account !== undefined && { account: config.account }),
      },
    };
  },
  jobIdOf(body) {
    const id = body['job_id'];
    return typeof id === 'number' && Number.isInteger(id) && id > 0 ? String(id) : null;
  },
  jobsOf(body) {
    const jobs = Array.isArray(body['jobs']) ? body['jobs'] : [];
    const read: RestJob[] = [];
    for (const job of jobs.filter(isObject)) {
      const id = job['job_id'];
      const state = job['job_state'];
      if (typeof id !== 'number' || typeof state !== 'string' || state === '') continue;
      const text = (key: string) => (typeof job[key] === 'string' ? (job[key] as string) : '');
      read.push({ id: String(id), state, reason: text('state_reason'), name: text('name'), user: text('user_name') });
    }
    return read;
  },
};
