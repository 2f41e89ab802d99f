import { InjectResult } from './test-env';

/** Every ID a test was answered, from single gets (text) and batches (`{"ids": [...]}`); repeats counted. */
export class SeenIds {
  private readonly seen = new Set<string>();
  duplicates = 0;

  record(res: InjectResult): void {
    const ids = res.contentType.includes('json') ? res.json<{ ids: string[] }>().ids : [res.body];
    for (const id of ids) {
      this.duplicates += this.seen.has(id) ? 1 : 0;
      this.seen.add(id);
    }
  }

  get size(): number {
    return this.seen.size;
  }
}
