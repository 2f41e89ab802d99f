import { AppConfig } from './app-config';

/**
 * One injection token per configuration section, so that a class receives only the section it
 * uses (`@Inject(QUEUE_CONFIG) queue: QueueConfig`). APP_CONFIG (the whole blob) is kept for the
 * composition root only: start-up, the start check and the module factories.
 */
/** Each token's name and the AppConfig key it provides (SHUTDOWN_TIMEOUT_MS: a number, in ms). */
const SOURCES = {
  HTTP_CONFIG: 'http', LOG_CONFIG: 'log', DATABASE_CONFIG: 'database', REDIS_CONFIG: 'redis', ADMIN_CONFIG: 'admin',
  QUEUE_CONFIG: 'queue', SEGMENT_CONFIG: 'segment', SNOWFLAKE_CONFIG: 'snowflake', ID_HISTORY_CONFIG: 'idHistory',
  NUMBERS_CONFIG: 'numbers', METRICS_CONFIG: 'metrics', SHUTDOWN_TIMEOUT_MS: 'shutdownTimeoutMs',
} as const satisfies Record<string, keyof AppConfig>;
type TokenName = keyof typeof SOURCES;
const NAMES = Object.keys(SOURCES) as TokenName[];
const SECTIONS = Object.fromEntries(NAMES.map((name) => [name, Symbol(name)])) as Readonly<Record<TokenName, symbol>>;

export const {
  HTTP_CONFIG, LOG_CONFIG, DATABASE_CONFIG, REDIS_CONFIG, ADMIN_CONFIG, QUEUE_CONFIG, SEGMENT_CONFIG,
  SNOWFLAKE_CONFIG, ID_HISTORY_CONFIG, NUMBERS_CONFIG, METRICS_CONFIG, SHUTDOWN_TIMEOUT_MS,
} = SECTIONS;

export type HttpConfig = AppConfig['http'];
export type LogConfig = AppConfig['log'];
export type DatabaseConfig = AppConfig['database'];
export type AdminConfig = AppConfig['admin'];
export type QueueConfig = AppConfig['queue'];
export type SegmentConfig = AppConfig['segment'];

/** The providers of every section token, built from one validated AppConfig. */
export function sectionProviders(config: AppConfig): { provide: symbol; useValue: unknown }[] {
  return NAMES.map((name) => ({ provide: SECTIONS[name], useValue: config[SOURCES[name]] }));
}

export const SECTION_TOKENS: symbol[] = NAMES.map((name) => SECTIONS[name]);
