export { ShardleafModule } from './shardleaf.module';
export type { ShardleafModuleAsyncOptions } from './shardleaf.module';
export { ShardleafHealthIndicator } from './shardleaf.health';
export { SHARDLEAF_OPTIONS } from './shardleaf.tokens';
export type { ShardleafModuleOptions } from './shardleaf.tokens';
// The client itself, so one import serves: inject ShardleafClient, decode IDs, catch its errors.
export * from '@shardleaf/client';
