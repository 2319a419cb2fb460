/**
 * Versions of the index: every write or removal of a Task record gets the next number, so a
 * reader holding a version learns which Tasks changed after it without looking at the others.
 * Versions are tagged with this run's epoch: after a restart old cursors are recognised as such.
 */
export class ChangeLog {
  readonly #epoch = Date.now().toString(36);
  #version = 0;
  /** Task IDs in the order of their changes, with the version of each (a Task may appear again later). */
  #ids: string[] = [];
  #versions: number[] = [];
  /** Each Task's last version. */
  readonly #last = new Map<string, number>();

  /** Records a change of `id`; its version. */
  record(id: string): number {
    const version = ++this.#version;
    this.#ids.push(id);
    this.#versions.push(version);
    this.#last.set(id, version);
    if (this.#ids.length > 2 * this.#last.size + 1024) this.#compact();
    return version;
  }

  /** The version of this Task's last change (-1: none since start). */
  lastChange(id: string): number {
    return this.#last.get(id) ?? -1;
  }

  get version(): number {
    return this.#version;
  }

  /** The current version as an opaque cursor. */
  cursor(): string {
    return `${this.#epoch}.${this.#version}`;
  }

  /** IDs changed after `cursor`, once each; null when the cursor is not one of this run's. */
  since(cursor: string): string[] | null {
    const dot = cursor.indexOf('.');
    const version = Number(cursor.slice(dot + 1));
    if (cursor.slice(0, dot) !== this.#epoch || !Number.isInteger(version) || version < 0 || version > this.#version) return null;
    let lo = 0;
    let hi = this.#versions.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#versions[mid]! <= version) lo = mid + 1;
      else hi = mid;
    }
    const ids = new Set<string>();
    for (let i = lo; i < this.#ids.length; i++) ids.add(this.#ids[i]!);
    return [...ids];
  }

  /** Keeps only each Task's last change (the log would otherwise grow with every write). */
  #compact(): void {
    const entries = [...this.#last].sort((a, b) => a[1] - b[1]);
    this.#ids = entries.map(([id]) => id);
    this.#versions = entries.map(([, v]) => v);
  }
}
