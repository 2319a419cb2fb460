import { svg } from './dom.js';

const WIDTH = 120;
const HEIGHT = 24;

/**
 * A tiny inline line of `values` (oldest first), scaled to its own range; nulls (non-finite
 * values) are left out. Attributes only: the content security policy forbids inline styles.
 */
export function sparkline(values: readonly (number | null)[], label: string): SVGElement {
  const shown = values.filter((v): v is number => v !== null);
  const box = svg('svg', { class: 'sparkline', viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, role: 'img', 'aria-label': label, preserveAspectRatio: 'none' });
  if (shown.length < 2) return box;
  const min = Math.min(...shown);
  const span = Math.max(...shown) - min || 1;
  const x = (i: number) => ((i / (shown.length - 1)) * WIDTH).toFixed(1);
  const y = (v: number) => (HEIGHT - 2 - ((v - min) / span) * (HEIGHT - 4)).toFixed(1);
  box.append(svg('polyline', { points: shown.map((v, i) => `${x(i)},${y(v)}`).join(' ') }));
  return box;
}
