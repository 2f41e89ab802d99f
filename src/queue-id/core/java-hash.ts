/**
 * The gatePass hash lives in the client package (packages/client/src/java-hash.ts) so that the
 * server and @shardleaf/client compute the shard with one implementation, not two copies. It is
 * imported by path: no build of the package is needed, and `nest build`, tsc, ts-jest and
 * ts-node all compile it from source (dist/packages/client/src/java-hash.js).
 */
export { QUEUE_SHARD_COUNT, javaIntAbs, javaIntRem, javaStringHashCode, shardOf } from '../../../packages/client/src/java-hash';
