import { PeerEndpoint, WorkerIdRegistry } from '../core/worker-id-registry';
import { assertClockNotBehind, assertWorkerIdInRange, startRefused } from './start-refusal';
import { WorkerIdCacheFile } from './worker-id-cache-file';

export interface LocalRegistryOptions {
  ip: string;
  port: number;
  /** `{"ip:port": workerId}`. */
  workerIdMap: Record<string, number>;
  cacheFile: WorkerIdCacheFile;
}

/**
 * The fork's `local` mode: the worker id comes from configuration; the local cache file keeps it
 * with the largest reported time, and a start whose clock is behind that time is refused.
 */
export class LocalRegistry implements WorkerIdRegistry {
  private workerId: number | null = null;
  private maxTimestamp = 0;

  constructor(private readonly options: LocalRegistryOptions) {}

  get description(): string {
    return `local (cache file ${this.options.cacheFile.path})`;
  }

  async register(now: number): Promise<number> {
    const self = `${this.options.ip}:${this.options.port}`;
    const configured = this.options.workerIdMap[self];
    if (configured === undefined) {
      throw startRefused(`no worker id is configured for ${self} in SNOWFLAKE_WORKER_ID_MAP`);
    }
    const workerId = assertWorkerIdInRange(configured, 'SNOWFLAKE_WORKER_ID_MAP');
    const cached = await this.options.cacheFile.read();
    if (cached) {
      assertClockNotBehind(now, cached.maxTimestamp, `the cache file ${this.options.cacheFile.path}`);
    }
    this.workerId = workerId;
    await this.record(now);
    return workerId;
  }

  async heartbeat(now: number): Promise<number> {
    const workerId = this.requireWorkerId();
    await this.record(now);
    return workerId;
  }

  assertServing(): void {
    // The worker id is configured: nothing can take it away.
  }

  async peers(): Promise<PeerEndpoint[]> {
    const self = `${this.options.ip}:${this.options.port}`;
    return Object.keys(this.options.workerIdMap)
      .filter((key) => key !== self)
      .map((key) => {
        const at = key.lastIndexOf(':');
        return { ip: key.slice(0, at), port: Number(key.slice(at + 1)) };
      });
  }

  async release(maxTimestamp: number): Promise<void> {
    if (this.workerId !== null) {
      await this.record(maxTimestamp);
    }
  }

  async close(): Promise<void> {}

  private async record(timestamp: number): Promise<void> {
    this.maxTimestamp = Math.max(this.maxTimestamp, timestamp);
    await this.options.cacheFile.write({ workerId: this.requireWorkerId(), maxTimestamp: this.maxTimestamp });
  }

  private requireWorkerId(): number {
    if (this.workerId === null) {
      throw new Error('the local registry is not registered');
    }
    return this.workerId;
  }
}
