import type { Cluster, Redis } from 'ioredis';

export const REDIS = Symbol('REDIS');

/** What the REDIS token holds: a standalone/Sentinel client or a Cluster client. */
export type RedisClient = Redis | Cluster;
