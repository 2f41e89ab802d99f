import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { ZNodeData, ZookeeperClient } from '../../infra/zookeeper/zookeeper-client';
import { isConflict, isUnavailable } from '../../infra/zookeeper/zookeeper-errors';
import { PeerEndpoint, Registration, Report, WorkerIdRegistry } from '../core/worker-id-registry';
import { startRefused } from './start-refusal';
import { decodeNodeData, encodeNodeData } from './zk-node-data';
import { RecyclePaths, ensurePools, reclaimStale, workerIdOf } from './zk-recycle-pools';

export interface ZkRecycleRegistryOptions {
  zk: ZookeeperClient;
  name: string;
  ip: string;
  port: number;
  /** An inuse id not reported for this long is reclaimed by any instance. */
  leaseMs: number;
  /** The holder stops issuing after leaseMs - leaseMarginMs without a successful report. */
  leaseMarginMs: number;
  /** The layout's largest worker id: the pools hold 0..1023, ids above it are never taken. */
  maxWorkerId: number;
}

interface Held {
  workerId: number;
  version: number;
  owner: string;
  /** Creation zxid of our inuse node: tells it apart from a node re-created by a later holder. */
  czxid: string;
}

/**
 * The fork's zk_recycle mode: worker ids move between `/snowflake/{name}/recycle/notuse/workId:{i}`
 * and `…/inuse/workId:{i}` in one ZooKeeper multi, so two instances never hold the same id. The
 * holder reports every interval (a versioned setData); any instance returns inuse ids older than
 * the lease to notuse; a holder that could not report for lease - margin stops issuing IDs and,
 * once ZooKeeper answers again, takes a fresh id. A returned id carries the largest time its last
 * holder may have used, and is taken only by a clock past it.
 */
export class ZkRecycleRegistry implements WorkerIdRegistry {
  private readonly logger = new Logger(ZkRecycleRegistry.name);
  private readonly paths: RecyclePaths;
  private held: Held | null = null;
  /** Time written by the last successful report; the lease counts from it. */
  private lastReported = 0;
  /** The notuse stamp of the id held when it was taken: its earlier holders' IDs are at or below it. */
  private floor = 0;
  private lost = false;
  /**
   * Set by a recovery: the fresh id is held but the caller still issues with the old one until
   * heartbeat() returns the fresh id, so serving resumes only then.
   */
  private switching = false;

  constructor(private readonly options: ZkRecycleRegistryOptions) {
    this.paths = new RecyclePaths(options.name);
  }

  get description(): string {
    return `zk_recycle at ${this.options.zk.address}`;
  }

  /** A taken id's notuse stamp is not ahead of the clock (`take` checks); it is the floor. */
  async register(now: number): Promise<Registration> {
    try {
      await ensurePools(this.options.zk, this.paths);
      await this.reclaimStale(now);
      const workerId = await this.take(now);
      return { workerId, recordedUntil: this.floor };
    } catch (err) {
      if (isUnavailable(err)) {
        throw startRefused(`zk_recycle needs ZooKeeper to start: ${(err as Error).message}`);
      }
      throw err;
    }
  }

  /**
   * The lease is this mode's record: a reclaimed id is stamped last report + lease, and the holder
   * stops at last report + lease - margin, which is the ceiling resolved here (`until` unused).
   */
  async heartbeat(now: number): Promise<Report> {
    if (this.held === null) {
      throw new Error('the zk_recycle registry is not registered');
    }
    if (!this.lost && this.leaseExpired(now)) {
      this.lost = true;
      this.logger.error(`worker id ${this.held.workerId}: no report for ${now - this.lastReported} ms; stopped issuing IDs`);
    }
    if (this.lost) {
      await this.recover(now);
    } else if (!(await this.report(now))) {
      this.lost = true;
      this.logger.error(`worker id ${this.held.workerId} was reclaimed by another instance; stopped issuing IDs`);
      await this.recover(now);
    }
    // The report (or recovery) above is what the lease rests on; reclaiming other instances' stale
    // ids is housekeeping. Its failure (ZooKeeper gone right after our report) must not withhold
    // the ceiling our successful report earned: the next heartbeat tries again.
    try {
      await this.reclaimStale(now);
    } catch (err) {
      this.logger.warn(`reclaiming stale worker ids failed (retried at the next report): ${(err as Error).message}`);
    }
    if (this.switching) {
      // Synchronously before the caller switches its generator to the id returned here.
      this.switching = false;
      this.lost = false;
    }
    return {
      workerId: this.held.workerId,
      recordedUntil: this.lastReported + this.options.leaseMs - this.options.leaseMarginMs + 1,
      floor: this.floor,
    };
  }

  get heldWorkerId(): number | null {
    return this.lost || this.held === null ? null : this.held.workerId;
  }

  assertServing(now: number): void {
    if (this.held === null) {
      throw new IdGenError(ErrorKind.SnowflakeNotReady, 'snowflake worker id not registered yet');
    }
    if (this.lost || this.leaseExpired(now)) {
      throw new IdGenError(
        ErrorKind.SnowflakeLeaseLost,
        `worker id ${this.held.workerId} could not be renewed in ZooKeeper for ${now - this.lastReported} ms; not issuing IDs until a worker id is held again`,
      );
    }
  }

  async peers(since: number): Promise<PeerEndpoint[]> {
    const { zk } = this.options;
    const peers: PeerEndpoint[] = [];
    for (const child of await zk.getChildren(this.paths.inuse)) {
      const id = workerIdOf(child);
      const node = id === null || id === this.held?.workerId ? null : await zk.getData(this.paths.inuseNode(id));
      const data = node ? decodeNodeData(node.data) : null;
      if (data && data.timestamp >= since && /^[0-9]{1,5}$/.test(data.port)) {
        peers.push({ ip: data.ip, port: Number(data.port), reportedAt: data.timestamp });
      }
    }
    return peers.sort((a, b) => (b.reportedAt ?? 0) - (a.reportedAt ?? 0)).slice(0, 32);
  }

  /** Graceful shutdown: the id goes back to notuse at once, stamped with our last time. */
  async release(maxTimestamp: number): Promise<void> {
    const held = this.held;
    if (held === null || this.lost) {
      return;
    }
    this.held = null;
    const node = await this.options.zk.getData(this.paths.inuseNode(held.workerId));
    if (this.isOurs(node, held)) {
      await this.giveBack({ ...held, version: node.version }, Math.max(maxTimestamp, this.lastReported) + 1);
    }
  }

  async close(): Promise<void> {
    await this.options.zk.close();
  }

  private leaseExpired(now: number): boolean {
    return now - this.lastReported > this.options.leaseMs - this.options.leaseMarginMs;
  }

  /** Moves one free id from notuse to inuse (one multi per attempt); refuses when none is free. */
  private async take(now: number): Promise<number> {
    const { zk } = this.options;
    const free = shuffle(
      (await zk.getChildren(this.paths.notuse))
        .map(workerIdOf)
        .filter((id): id is number => id !== null && id <= this.options.maxWorkerId),
    );
    let ahead = 0;
    for (const workerId of free) {
      const node = await zk.getData(this.paths.notuseNode(workerId));
      if (node === null) {
        continue;
      }
      const stamp = decodeNodeData(node.data).timestamp;
      if (stamp > now) {
        ahead++;
        continue;
      }
      const owner = randomBytes(8).toString('hex');
      try {
        await zk.multi([
          { op: 'remove', path: this.paths.notuseNode(workerId), version: node.version },
          { op: 'create', path: this.paths.inuseNode(workerId), data: this.nodeData(now, owner) },
        ]);
      } catch (err) {
        if (isConflict(err)) {
          continue;
        }
        throw err;
      }
      const created = await zk.getData(this.paths.inuseNode(workerId));
      if (created === null || decodeNodeData(created.data).owner !== owner) {
        continue; // reclaimed already: only possible with a clock far behind the others
      }
      this.held = { workerId, version: created.version, owner, czxid: created.czxid };
      this.floor = stamp;
      this.lastReported = now;
      this.lost = false;
      this.logger.log(`took worker id ${workerId} from ${this.paths.notuse}`);
      return workerId;
    }
    throw startRefused(
      `no free worker id in ${this.paths.notuse} (${free.length} listed, ${ahead} stamped ahead of this clock)`,
    );
  }

  /**
   * Writes our report if the inuse node is still the one we created (same creation zxid and
   * owner), with the version just read; false when it is no longer ours.
   */
  private async report(now: number): Promise<boolean> {
    const held = this.held as Held;
    const path = this.paths.inuseNode(held.workerId);
    const node = await this.options.zk.getData(path);
    if (!this.isOurs(node, held)) {
      return false;
    }
    try {
      held.version = await this.options.zk.setData(path, this.nodeData(now, held.owner), node.version);
    } catch (err) {
      if (isConflict(err)) {
        return false;
      }
      throw err;
    }
    this.lastReported = now;
    return true;
  }

  private isOurs(node: ZNodeData | null, held: Held): node is ZNodeData {
    return node !== null && node.czxid === held.czxid && decodeNodeData(node.data).owner === held.owner;
  }

  /** After a lost lease: give the old id back if it is still ours, then take a fresh one. */
  private async recover(now: number): Promise<void> {
    const old = this.held as Held;
    const node = await this.options.zk.getData(this.paths.inuseNode(old.workerId));
    if (this.isOurs(node, old)) {
      await this.giveBack({ ...old, version: node.version }, now);
    }
    const fresh = await this.take(now);
    // Not serving yet: until heartbeat() hands the fresh id to the caller, the generator still
    // has the old one, which another instance may hold by now (found by the chaos suite).
    this.lost = true;
    this.switching = true;
    this.logger.warn(`recovered from a lost lease: worker id ${old.workerId} → ${fresh}`);
  }

  /** Returns other instances' inuse ids whose last report is older than the lease to notuse. */
  private reclaimStale(now: number): Promise<void> {
    return reclaimStale(this.options.zk, this.paths, {
      leaseMs: this.options.leaseMs,
      now,
      except: this.held?.workerId ?? null,
      log: (message) => this.logger.warn(message),
    });
  }

  private async giveBack(held: Held, maxTimestamp: number): Promise<void> {
    try {
      await this.options.zk.multi([
        { op: 'remove', path: this.paths.inuseNode(held.workerId), version: held.version },
        {
          op: 'create',
          path: this.paths.notuseNode(held.workerId),
          data: encodeNodeData({ ip: this.options.ip, port: String(this.options.port), timestamp: maxTimestamp }),
        },
      ]);
      this.logger.log(`returned worker id ${held.workerId} to ${this.paths.notuse}`);
    } catch (err) {
      if (!isConflict(err)) {
        throw err;
      }
    }
  }

  private nodeData(timestamp: number, owner: string): Buffer {
    return encodeNodeData({ ip: this.options.ip, port: String(this.options.port), timestamp, owner });
  }
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}
