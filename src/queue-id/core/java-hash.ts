/** The gatePass hash, shared with @shardleaf/client through the @shardleaf/java-hash workspace package. */
export { QUEUE_SHARD_COUNT, javaIntAbs, javaIntRem, javaStringHashCode, shardOf } from '@shardleaf/java-hash';
