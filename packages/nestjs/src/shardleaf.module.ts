import { DynamicModule, Inject, Injectable, InjectionToken, Module, ModuleMetadata, OnApplicationShutdown, OptionalFactoryDependency, Provider } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { ShardleafClient } from '@shardleaf/client';
import { ShardleafHealthIndicator } from './shardleaf.health';
import { SHARDLEAF_OPTIONS, ShardleafModuleOptions } from './shardleaf.tokens';

export interface ShardleafModuleAsyncOptions {
  /** Modules whose providers the factory injects (e.g. ConfigModule). */
  imports?: ModuleMetadata['imports'];
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  useFactory: (...args: any[]) => ShardleafModuleOptions | Promise<ShardleafModuleOptions>;
  /** Registers the client in every module without importing ShardleafModule there. */
  isGlobal?: boolean;
}

/** Closes the client when the application shuts down (its fetches aborted, no timer left behind). */
@Injectable()
class ShardleafClientCloser implements OnApplicationShutdown {
  constructor(@Inject(ShardleafClient) private readonly client: ShardleafClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}

const SHARED: Provider[] = [
  {
    provide: ShardleafClient,
    inject: [SHARDLEAF_OPTIONS],
    // Bad options throw a RangeError naming the option: the application does not start.
    useFactory: (options: ShardleafModuleOptions) => new ShardleafClient(options),
  },
  ShardleafClientCloser,
  HealthIndicatorService,
  ShardleafHealthIndicator,
];
const EXPORTS = [ShardleafClient, ShardleafHealthIndicator, SHARDLEAF_OPTIONS];

/**
 * The shardleaf client as a Nest provider: inject `ShardleafClient` (from `@shardleaf/client`) and,
 * for a `@nestjs/terminus` health check, `ShardleafHealthIndicator`.
 */
@Module({})
export class ShardleafModule {
  static forRoot(options: ShardleafModuleOptions & { isGlobal?: boolean }): DynamicModule {
    const { isGlobal, ...clientOptions } = options;
    return {
      module: ShardleafModule,
      global: isGlobal ?? false,
      providers: [{ provide: SHARDLEAF_OPTIONS, useValue: clientOptions }, ...SHARED],
      exports: EXPORTS,
    };
  }

  static forRootAsync(options: ShardleafModuleAsyncOptions): DynamicModule {
    return {
      module: ShardleafModule,
      global: options.isGlobal ?? false,
      imports: options.imports ?? [],
      providers: [{ provide: SHARDLEAF_OPTIONS, inject: options.inject ?? [], useFactory: options.useFactory }, ...SHARED],
      exports: EXPORTS,
    };
  }
}
