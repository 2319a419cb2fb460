import t from 'tap';
import { DEFAULT_CAPABILITIES } from '../../app/default-capabilities.js';
import { JOB_ANSWERS } from '../../schemas/job-answers.js';
import { startTestService } from '../helpers/service.js';
import { TEST_JOB_ANSWERS, testJobs } from '../helpers/test-jobs.js';

type Operation = { responses: Record<string, { content?: Record<string, { schema: { properties: { answer: { anyOf: unknown[] } } } }> }> };

/** A schema as plain JSON, the way the OpenAPI document writes it. */
const plain = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));

t.test('the typed client map names every served Job with the answer schema it declares, and nothing else', async (t) => {
  const svc = await startTestService(t, { capabilities: [...DEFAULT_CAPABILITIES, testJobs] });
  const doc = (await (await svc.fetch('/openapi.json')).json()) as { paths: Record<string, Record<string, Operation>> };
  const served = new Map<string, unknown>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    const name = /^\/jobs\/([a-z_]+)$/.exec(path)?.[1];
    const answer = methods['post']?.responses['200']?.content?.['application/json']?.schema.properties.answer;
    // Each Job answers its own schema or a business failure's error text (the second branch).
    if (name && answer) served.set(name, answer.anyOf[0]);
  }
  const mapped = new Map<string, unknown>(Object.entries({ ...JOB_ANSWERS, ...TEST_JOB_ANSWERS }));
  t.same([...mapped.keys()].sort(), [...served.keys()].sort(), 'the same Job names');
  for (const [name, schema] of served) t.same(plain(mapped.get(name)), schema, `${name}: the same answer schema`);
});
