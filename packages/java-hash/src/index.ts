export { QUEUE_SHARD_COUNT, javaIntAbs, javaIntRem, javaStringHashCode, shardOf } from './java-hash';
