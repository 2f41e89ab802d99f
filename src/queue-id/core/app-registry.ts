import { maxIndexFor } from './queue-id-layout';

/** What one id_alloc row tells the request path. */
export interface ShardConfig {
  step: number;
  /** Largest index allowed by the app's max_limit_id on this shard. */
  maxIndex: bigint;
}

export interface AppConfigEntry {
  appId: number;
  appName: string;
  maxLimitId: bigint;
  shards: Map<number, ShardConfig>;
}

export interface AllocRowLike {
  appId: number;
  appName: string;
  shardId: number;
  step: number;
  maxLimitId: bigint;
}

/**
 * The in-memory app → shard map (each shard's step and limit), replaced whole on
 * every reload so readers never see a half-built map.
 */
export class AppRegistry {
  private apps = new Map<number, AppConfigEntry>();
  private loaded = false;

  get isLoaded(): boolean {
    return this.loaded;
  }

  replace(rows: readonly AllocRowLike[]): void {
    const next = new Map<number, AppConfigEntry>();
    for (const row of rows) {
      let app = next.get(row.appId);
      if (!app) {
        app = { appId: row.appId, appName: row.appName, maxLimitId: row.maxLimitId, shards: new Map() };
        next.set(row.appId, app);
      }
      app.shards.set(row.shardId, {
        step: row.step,
        maxIndex: maxIndexFor(row.appId, row.shardId, row.maxLimitId),
      });
    }
    this.apps = next;
    this.loaded = true;
  }

  get(appId: number): AppConfigEntry | undefined {
    return this.apps.get(appId);
  }

  has(appId: number, shardId: number): boolean {
    return this.apps.get(appId)?.shards.has(shardId) ?? false;
  }

  all(): AppConfigEntry[] {
    return [...this.apps.values()];
  }
}
