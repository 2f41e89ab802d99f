export { ShardleafClient } from './client';
export type { BufferView, ShardleafClientOptions } from './client';
export { ShardleafArgumentError, ShardleafClosedError, ShardleafError, ShardleafUnavailableError } from './errors';
export type { ShardleafErrorBody } from './errors';
export type { Clock } from './clock';
export type { FetchLike, ResponseLike, ServerView } from './transport';
export type { IdBufferView } from './id-buffer';
export { QUEUE_SHARD_COUNT, javaStringHashCode, shardOf } from './java-hash';
