import { PeerEndpoint, Registration, Report, WorkerIdRegistry } from '../core/worker-id-registry';
import { assertClockNotBehind, assertWorkerIdInRange, startRefused } from './start-refusal';
import { WorkerIdCacheFile } from './worker-id-cache-file';

export interface LocalRegistryOptions {
  ip: string;
  port: number;
  /** `{"ip:port": workerId}`. */
  workerIdMap: Record<string, number>;
  cacheFile: WorkerIdCacheFile;
  /** How far the recorded time may be ahead of the clock at start (waited out, not refused). */
  startAllowanceMs: number;
  /** The layout's largest worker id. */
  maxWorkerId: number;
}

/**
 * The fork's `local` mode: the worker id comes from configuration; the local cache file keeps it
 * with the time recorded ahead (an upper bound of the IDs issued); a start waits until its clock
 * is past it, or is refused when it is further behind than the allowance.
 */
export class LocalRegistry implements WorkerIdRegistry {
  private workerId: number | null = null;
  private maxTimestamp = 0;

  constructor(private readonly options: LocalRegistryOptions) {}

  get description(): string {
    return `local (cache file ${this.options.cacheFile.path})`;
  }

  async register(now: number): Promise<Registration> {
    const self = `${this.options.ip}:${this.options.port}`;
    const configured = this.options.workerIdMap[self];
    if (configured === undefined) {
      throw startRefused(`no worker id is configured for ${self} in SNOWFLAKE_WORKER_ID_MAP`);
    }
    const workerId = assertWorkerIdInRange(configured, 'SNOWFLAKE_WORKER_ID_MAP', this.options.maxWorkerId);
    const cached = await this.options.cacheFile.read();
    const recordedUntil = cached?.maxTimestamp ?? 0;
    assertClockNotBehind(now, recordedUntil, `the cache file ${this.options.cacheFile.path}`, this.options.startAllowanceMs);
    this.workerId = workerId;
    this.maxTimestamp = recordedUntil;
    return { workerId, recordedUntil };
  }

  async heartbeat(_now: number, until: number): Promise<Report> {
    const workerId = this.requireWorkerId();
    this.maxTimestamp = Math.max(this.maxTimestamp, until);
    await this.write(this.maxTimestamp);
    return { workerId, recordedUntil: this.maxTimestamp };
  }

  assertServing(): void {
    // The worker id is configured: nothing can take it away.
  }

  get heldWorkerId(): number | null {
    return this.workerId;
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
      await this.write(maxTimestamp);
    }
  }

  async close(): Promise<void> {}

  private async write(maxTimestamp: number): Promise<void> {
    await this.options.cacheFile.write({ workerId: this.requireWorkerId(), maxTimestamp });
  }

  private requireWorkerId(): number {
    if (this.workerId === null) {
      throw new Error('the local registry is not registered');
    }
    return this.workerId;
  }
}
