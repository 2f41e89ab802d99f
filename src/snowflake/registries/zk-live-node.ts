import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ZookeeperClient, ZookeeperOp } from '../../infra/zookeeper/zookeeper-client';
import { isConflict, isNodeExists } from '../../infra/zookeeper/zookeeper-errors';
import { Clock } from '../core/clock';
import { identityInUse } from './start-refusal';
import { decodeNodeData, encodeNodeData } from './zk-node-data';

export interface ZkLiveNodeOptions {
  zk: ZookeeperClient;
  /** `/snowflake/{name}/live/{ip}:{port}`. */
  path: string;
  ip: string;
  port: number;
  clock: Clock;
  /** How long an owned node must stay unchanged before it is taken over (a crashed holder). */
  livenessMs: number;
}

/** What a versioned write of the live node found. */
export type OwnedWrite = 'written' | 'already-free' | 'taken-over';

/**
 * One live instance per ip:port: the persistent node `/snowflake/{name}/live/{ip}:{port}` holds the
 * owner token of the instance that uses the identity and is changed at every report (versioned).
 * A start finding it owned waits for it to stay unchanged for the liveness window (a crashed
 * predecessor) and is refused as soon as it changes (a second live instance). Persistent, not
 * ephemeral: the project's ZooKeeper client creates persistent nodes only.
 */
export class ZkLiveNode {
  private readonly logger = new Logger(ZkLiveNode.name);
  private readonly owner = randomBytes(8).toString('hex');
  /** Version of the node after our last write; null while we do not hold it. */
  private version: number | null = null;

  constructor(private readonly options: ZkLiveNodeOptions) {}

  get path(): string {
    return this.options.path;
  }

  /** True while this instance holds the node (claimed and not released). */
  get held(): boolean {
    return this.version !== null;
  }

  /** Forgets the node without writing it (registered from the cache file: ZooKeeper unreachable). */
  forget(): void {
    this.version = null;
  }

  /**
   * Takes the node. Owned by someone else: waits until it has stayed unchanged for the liveness
   * window (a crashed predecessor), refuses as soon as it changes (a live instance with the same
   * identity).
   */
  async claim(now: number): Promise<void> {
    const { zk, clock, livenessMs, path } = this.options;
    const ipPort = `${this.options.ip}:${this.options.port}`;
    let first: string | null = null;
    const started = clock.now();
    const pollMs = Math.max(20, Math.min(250, Math.floor(livenessMs / 10)));
    for (;;) {
      const node = await zk.getData(path);
      if (node === null) {
        try {
          await zk.create(path, this.ownedData(now));
          this.version = 0;
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
        throw identityInUse(ipPort, Math.max(0, clock.now() - data.timestamp), `ZooKeeper ${path}`);
      }
      if (free || clock.now() - started >= livenessMs) {
        try {
          this.version = await zk.setData(path, this.ownedData(now), node.version);
          return;
        } catch (err) {
          if (isConflict(err)) {
            throw identityInUse(ipPort, 0, `ZooKeeper ${path}`);
          }
          throw err;
        }
      }
      if (first === null) {
        first = seen;
        this.logger.warn(`${path} is held by another instance; waiting up to ${livenessMs} ms for it to lapse`);
      }
      await clock.sleep(pollMs);
    }
  }

  /**
   * One multi: the live node (versioned: fails unless we still own it), reporting `now` or freed
   * (`now` null), together with `op`. A lost reply of an executed multi leaves our version behind:
   * on BAD_VERSION the node is read, and if it is still ours (our owner token) the write is redone
   * with its version. A node freed since (our release already ran, its reply lost) is
   * 'already-free' for a release; any other owner is 'taken-over'.
   */
  async writeWith(now: number | null, op: ZookeeperOp): Promise<OwnedWrite> {
    const { zk, path } = this.options;
    const data = now === null ? this.freeData() : this.ownedData(now);
    for (let attempt = 0; ; attempt++) {
      try {
        await zk.multi([{ op: 'setData', path, data, version: this.version as number }, op]);
        this.version = (this.version as number) + 1;
        if (now === null) {
          this.version = null;
        }
        return 'written';
      } catch (err) {
        if (!isConflict(err)) {
          throw err;
        }
        const node = attempt === 0 ? await zk.getData(path) : null;
        const owner = node === null ? null : decodeNodeData(node.data).owner;
        if (node !== null && owner === this.owner) {
          this.version = node.version;
          continue;
        }
        if (now === null && owner === '') {
          this.version = null;
          return 'already-free';
        }
        return 'taken-over';
      }
    }
  }

  /** Marks the node free (owner ''), if it is still ours. */
  async free(): Promise<void> {
    if (this.version === null) {
      return;
    }
    try {
      await this.options.zk.setData(this.options.path, this.freeData(), this.version);
    } catch (err) {
      if (!isConflict(err)) {
        throw err;
      }
    }
    this.version = null;
  }

  private freeData(): Buffer {
    return encodeNodeData({ ip: this.options.ip, port: String(this.options.port), timestamp: 0, owner: '' });
  }

  private ownedData(now: number): Buffer {
    return encodeNodeData({ ip: this.options.ip, port: String(this.options.port), timestamp: now, owner: this.owner });
  }
}
