/** Every ID a scenario received, with the instance that returned it; duplicates are recorded. */
export class IdLedger {
  private readonly seen = new Map<string, string>();
  readonly duplicates: Array<{ id: string; first: string; second: string }> = [];

  add(id: string, source: string): void {
    const first = this.seen.get(id);
    if (first !== undefined) {
      this.duplicates.push({ id, first, second: source });
      return;
    }
    this.seen.set(id, source);
  }

  has(id: string): boolean {
    return this.seen.has(id);
  }

  /** Distinct IDs received. */
  get size(): number {
    return this.seen.size;
  }

  /** IDs received, duplicates included. */
  get checked(): number {
    return this.seen.size + this.duplicates.length;
  }

  ids(): IterableIterator<string> {
    return this.seen.keys();
  }

  sourceOf(id: string): string | undefined {
    return this.seen.get(id);
  }
}
