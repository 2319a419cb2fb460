/** How a long series is drawn in a few pixels: used by the console's metric charts (web/src/ui/metric-chart.ts). */

/** Below this many points per pixel column the chart draws every point. */
const RAW_PER_PIXEL = 2;

/**
 * At most two points per pixel column: the lowest and the highest value of the points that fall
 * in it, in their order. The line keeps its envelope (a spike stays visible) while a redraw of a
 * series of a million points costs one pass over it and a canvas of a few thousand segments.
 */
export function decimate(xs: readonly number[], ys: ReadonlyArray<number | null>, columns: number): [number[], Array<number | null>] {
  const n = xs.length;
  if (n <= columns * RAW_PER_PIXEL) return [xs as number[], ys as Array<number | null>];
  const outX: number[] = [];
  const outY: Array<number | null> = [];
  for (let c = 0; c < columns; c++) {
    const from = Math.floor((c * n) / columns);
    const to = Math.floor(((c + 1) * n) / columns);
    let lo = -1;
    let hi = -1;
    for (let i = from; i < to; i++) {
      const y = ys[i];
      if (y === null || y === undefined) continue;
      if (lo === -1 || y < ys[lo]!) lo = i;
      if (hi === -1 || y > ys[hi]!) hi = i;
    }
    // A column of gaps only stays a gap.
    if (lo === -1) {
      outX.push(xs[from]!);
      outY.push(null);
      continue;
    }
    for (const i of lo <= hi ? [lo, hi] : [hi, lo]) {
      outX.push(xs[i]!);
      outY.push(ys[i]!);
      if (lo === hi) break;
    }
  }
  return [outX, outY];
}
