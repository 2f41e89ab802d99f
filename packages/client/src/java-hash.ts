/** The gatePass hash the server uses too: one implementation, in the @shardleaf/java-hash workspace package. */
export { QUEUE_SHARD_COUNT, javaStringHashCode, shardOf } from '@shardleaf/java-hash';
