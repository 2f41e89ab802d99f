import { Logger } from '@nestjs/common';
import { ZookeeperClient } from '../../infra/zookeeper/zookeeper-client';
import { isUnavailable } from '../../infra/zookeeper/zookeeper-errors';
import { PeerEndpoint, WorkerIdRegistry } from '../core/worker-id-registry';
import { assertClockNotBehind, assertWorkerIdInRange, startRefused } from './start-refusal';
import { WorkerIdCacheFile } from './worker-id-cache-file';
import { decodeNodeData, encodeNodeData } from './zk-node-data';

export interface ZkNormalRegistryOptions {
  zk: ZookeeperClient;
  name: string;
  ip: string;
  port: number;
  cacheFile: WorkerIdCacheFile;
}

const MAX_PEERS = 32;

/**
 * Leaf's own mode (SnowflakeZookeeperHolder): a persistent sequential node
 * `/snowflake/{name}/forever/{ip}:{port}-{seq}` per ip:port whose sequence number is the worker id.
 * An existing node is reused, and a start is refused when its timestamp is ahead of the clock.
 * The local cache file (worker id and max timestamp, Leaf issue #84) is used only when ZooKeeper
 * is unreachable, and only when the clock is not behind it; a refusal is never bypassed by it.
 */
export class ZkNormalRegistry implements WorkerIdRegistry {
  private readonly logger = new Logger(ZkNormalRegistry.name);
  private workerId: number | null = null;
  private nodePath: string | null = null;
  private maxTimestamp = 0;

  constructor(private readonly options: ZkNormalRegistryOptions) {}

  get description(): string {
    return `zk_normal at ${this.options.zk.address}`;
  }

  private get foreverPath(): string {
    return `/snowflake/${this.options.name}/forever`;
  }

  private get prefix(): string {
    return `${this.options.ip}:${this.options.port}-`;
  }

  async register(now: number): Promise<number> {
    try {
      await this.registerInZookeeper(now);
    } catch (err) {
      if (!isUnavailable(err)) {
        throw err;
      }
      await this.registerFromCache(now, (err as Error).message);
    }
    await this.writeCache(now);
    return this.workerId as number;
  }

  async heartbeat(now: number): Promise<number> {
    if (this.workerId === null) {
      throw new Error('the zk_normal registry is not registered');
    }
    await this.writeCache(now);
    if (this.nodePath === null) {
      const found = await this.findOwnNode();
      this.nodePath = found !== null && sequenceOf(found) === this.workerId ? found : null;
    }
    if (this.nodePath !== null) {
      await this.options.zk.setData(this.nodePath, this.nodeData(this.maxTimestamp));
    }
    return this.workerId;
  }

  assertServing(): void {
    // A forever node is never taken away.
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

  async release(maxTimestamp: number): Promise<void> {
    if (this.workerId !== null) {
      await this.heartbeat(maxTimestamp);
    }
  }

  async close(): Promise<void> {
    await this.options.zk.close();
  }

  private async registerInZookeeper(now: number): Promise<void> {
    const { zk } = this.options;
    await zk.mkdirp(this.foreverPath);
    const existing = await this.findOwnNode();
    if (existing !== null) {
      const node = await zk.getData(existing);
      const recorded = node ? decodeNodeData(node.data).timestamp : 0;
      assertClockNotBehind(now, recorded, `ZooKeeper node ${existing}`);
      this.workerId = assertWorkerIdInRange(sequenceOf(existing), `ZooKeeper node ${existing}`);
      this.nodePath = existing;
      await zk.setData(existing, this.nodeData(now));
      this.logger.log(`reusing ${existing}: worker id ${this.workerId}`);
      return;
    }
    const created = await zk.create(`${this.foreverPath}/${this.prefix}`, this.nodeData(now), true);
    this.workerId = assertWorkerIdInRange(sequenceOf(created), `ZooKeeper node ${created}`);
    this.nodePath = created;
    this.logger.log(`created ${created}: worker id ${this.workerId}`);
  }

  private async registerFromCache(now: number, why: string): Promise<void> {
    const { cacheFile } = this.options;
    const cached = await cacheFile.read();
    if (!cached) {
      throw startRefused(`ZooKeeper is unreachable (${why}) and there is no cache file ${cacheFile.path}`);
    }
    assertClockNotBehind(now, cached.maxTimestamp, `the cache file ${cacheFile.path}`);
    this.workerId = assertWorkerIdInRange(cached.workerId, `the cache file ${cacheFile.path}`);
    this.maxTimestamp = cached.maxTimestamp;
    this.logger.warn(`ZooKeeper is unreachable (${why}); using worker id ${this.workerId} from ${cacheFile.path}`);
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
    this.maxTimestamp = Math.max(this.maxTimestamp, timestamp);
    return encodeNodeData({ ip: this.options.ip, port: String(this.options.port), timestamp: this.maxTimestamp });
  }

  private async writeCache(now: number): Promise<void> {
    this.maxTimestamp = Math.max(this.maxTimestamp, now);
    await this.options.cacheFile.write({ workerId: this.workerId as number, maxTimestamp: this.maxTimestamp });
  }
}

function sequenceOf(path: string): number {
  return Number(path.slice(path.lastIndexOf('-') + 1));
}
