import type { AppCapabilityFactory } from './app-capability.js';
import { AgentService } from '../supervisor/agent/agent-service.js';
import { agentJobs } from '../supervisor/agent/agent-jobs.js';

/**
 * The Agent Jobs. Their tools are the registry's own Jobs, so the registry is handed over once
 * the service has built it (`attach`).
 */
export const agentCapability: AppCapabilityFactory = (env) => {
  const agent = new AgentService(env.workspace, env.config.agent, env.shutdown);
  return {
    jobs: agentJobs(agent),
    attach: (registry) => agent.attach(registry),
    close: () => agent.close(),
  };
};
