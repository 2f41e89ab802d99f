import { ZookeeperClient, ZookeeperOp } from '../../infra/zookeeper/zookeeper-client';
import { isConflict, isNodeExists } from '../../infra/zookeeper/zookeeper-errors';
import { MAX_WORKER_ID } from '../core/snowflake-layout';
import { decodeNodeData, encodeNodeData } from './zk-node-data';

/** The paths of zk_recycle's two pools under `/snowflake/{name}/recycle`. */
export class RecyclePaths {
  constructor(private readonly name: string) {}

  get base(): string {
    return `/snowflake/${this.name}/recycle`;
  }
  get notuse(): string {
    return `${this.base}/notuse`;
  }
  get inuse(): string {
    return `${this.base}/inuse`;
  }
  /** Created together with the 1024 notuse nodes, in the same multi. */
  get initialised(): string {
    return `${this.base}/initialised`;
  }
  notuseNode(workerId: number): string {
    return `${this.notuse}/${nodeName(workerId)}`;
  }
  inuseNode(workerId: number): string {
    return `${this.inuse}/${nodeName(workerId)}`;
  }
}

export function nodeName(workerId: number): string {
  return `workId:${workerId}`;
}

/** The worker id of a pool node name `workId:{i}`, or null for any other name. */
export function workerIdOf(name: string): number | null {
  const match = /^workId:([0-9]{1,4})$/.exec(name);
  const id = match ? Number(match[1]) : NaN;
  return Number.isInteger(id) && id >= 0 && id <= MAX_WORKER_ID ? id : null;
}

/**
 * Creates the pools once: the marker node and notuse/workId:0..1023 (exactly 1024) in one multi,
 * so concurrent first starts cannot create them twice or half.
 */
export async function ensurePools(zk: ZookeeperClient, paths: RecyclePaths): Promise<void> {
  await zk.mkdirp(paths.notuse);
  await zk.mkdirp(paths.inuse);
  if ((await zk.getData(paths.initialised)) !== null) {
    return;
  }
  const empty = encodeNodeData({ ip: '', port: '', timestamp: 0 });
  const ops: ZookeeperOp[] = [{ op: 'create', path: paths.initialised, data: Buffer.alloc(0) }];
  for (let id = 0; id <= MAX_WORKER_ID; id++) {
    ops.push({ op: 'create', path: paths.notuseNode(id), data: empty });
  }
  try {
    await zk.multi(ops);
  } catch (err) {
    if (!isNodeExists(err)) {
      throw err;
    }
  }
}

export interface ReclaimOptions {
  /** An inuse id not reported for this long is returned to notuse. */
  leaseMs: number;
  now: number;
  /** This instance's own id (never reclaimed by itself), or null. */
  except: number | null;
  log: (message: string) => void;
}

/**
 * Returns inuse ids whose last report is older than the lease to notuse (one versioned multi
 * each: a holder that reported meanwhile keeps its id), stamped with last report + lease: the old
 * holder stopped issuing before that, and takers must be past it.
 */
export async function reclaimStale(zk: ZookeeperClient, paths: RecyclePaths, o: ReclaimOptions): Promise<void> {
  for (const child of await zk.getChildren(paths.inuse)) {
    const workerId = workerIdOf(child);
    if (workerId === null || workerId === o.except) {
      continue;
    }
    const node = await zk.getData(paths.inuseNode(workerId));
    const data = node ? decodeNodeData(node.data) : null;
    if (node === null || data === null || o.now - data.timestamp <= o.leaseMs) {
      continue;
    }
    try {
      await zk.multi([
        { op: 'remove', path: paths.inuseNode(workerId), version: node.version },
        {
          op: 'create',
          path: paths.notuseNode(workerId),
          data: encodeNodeData({ ip: data.ip, port: data.port, timestamp: data.timestamp + o.leaseMs }),
        },
      ]);
      o.log(`reclaimed worker id ${workerId} of ${data.ip}:${data.port} (no report for ${o.now - data.timestamp} ms)`);
    } catch (err) {
      if (!isConflict(err)) {
        throw err;
      }
    }
  }
}
