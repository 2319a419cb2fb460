/**
 * The names closest to a mistyped one, for "did you mean" hints (unknown Jobs, config keys). Edit
 * distance, case-insensitive; a name that contains the other or starts alike counts as close too
 * (`status` for `stat`, `list_task_statuses` for `list_tasks`). Only names within a distance of
 * about a third of the typed name qualify, so a hint is never a random name.
 */
export function closestNames(typed: string, names: Iterable<string>, limit = 3): string[] {
  const wanted = typed.toLowerCase();
  const bound = Math.max(2, Math.ceil(wanted.length / 3));
  const scored: Array<[string, number]> = [];
  for (const name of names) {
    const lower = name.toLowerCase();
    if (lower === wanted) {
      scored.push([name, 0]);
      continue;
    }
    const contained = wanted.length >= 3 && (lower.includes(wanted) || wanted.includes(lower));
    const distance = editDistance(wanted, lower, bound + 1);
    if (distance <= bound) scored.push([name, distance]);
    else if (contained) scored.push([name, bound + 0.5]);
  }
  return scored
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([name]) => name);
}

/** Levenshtein distance with a transposition counted as one edit; stops early above `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) > cap) return cap;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      current[j] = best;
      rowMin = Math.min(rowMin, best);
    }
    if (rowMin > cap) return cap;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}
