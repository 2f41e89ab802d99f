import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { ZookeeperClient } from '../../infra/zookeeper/zookeeper-client';
import { isConflict, isNodeExists, isUnavailable } from '../../infra/zookeeper/zookeeper-errors';
import { Clock } from '../core/clock';
import { PeerEndpoint, Registration, Report, WorkerIdRegistry } from '../core/worker-id-registry';
import { assertClockNotBehind, assertWorkerIdInRange, identityInUse, startRefused } from './start-refusal';
import { WorkerIdCacheFile } from './worker-id-cache-file';
import { decodeNodeData, encodeNodeData } from './zk-node-data';

export interface ZkNormalRegistryOptions {
  zk: ZookeeperClient;
  name: string;
  ip: string;
  port: number;
  cacheFile: WorkerIdCacheFile;
  /**
   * The live node of an instance that has not reported (changed it) for this long may be taken
   * over: at least the record-ahead window, so its holder has stopped issuing by then.
   */
  livenessMs: number;
  /** How far the recorded time may be ahead of the clock at start (waited out, not refused). */
  startAllowanceMs: number;
  clock: Clock;
  /** The layout's largest worker id: a node sequence above it is refused. */
  maxWorkerId: number;
}

const MAX_PEERS = 32;

/**
 * Leaf's own mode (SnowflakeZookeeperHolder): a persistent sequential node
 * `/snowflake/{name}/forever/{ip}:{port}-{seq}` per ip:port whose sequence number is the worker id.
 * An existing node is reused, and a start is refused when its timestamp is ahead of the clock.
 * The local cache file (worker id and max timestamp, Leaf issue #84) is used only when ZooKeeper
 * is unreachable, and only when the clock is not behind it; a refusal is never bypassed by it.
 *
 * Times are recorded ahead (an upper bound of the IDs issued) in the node and the cache file; a
 * start waits until its clock is past the larger of both. One live instance per ip:port: a
 * persistent lease node `/snowflake/{name}/live/{ip}:{port}` holds the owner token and is changed
 * at every report (versioned); a start finding it owned waits for it to stay unchanged for the
 * liveness window (a crashed predecessor) and is refused as soon as it changes (a second live
 * instance). The ZooKeeper client of this project creates persistent nodes only, hence no
 * ephemeral node.
 */
export class ZkNormalRegistry implements WorkerIdRegistry {
  private readonly logger = new Logger(ZkNormalRegistry.name);
  private workerId: number | null = null;
  private nodePath: string | null = null;
  private maxTimestamp = 0;
  private readonly owner = randomBytes(8).toString('hex');
  /** Version of our live node after our last write; null when registered from the cache file. */
  private liveVersion: number | null = null;
  private lost = false;
  /** Set once a ZooKeeper operation of the registration succeeded: no cache-file fallback after it. */
  private zookeeperReached = false;

  constructor(private readonly options: ZkNormalRegistryOptions) {}

  get description(): string {
    return `zk_normal at ${this.options.zk.address}`;
  }

  private get foreverPath(): string {
    return `/snowflake/${this.options.name}/forever`;
  }

  private get livePath(): string {
    return `/snowflake/${this.options.name}/live/${this.options.ip}:${this.options.port}`;
  }

  private get prefix(): string {
    return `${this.options.ip}:${this.options.port}-`;
  }

  async register(now: number): Promise<Registration> {
    let recordedUntil: number;
    try {
      recordedUntil = await this.registerInZookeeper(now);
    } catch (err) {
      if (!isUnavailable(err)) {
        throw err;
      }
      if (this.zookeeperReached) {
        // ZooKeeper answered, then went away mid-registration (e.g. while another live instance
        // held this identity): the cache file would bypass the identity check.
        throw startRefused(
          `ZooKeeper became unreachable during the registration of ${this.options.ip}:${this.options.port} (${(err as Error).message}); not falling back to the cache file`,
        );
      }
      recordedUntil = await this.registerFromCache(now, (err as Error).message);
    }
    this.maxTimestamp = recordedUntil;
    return { workerId: this.workerId as number, recordedUntil };
  }

  async heartbeat(now: number, until: number): Promise<Report> {
    if (this.workerId === null) {
      throw new Error('the zk_normal registry is not registered');
    }
    if (this.lost) {
      throw this.lostError();
    }
    const recorded = Math.max(this.maxTimestamp, until);
    if (this.liveVersion !== null) {
      // The time only together with proof of ownership (one multi, the live node versioned): both
      // are in ZooKeeper before the ceiling rises, and a holder that was taken over cannot
      // overwrite the new owner's time.
      await this.writeOwned(this.liveData(now), recorded);
    } else {
      // Started from the cache file (ZooKeeper unreachable then): the cache file is the record.
      await this.updateNodeQuietly(recorded);
      await this.options.cacheFile.write({ workerId: this.workerId, maxTimestamp: recorded });
      this.maxTimestamp = recorded;
    }
    return { workerId: this.workerId, recordedUntil: recorded };
  }

  get heldWorkerId(): number | null {
    return this.lost ? null : this.workerId;
  }

  assertServing(): void {
    if (this.lost) {
      throw this.lostError();
    }
  }

  async peers(since: number): Promise<PeerEndpoint[]> {
    const { zk } = this.options;
    const children = (await zk.getChildren(this.foreverPath)).filter((c) => !c.startsWith(this.prefix));
    const peers: PeerEndpoint[] = [];
    for (const child of children) {
      const node = await zk.getData(`${this.foreverPath}/${child}`);
      const data = node ? decodeNodeData(node.data) : null;
      if (data && data.timestamp >= since && /^[0-9]{1,5}$/.test(data.port)) {
        peers.push({ ip: data.ip, port: Number(data.port), reportedAt: data.timestamp });
      }
    }
    return peers.sort((a, b) => (b.reportedAt ?? 0) - (a.reportedAt ?? 0)).slice(0, MAX_PEERS);
  }

  /**
   * Records the last ID's time exactly (node and cache file) and frees the live node, in one multi
   * with the ownership check: a holder that was taken over writes nothing.
   */
  async release(maxTimestamp: number): Promise<void> {
    if (this.workerId === null || this.lost) {
      return;
    }
    if (this.liveVersion === null) {
      this.maxTimestamp = maxTimestamp;
      await this.options.cacheFile.write({ workerId: this.workerId, maxTimestamp });
      await this.updateNodeQuietly(maxTimestamp);
      return;
    }
    await this.writeOwned(this.freeLiveData(), maxTimestamp, true);
    this.liveVersion = null;
  }

  /**
   * One multi: our live node (versioned: fails unless we still own it) and the forever node's
   * time; then the cache file. A lost reply of an executed multi leaves our version behind: on
   * BAD_VERSION the live node is read, and if it is still ours (our owner token) the write is
   * redone with its version; otherwise the identity was taken over and this instance stops.
   */
  private async writeOwned(live: Buffer, timestamp: number, exact = false): Promise<void> {
    const { zk, cacheFile } = this.options;
    for (let attempt = 0; ; attempt++) {
      try {
        await zk.multi([
          { op: 'setData', path: this.livePath, data: live, version: this.liveVersion as number },
          { op: 'setData', path: this.nodePath as string, data: this.nodeData(timestamp), version: -1 },
        ]);
        this.liveVersion = (this.liveVersion as number) + 1;
        break;
      } catch (err) {
        if (!isConflict(err)) {
          throw err;
        }
        const node = attempt === 0 ? await zk.getData(this.livePath) : null;
        const owner = node === null ? null : decodeNodeData(node.data).owner;
        if (node !== null && owner === this.owner) {
          this.liveVersion = node.version;
          continue;
        }
        if (exact && owner === '') {
          // Our release already ran (its reply was lost), or a later owner released: write nothing.
          return;
        }
        this.lost = true;
        this.logger.error(`${this.livePath} was taken over by another instance; stopped issuing IDs`);
        throw this.lostError();
      }
    }
    this.maxTimestamp = exact ? timestamp : Math.max(this.maxTimestamp, timestamp);
    await cacheFile.write({ workerId: this.workerId as number, maxTimestamp: this.maxTimestamp });
  }

  /** Marks our live node free (owner ''), if it is still ours. */
  private async freeLive(): Promise<void> {
    if (this.liveVersion === null) {
      return;
    }
    try {
      await this.options.zk.setData(this.livePath, this.freeLiveData(), this.liveVersion);
    } catch (err) {
      if (!isConflict(err)) {
        throw err;
      }
    }
    this.liveVersion = null;
  }

  async close(): Promise<void> {
    await this.options.zk.close();
  }

  /** Resolves the time recorded for the worker id (node and, for the same id, the cache file). */
  private async registerInZookeeper(now: number): Promise<number> {
    const { zk, cacheFile, startAllowanceMs } = this.options;
    await zk.mkdirp(this.foreverPath);
    this.zookeeperReached = true;
    await zk.mkdirp(this.livePath.slice(0, this.livePath.lastIndexOf('/')));
    const started = this.options.clock.now();
    await this.claimLive(now);
    now += this.options.clock.now() - started;
    const existing = await this.findOwnNode();
    if (existing !== null) {
      const node = await zk.getData(existing);
      const workerId = assertWorkerIdInRange(sequenceOf(existing), `ZooKeeper node ${existing}`, this.options.maxWorkerId);
      const cached = await cacheFile.read().catch(() => null);
      const recorded = Math.max(
        node ? decodeNodeData(node.data).timestamp : 0,
        cached !== null && cached.workerId === workerId ? cached.maxTimestamp : 0,
      );
      try {
        assertClockNotBehind(now, recorded, `ZooKeeper node ${existing} / ${cacheFile.path}`, startAllowanceMs);
      } catch (err) {
        await this.freeLive(); // so that a corrected start need not wait
        throw err;
      }
      this.workerId = workerId;
      this.nodePath = existing;
      this.logger.log(`reusing ${existing}: worker id ${this.workerId}`);
      return recorded;
    }
    const created = await zk.create(`${this.foreverPath}/${this.prefix}`, this.nodeData(0), true);
    this.workerId = assertWorkerIdInRange(sequenceOf(created), `ZooKeeper node ${created}`, this.options.maxWorkerId);
    this.nodePath = created;
    this.logger.log(`created ${created}: worker id ${this.workerId}`);
    return 0;
  }

  /**
   * Takes the live node of this ip:port. Owned by someone else: waits until it has stayed
   * unchanged for the liveness window (a crashed predecessor), refuses as soon as it changes (a
   * live instance with the same identity).
   */
  private async claimLive(now: number): Promise<void> {
    const { zk, clock, livenessMs } = this.options;
    const ipPort = `${this.options.ip}:${this.options.port}`;
    let first: string | null = null;
    const started = clock.now();
    const pollMs = Math.max(20, Math.min(250, Math.floor(livenessMs / 10)));
    for (;;) {
      const node = await zk.getData(this.livePath);
      if (node === null) {
        try {
          await zk.create(this.livePath, this.liveData(now));
          this.liveVersion = 0;
          return;
        } catch (err) {
          if (isNodeExists(err)) {
            continue;
          }
          throw err;
        }
      }
      const data = decodeNodeData(node.data);
      const seen = `${node.czxid}/${node.version}`;
      const free = !data.owner || data.owner === this.owner;
      if (first !== null && seen !== first) {
        throw identityInUse(ipPort, Math.max(0, clock.now() - data.timestamp), `ZooKeeper ${this.livePath}`);
      }
      if (free || clock.now() - started >= livenessMs) {
        try {
          this.liveVersion = await zk.setData(this.livePath, this.liveData(now), node.version);
          return;
        } catch (err) {
          if (isConflict(err)) {
            throw identityInUse(ipPort, 0, `ZooKeeper ${this.livePath}`);
          }
          throw err;
        }
      }
      if (first === null) {
        first = seen;
        this.logger.warn(`${this.livePath} is held by another instance; waiting up to ${livenessMs} ms for it to lapse`);
      }
      await clock.sleep(pollMs);
    }
  }

  private async registerFromCache(now: number, why: string): Promise<number> {
    const { cacheFile } = this.options;
    const cached = await cacheFile.read();
    if (!cached) {
      throw startRefused(`ZooKeeper is unreachable (${why}) and there is no cache file ${cacheFile.path}`);
    }
    assertClockNotBehind(now, cached.maxTimestamp, `the cache file ${cacheFile.path}`, this.options.startAllowanceMs);
    this.workerId = assertWorkerIdInRange(cached.workerId, `the cache file ${cacheFile.path}`, this.options.maxWorkerId);
    this.liveVersion = null;
    this.logger.warn(`ZooKeeper is unreachable (${why}); using worker id ${this.workerId} from ${cacheFile.path}`);
    return cached.maxTimestamp;
  }

  /** Cache-file mode: best effort to keep the forever node's time current too. */
  private async updateNodeQuietly(timestamp: number): Promise<void> {
    try {
      if (this.nodePath === null) {
        const found = await this.findOwnNode();
        this.nodePath = found !== null && sequenceOf(found) === this.workerId ? found : null;
      }
      if (this.nodePath !== null) {
        await this.options.zk.setData(this.nodePath, this.nodeData(Math.max(timestamp, this.maxTimestamp)));
      }
    } catch (err) {
      this.logger.debug(`updating the forever node failed: ${(err as Error).message}`);
    }
  }

  private lostError(): IdGenError {
    return new IdGenError(
      ErrorKind.SnowflakeLeaseLost,
      `${this.livePath} (worker id ${this.workerId}) was taken over by another instance; not issuing IDs`,
    );
  }

  private freeLiveData(): Buffer {
    return encodeNodeData({ ip: this.options.ip, port: String(this.options.port), timestamp: 0, owner: '' });
  }

  private liveData(now: number): Buffer {
    return encodeNodeData({ ip: this.options.ip, port: String(this.options.port), timestamp: now, owner: this.owner });
  }

  /** This ip:port's forever node, or null. */
  private async findOwnNode(): Promise<string | null> {
    const children = await this.options.zk.getChildren(this.foreverPath);
    const mine = children.filter((c) => c.startsWith(this.prefix) && /^[0-9]+$/.test(c.slice(this.prefix.length)));
    if (mine.length === 0) {
      return null;
    }
    mine.sort();
    return `${this.foreverPath}/${mine[0]}`;
  }

  private nodeData(timestamp: number): Buffer {
    return encodeNodeData({ ip: this.options.ip, port: String(this.options.port), timestamp });
  }
}

function sequenceOf(path: string): number {
  return Number(path.slice(path.lastIndexOf('-') + 1));
}
