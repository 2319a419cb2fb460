import t from 'tap';
import { decimate } from '../../core/series-decimation.js';

t.test('a series longer than two points a column keeps, per column, its lowest and highest point in order', async (t) => {
  const xs = Array.from({ length: 1000 }, (_, i) => i);
  const ys: Array<number | null> = xs.map((i) => Math.sin(i / 50));
  ys[503] = 40; // a spike
  ys[700] = null;
  const [dx, dy] = decimate(xs, ys, 100);
  t.ok(dx.length <= 200, `at most two points a column (${dx.length})`);
  t.ok(dy.includes(40), 'the spike survives');
  t.same([Math.min(...(dy.filter((v) => v !== null) as number[])), Math.max(...(dy.filter((v) => v !== null) as number[]))], [Math.min(...(ys.filter((v) => v !== null) as number[])), 40], 'the envelope is the series\' own');
  for (let i = 1; i < dx.length; i++) if (dx[i]! < dx[i - 1]!) t.fail(`x goes back at ${i}`);
  t.pass('x never goes back');
  const short = decimate(xs.slice(0, 150), ys.slice(0, 150), 100);
  t.equal(short[0].length, 150, 'a short series is drawn whole');
  const gaps = decimate(xs, xs.map(() => null), 10);
  t.same(gaps[1], Array(10).fill(null), 'a column of gaps stays a gap');
});
