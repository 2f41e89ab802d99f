import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DestinationStream } from 'pino';
import { AppCompiler, createApp } from './bootstrap';
import { StartAbandoned, StartSignals } from './common/start-signals';
import { AppConfig } from './config/app-config';
import { BackendStartError, checkBackendsAtStart } from './infra/backend-start-check';
import { backendAddress } from './infra/backend-words';
import { createRootLogger } from './logging/pino-logger';
import { SnowflakeStatus } from './snowflake/snowflake-status';

export interface StartOptions {
  /** How the root module becomes the application (bootstrap.ts's compileApp unless given). */
  compile?: AppCompiler;
  /** Where the JSON log lines go; stdout unless given. */
  logDestination?: DestinationStream;
}

/**
 * The service's start, as main.ts runs it: MySQL and Redis checked once (a backend that does not
 * answer refuses the start with one line naming it, its variable and its address), the app built,
 * listening, then one line saying what listens where, in which modes, against which backends.
 * Any other failure is one line too ("shardleaf did not start: … (LOG_LEVEL=debug shows the
 * stack)"); Nest's own copy with the stack is written at debug. Throws after logging; the caller exits.
 */
export async function startService(config: AppConfig, options: StartOptions = {}): Promise<NestFastifyApplication> {
  // One root logger (one stream to stdout) for these lines and for the app's.
  const rootLogger = createRootLogger(config.log.level, options.logDestination);
  const logger = rootLogger.child({ context: 'shardleaf' });
  let app: NestFastifyApplication | undefined;
  // Until the app's own shutdown hooks listen: a signal ends the start, the migrations excepted.
  const signals = StartSignals.install(config.shutdownTimeoutMs);
  try {
    await checkBackendsAtStart(config);
    app = await createApp(config, rootLogger, options.compile);
    signals.remove();
    if (signals.held !== null) {
      throw new StartAbandoned(signals.held);
    }
    await app.listen(config.http.port, config.http.host);
    logger.info(startedLine(config, app));
    return app;
  } catch (err) {
    signals.remove();
    if (err instanceof BackendStartError) {
      err.lines.forEach((line) => logger.error(line));
    } else {
      logger.error(`shardleaf did not start: ${err instanceof Error ? err.message : String(err)} (LOG_LEVEL=debug shows the stack)`);
    }
    await app?.close().catch(() => undefined);
    throw err;
  }
}

/**
 * `listening on http://0.0.0.0:8080: queue IDs (refill ahead), segment on, snowflake mysql (worker 3); MySQL …, Redis …; admin API on`
 * (`snowflake redis (js-safe layout, worker 3)` with SNOWFLAKE_LAYOUT=js-safe).
 */
export function startedLine(config: AppConfig, app: NestFastifyApplication): string {
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address !== null ? address.port : config.http.port;
  const queue = `queue IDs (refill ${config.queue.refillAhead ? 'ahead' : 'by sweep and on demand'}${
    config.queue.waitReplicas > 0 ? `, WAIT for ${config.queue.waitReplicas} replica(s)` : ''
  })`;
  const segment = `segment ${config.segment.enabled ? 'on' : 'off'}`;
  let snowflake = 'snowflake off';
  if (config.snowflake.mode !== 'off') {
    const workerId = app.get(SnowflakeStatus).workerId;
    const layout = config.snowflake.layout === 'leaf' ? '' : `${config.snowflake.layout} layout, `;
    snowflake = `snowflake ${config.snowflake.mode} (${layout}worker ${workerId ?? 'none yet'})`;
  }
  const redisKind = config.redis.topology.kind === 'standalone' ? 'Redis' : `Redis ${config.redis.topology.kind}`;
  const backends = `MySQL ${backendAddress('mysql', config)}, ${redisKind} ${backendAddress('redis', config)}${
    config.snowflake.mode.startsWith('zk_') ? `, ZooKeeper ${config.snowflake.zk.address}` : ''
  }`;
  const admin = `admin API ${config.admin.token === undefined ? 'off (ADMIN_TOKEN unset)' : 'on'}`;
  // An IPv6 address in a URL is bracketed: http://[::]:8080.
  const host = config.http.host.includes(':') ? `[${config.http.host}]` : config.http.host;
  return `listening on http://${host}:${port}: ${queue}, ${segment}, ${snowflake}; ${backends}; ${admin}`;
}
