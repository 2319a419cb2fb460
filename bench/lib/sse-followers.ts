import { Agent, request } from 'node:http';

export interface FollowerStats {
  /** Milliseconds from a log line's timestamp (written by the Task) to its arrival at a follower. */
  latencies: number[];
  results: number;
  errors: number;
}

const LINE_TIME = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) /gm;

/**
 * Opens `perTask` SSE `stream_task` followers for each Task over node:http (lighter than fetch
 * for a thousand streams) and records, for every log line, the delay between the timestamp the
 * Task's logger wrote into the line and the moment the follower parsed it.
 */
export async function followAll(port: number, token: string, taskIds: string[], perTask: number): Promise<FollowerStats> {
  const stats: FollowerStats = { latencies: [], results: 0, errors: 0 };
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const follow = (taskId: string) =>
    new Promise<void>((resolve) => {
      const body = JSON.stringify({ arguments: { task_id: taskId } });
      const req = request(
        { port, host: '127.0.0.1', method: 'POST', path: '/jobs/stream_task/events', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            let end: number;
            while ((end = buffer.indexOf('\n\n')) !== -1) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const data = block.slice(block.indexOf('data: ') + 6);
              const event = JSON.parse(data) as { kind: string; content?: string };
              if (event.kind === 'result') stats.results++;
              if (event.kind !== 'log' || !event.content) continue;
              const now = Date.now();
              for (const m of event.content.matchAll(LINE_TIME)) stats.latencies.push(now - Date.parse(m[1]!));
            }
          });
          res.on('end', () => resolve());
          res.on('error', () => {
            stats.errors++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        stats.errors++;
        resolve();
      });
      req.end(body);
    });
  await Promise.all(taskIds.flatMap((id) => Array.from({ length: perTask }, () => follow(id))));
  agent.destroy();
  return stats;
}
