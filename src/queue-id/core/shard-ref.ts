/** One shard of one app: the unit the queue refills, locks and pops. */
export interface ShardRef {
  readonly appId: number;
  readonly shardId: number;
}

/** A ShardRef's text for log lines and single-flight keys: `app 3 shard 12`. */
export function describeShard(shard: ShardRef): string {
  return `app ${shard.appId} shard ${shard.shardId}`;
}
