import { PeerEndpoint, WorkerIdRegistry } from '../core/worker-id-registry';
import { assertClockNotBehind, assertWorkerIdInRange } from './start-refusal';
import { WorkerIdAllocRepository } from './worker-id-alloc.repository';

export interface MysqlRegistryOptions {
  ip: string;
  port: number;
  repository: WorkerIdAllocRepository;
}

const MAX_PEERS = 32;

/**
 * The fork's `mysql` mode: one `leaf_workerid_alloc` row per ip:port, whose row id is the worker
 * id (fixed for that ip:port); the row's `max_timestamp` is reported every interval, and a start
 * whose clock is behind it is refused.
 */
export class MysqlRegistry implements WorkerIdRegistry {
  private workerId: number | null = null;

  constructor(private readonly options: MysqlRegistryOptions) {}

  get description(): string {
    return 'mysql (leaf_workerid_alloc)';
  }

  async register(now: number): Promise<number> {
    const { ip, port, repository } = this.options;
    const ipPort = `${ip}:${port}`;
    let row = await repository.findByIpPort(ipPort);
    if (!row) {
      const inserted = await repository.insert(ip, port, now);
      row = inserted === null ? await repository.findByIpPort(ipPort) : { id: inserted, ipPort, ip, port: String(port), maxTimestamp: now };
      if (!row) {
        throw new Error(`leaf_workerid_alloc row of ${ipPort} vanished while registering`);
      }
    }
    if (row.maxTimestamp !== null) {
      assertClockNotBehind(now, row.maxTimestamp, `leaf_workerid_alloc (ip_port ${ipPort})`);
    }
    this.workerId = assertWorkerIdInRange(row.id, `leaf_workerid_alloc row of ${ipPort} (worker id = row id)`);
    await repository.reportTimestamp(row.id, now);
    return this.workerId;
  }

  async heartbeat(now: number): Promise<number> {
    const workerId = this.requireWorkerId();
    await this.options.repository.reportTimestamp(workerId, now);
    return workerId;
  }

  assertServing(): void {
    // The worker id is fixed for this ip:port: nothing can take it away.
  }

  async peers(since: number): Promise<PeerEndpoint[]> {
    const rows = await this.options.repository.recentOthers(this.requireWorkerId(), since, MAX_PEERS);
    return rows.map((row) => ({ ip: row.ip, port: Number(row.port), reportedAt: row.maxTimestamp ?? undefined }));
  }

  async release(maxTimestamp: number): Promise<void> {
    if (this.workerId !== null) {
      await this.options.repository.reportTimestamp(this.workerId, maxTimestamp);
    }
  }

  async close(): Promise<void> {}

  private requireWorkerId(): number {
    if (this.workerId === null) {
      throw new Error('the mysql registry is not registered');
    }
    return this.workerId;
  }
}
