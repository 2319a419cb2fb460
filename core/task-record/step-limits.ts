/**
 * What a Task's status may carry in steps, whoever wrote it. The runner keeps its record within
 * these limits as it writes, and the service applies them again to every status it reads, so a
 * Task (or a hand-written status.json) cannot make its record, the index or a follower large:
 * 100,000 steps with 1,000-character names made a 111 MB status.json, and every follower and
 * listing carried it. Shared by the task runner (child) and the supervisor: no imports.
 */

/** Most steps a status keeps. */
export const MAX_STEPS = 1000;
/** The first steps are always kept; past MAX_STEPS the oldest of the others make room. */
export const FIRST_STEPS_KEPT = 100;
/** Longest step (and progress) name, in UTF-16 units; longer names are cut, never inside a pair. */
export const MAX_STEP_NAME = 200;

/** `name` cut to MAX_STEP_NAME units, without splitting a surrogate pair. */
export function cutStepName(name: string): string {
  if (name.length <= MAX_STEP_NAME) return name;
  const code = name.charCodeAt(MAX_STEP_NAME - 1);
  // A high surrogate as the last unit kept would lose its pair: cut before it.
  return name.slice(0, code >= 0xd800 && code <= 0xdbff ? MAX_STEP_NAME - 1 : MAX_STEP_NAME);
}

interface Step {
  name: string;
  finished_at: string | null;
}

/**
 * Which step goes when a status holds more than MAX_STEPS: the oldest finished one after the
 * first FIRST_STEPS_KEPT (a step still running stays while it runs), or the oldest of those when
 * all of them run (steps nested that deep).
 */
export function stepToDrop(steps: readonly Step[]): number {
  for (let i = FIRST_STEPS_KEPT; i < steps.length; i++) if (steps[i]!.finished_at !== null) return i;
  return FIRST_STEPS_KEPT;
}

/**
 * A status's steps within the limits, as a reader applies them to a record it did not write:
 * names cut, and past MAX_STEPS the first FIRST_STEPS_KEPT and the latest of the others. Returns
 * `steps` itself when it is within them already (the common case costs no copy).
 */
export function boundSteps<T extends Step>(steps: T[]): T[] {
  const over = steps.length > MAX_STEPS;
  if (!over && steps.every((s) => s.name.length <= MAX_STEP_NAME)) return steps;
  const kept = over ? [...steps.slice(0, FIRST_STEPS_KEPT), ...steps.slice(steps.length - (MAX_STEPS - FIRST_STEPS_KEPT))] : steps;
  return kept.map((s) => (s.name.length <= MAX_STEP_NAME ? s : { ...s, name: cutStepName(s.name) }));
}
