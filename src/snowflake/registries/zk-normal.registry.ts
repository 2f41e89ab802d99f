import { Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { ZookeeperClient } from '../../infra/zookeeper/zookeeper-client';
import { isUnavailable } from '../../infra/zookeeper/zookeeper-errors';
import { Clock } from '../core/clock';
import { PeerEndpoint, Registration, Report, WorkerIdRegistry } from '../core/worker-id-registry';
import { assertClockNotBehind, assertWorkerIdInRange, startRefused } from './start-refusal';
import { WorkerIdCacheFile } from './worker-id-cache-file';
import { ZkLiveNode } from './zk-live-node';
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
 * The local cache file (worker id and max timestamp, as Leaf keeps one so that a restart survives
 * an unreachable ZooKeeper) is used only when ZooKeeper is unreachable, and only when the clock is
 * not behind it; a refusal is never bypassed by it.
 *
 * Times are recorded ahead (an upper bound of the IDs issued) in the node and the cache file; a
 * start waits until its clock is past the larger of both. One live instance per ip:port: the live
 * node (ZkLiveNode) is claimed at start and written with every report.
 */
export class ZkNormalRegistry implements WorkerIdRegistry {
  private readonly logger = new Logger(ZkNormalRegistry.name);
  private workerId: number | null = null;
  private nodePath: string | null = null;
  private maxTimestamp = 0;
  /** Not held when registered from the cache file (ZooKeeper unreachable then). */
  private readonly live: ZkLiveNode;
  private lost = false;
  /** Set once a ZooKeeper operation of the registration succeeded: no cache-file fallback after it. */
  private zookeeperReached = false;

  constructor(private readonly options: ZkNormalRegistryOptions) {
    const { zk, name, ip, port, clock, livenessMs } = options;
    this.live = new ZkLiveNode({ zk, path: `/snowflake/${name}/live/${ip}:${port}`, ip, port, clock, livenessMs });
  }

  get description(): string {
    return `zk_normal at ${this.options.zk.address}`;
  }

  private get foreverPath(): string {
    return `/snowflake/${this.options.name}/forever`;
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
    if (this.live.held) {
      // The time only together with proof of ownership (one multi, the live node versioned): both
      // are in ZooKeeper before the ceiling rises, and a holder that was taken over cannot
      // overwrite the new owner's time.
      await this.writeOwned(now, recorded);
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
    if (!this.live.held) {
      this.maxTimestamp = maxTimestamp;
      await this.options.cacheFile.write({ workerId: this.workerId, maxTimestamp });
      await this.updateNodeQuietly(maxTimestamp);
      return;
    }
    await this.writeOwned(null, maxTimestamp);
  }

  /**
   * The forever node's time together with our live node (reporting `now`, or freed when `now` is
   * null: a release, which records the time exactly), then the cache file. A live node taken over
   * by another instance stops this one.
   */
  private async writeOwned(now: number | null, timestamp: number): Promise<void> {
    const outcome = await this.live.writeWith(now, {
      op: 'setData',
      path: this.nodePath as string,
      data: this.nodeData(timestamp),
      version: -1,
    });
    if (outcome === 'already-free') {
      // Our release already ran (its reply was lost), or a later owner released: write nothing.
      return;
    }
    if (outcome === 'taken-over') {
      this.lost = true;
      this.logger.error(`${this.live.path} was taken over by another instance; stopped issuing IDs`);
      throw this.lostError();
    }
    this.maxTimestamp = now === null ? timestamp : Math.max(this.maxTimestamp, timestamp);
    await this.options.cacheFile.write({ workerId: this.workerId as number, maxTimestamp: this.maxTimestamp });
  }

  async close(): Promise<void> {
    await this.options.zk.close();
  }

  /** Resolves the time recorded for the worker id (node and, for the same id, the cache file). */
  private async registerInZookeeper(now: number): Promise<number> {
    const { zk, cacheFile, startAllowanceMs } = this.options;
    await zk.mkdirp(this.foreverPath);
    this.zookeeperReached = true;
    await zk.mkdirp(this.live.path.slice(0, this.live.path.lastIndexOf('/')));
    const started = this.options.clock.now();
    await this.live.claim(now);
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
        await this.live.free(); // so that a corrected start need not wait
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

  private async registerFromCache(now: number, why: string): Promise<number> {
    const { cacheFile } = this.options;
    const cached = await cacheFile.read();
    if (!cached) {
      throw startRefused(`ZooKeeper is unreachable (${why}) and there is no cache file ${cacheFile.path}`);
    }
    assertClockNotBehind(now, cached.maxTimestamp, `the cache file ${cacheFile.path}`, this.options.startAllowanceMs);
    this.workerId = assertWorkerIdInRange(cached.workerId, `the cache file ${cacheFile.path}`, this.options.maxWorkerId);
    this.live.forget();
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
      `${this.live.path} (worker id ${this.workerId}) was taken over by another instance; not issuing IDs`,
    );
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
