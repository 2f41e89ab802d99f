import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** What the local cache file keeps: the worker id and the largest time reported with it. */
export interface CachedWorkerId {
  workerId: number;
  maxTimestamp: number;
}

/**
 * The local cache file of `local` and `zk_normal` (Leaf's workerID.properties, plus the max
 * timestamp issued, so that a start from the file alone can refuse a clock behind it). Written
 * atomically (temp file + rename).
 */
export class WorkerIdCacheFile {
  constructor(readonly path: string) {}

  /** The cached entry, or null when there is no file. A corrupt file is an error. */
  async read(): Promise<CachedWorkerId | null> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        return null;
      }
      throw err;
    }
    const parsed = JSON.parse(text) as Partial<CachedWorkerId>;
    if (!Number.isSafeInteger(parsed.workerId) || !Number.isSafeInteger(parsed.maxTimestamp)) {
      throw new Error(`corrupt worker-id cache file ${this.path}`);
    }
    return { workerId: parsed.workerId as number, maxTimestamp: parsed.maxTimestamp as number };
  }

  async write(entry: CachedWorkerId): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(entry)}\n`, 'utf8');
    await rename(tmp, this.path);
  }
}
