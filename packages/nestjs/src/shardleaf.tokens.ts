import type { ShardleafClientOptions } from '@shardleaf/client';

/** The options the module was configured with (forRoot, or what forRootAsync's factory resolved). */
export const SHARDLEAF_OPTIONS = Symbol('SHARDLEAF_OPTIONS');

export interface ShardleafModuleOptions extends ShardleafClientOptions {
  /**
   * The health indicator's timeout per server for `GET /health/ready`, ms (default 1000).
   */
  healthTimeoutMs?: number;
}
