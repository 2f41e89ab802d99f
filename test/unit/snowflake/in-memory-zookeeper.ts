import { Exception } from 'node-zookeeper-client';
import { ZNodeData, ZookeeperClient, ZookeeperOp } from '../../../src/infra/zookeeper/zookeeper-client';
import { ZookeeperUnavailableError } from '../../../src/infra/zookeeper/zookeeper-errors';

/** The library's own exception for `code` (Exception.create exists at run time, not in its types). */
function zkError(code: number, path: string): Error {
  return (Exception as unknown as { create(c: number, p: string): Error }).create(code, path);
}

/**
 * The part of ZooKeeper the registries use, in memory: persistent nodes with versions, sequential
 * names, and an all-or-nothing multi. `down` makes every call fail as when ZooKeeper is away.
 */
export class InMemoryZookeeper {
  readonly nodes = new Map<string, { data: Buffer; version: number; czxid?: number }>();
  down = false;
  /** The next sequential suffix (ZooKeeper's parent cversion). */
  sequence = 0;
  private zxid = 0;

  asClient(): ZookeeperClient {
    return this as unknown as ZookeeperClient;
  }

  get address(): string {
    return 'memory';
  }

  async connect(): Promise<void> {
    this.check();
  }

  async close(): Promise<void> {}

  async getChildren(path: string): Promise<string[]> {
    this.check();
    if (!this.nodes.has(path)) {
      throw zkError(Exception.NO_NODE, path);
    }
    const prefix = `${path}/`;
    return [...this.nodes.keys()].filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/')).map((p) => p.slice(prefix.length));
  }

  async getData(path: string): Promise<ZNodeData | null> {
    this.check();
    const node = this.nodes.get(path);
    return node ? { data: node.data, version: node.version, czxid: String(node.czxid ?? 0) } : null;
  }

  async create(path: string, data: Buffer, sequential = false): Promise<string> {
    this.check();
    const full = sequential ? `${path}${String(this.sequence++).padStart(10, '0')}` : path;
    this.apply([{ op: 'create', path: full, data }]);
    return full;
  }

  async setData(path: string, data: Buffer, version = -1): Promise<number> {
    this.check();
    this.apply([{ op: 'setData', path, data, version }]);
    return (this.nodes.get(path) as { version: number }).version;
  }

  async mkdirp(path: string): Promise<void> {
    this.check();
    const parts = path.split('/').filter(Boolean);
    for (let i = 1; i <= parts.length; i++) {
      const p = `/${parts.slice(0, i).join('/')}`;
      if (!this.nodes.has(p)) {
        this.nodes.set(p, { data: Buffer.alloc(0), version: 0 });
      }
    }
  }

  async multi(ops: ZookeeperOp[]): Promise<void> {
    this.check();
    this.apply(ops);
  }

  private apply(ops: ZookeeperOp[]): void {
    const next = new Map(this.nodes);
    for (const o of ops) {
      const node = next.get(o.path);
      switch (o.op) {
        case 'create': {
          const parent = o.path.slice(0, o.path.lastIndexOf('/')) || '/';
          if (node) {
            throw zkError(Exception.NODE_EXISTS, o.path);
          }
          if (parent !== '/' && !next.has(parent)) {
            throw zkError(Exception.NO_NODE, parent);
          }
          next.set(o.path, { data: o.data, version: 0, czxid: ++this.zxid });
          break;
        }
        case 'remove':
        case 'setData':
        case 'check':
          if (!node) {
            throw zkError(Exception.NO_NODE, o.path);
          }
          if (o.version !== -1 && o.version !== node.version) {
            throw zkError(Exception.BAD_VERSION, o.path);
          }
          if (o.op === 'remove') {
            next.delete(o.path);
          } else if (o.op === 'setData') {
            next.set(o.path, { ...node, data: o.data, version: node.version + 1 });
          }
          break;
      }
    }
    this.nodes.clear();
    next.forEach((v, k) => this.nodes.set(k, v));
  }

  private check(): void {
    if (this.down) {
      throw new ZookeeperUnavailableError('ZooKeeper is down (in memory)');
    }
  }
}
