import t from 'tap';
import { startConsole } from '../helpers/browser.js';

t.test('a long lineage chain is scaled to fit its card', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  // A chain of nine: laid out left to right, far wider than a card.
  let previous = '';
  for (let i = 0; i < 8; i++) {
    const res = (await svc.call('submit', { task: 'demo', x: i, y: 1, task_name: `step-${i}`, source_tasks: previous })).body;
    if (res.success) previous = res.answer.task_id;
  }
  const child = (await svc.call('submit', { task: 'demo', x: 1, y: 1, task_name: 'child', source_tasks: previous })).body;
  t.equal(child.success, true);
  if (!child.success) return;
  await svc.call('wait_task', { task_id: child.answer.task_id, run_id: child.answer.run_id });
  await page.goto(`${svc.url}/#/tasks/${encodeURIComponent(child.answer.task_id)}`);
  const graph = page.locator('section[aria-label="Lineage"] svg.lineage');
  await graph.locator('[data-task-id]').nth(8).waitFor();
  const drawn = await graph.evaluate((svg) => {
    const box = svg.getBoundingClientRect();
    const card = svg.closest('section')!.getBoundingClientRect();
    return { svg: box.width, card: card.width, natural: Number(svg.getAttribute('width')) };
  });
  t.ok(drawn.natural > drawn.card, `the graph is wider than its card by nature (${drawn.natural} px > ${drawn.card} px)`);
  t.ok(drawn.svg <= drawn.card, `and drawn within it (${drawn.svg} px)`);
  t.same(errors, []);
});
