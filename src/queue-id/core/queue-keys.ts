/** The queue's Redis key names, behind a configurable prefix (KEY_PREFIX, `id.gen.` by default). */
export class QueueKeys {
  private readonly listPrefix: string;

  constructor(readonly prefix: string) {
    this.listPrefix = `${prefix}idList_`;
  }

  list(appId: number, shardId: number): string {
    return `${this.listPrefix}${appId}_${shardId}`;
  }

  lock(appId: number, shardId: number): string {
    return `${this.prefix}lock_${appId}_${shardId}`;
  }

  /**
   * "Pushed up to" marker of a list: the highest index ever pushed to it (or retired with its
   * app). In the list's Cluster slot: the list's own hash tag when it has one, else the list name.
   */
  pushMark(appId: number, shardId: number): string {
    const list = this.list(appId, shardId);
    return /\{[^}]+\}/.test(list) ? `${list}:pushed` : `{${list}}:pushed`;
  }

  /**
   * The shard's max_limit_id as a list index, stored for a while after it was lowered (next to the
   * list, in its Cluster slot): claims and pushes above it are refused on every instance at once.
   */
  limitMark(appId: number, shardId: number): string {
    const list = this.list(appId, shardId);
    return /\{[^}]+\}/.test(list) ? `${list}:limit` : `{${list}}:limit`;
  }

  /** Lock of the instance that cleans up lists of removed apps. */
  reloadLock(): string {
    return `${this.prefix}lock_reload`;
  }

  /** SCAN pattern matching every list key (glob characters of the prefix escaped). */
  listPattern(): string {
    return `${this.listPrefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
  }

  /** (appId, shardId) of a list key, or null for a key that is not one of ours. */
  parseList(key: string): { appId: number; shardId: number } | null {
    if (!key.startsWith(this.listPrefix)) {
      return null;
    }
    const m = /^([0-9]{1,3})_([0-9]{1,2})$/.exec(key.slice(this.listPrefix.length));
    return m ? { appId: Number(m[1]), shardId: Number(m[2]) } : null;
  }
}
