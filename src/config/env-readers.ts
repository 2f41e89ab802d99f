import { ConfigError } from './config.error';

/** Typed readers of one environment variable each; a bad value throws a ConfigError naming it. */
export type Env = Record<string, string | undefined>;

function raw(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

export function readString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback;
}

export function readOptionalString(env: Env, name: string): string | undefined {
  return raw(env, name);
}

export function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const v = raw(env, name);
  if (v === undefined) {
    return fallback;
  }
  if (!/^-?[0-9]+$/.test(v)) {
    throw new ConfigError(name, `must be an integer ${min}..${max}, got '${v}'`);
  }
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `must be an integer ${min}..${max}, got ${v}`);
  }
  return n;
}

export function readNumber(env: Env, name: string, fallback: number, min: number, max: number): number {
  const v = raw(env, name);
  if (v === undefined) {
    return fallback;
  }
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new ConfigError(name, `must be a number ${min}..${max}, got '${v}'`);
  }
  return n;
}

export function readBool(env: Env, name: string, fallback: boolean): boolean {
  const v = raw(env, name)?.toLowerCase();
  if (v === undefined) {
    return fallback;
  }
  if (['1', 'true', 'yes', 'on'].includes(v)) {
    return true;
  }
  if (['0', 'false', 'no', 'off'].includes(v)) {
    return false;
  }
  throw new ConfigError(name, `must be true or false, got '${v}'`);
}

export function readEnum<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const v = raw(env, name);
  if (v === undefined) {
    return fallback;
  }
  if (!(allowed as readonly string[]).includes(v)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got '${v}'`);
  }
  return v as T;
}

/** A 6-field cron expression (seconds first), or `off` for null. */
export function readCron(env: Env, name: string, fallback: string, validate: (expr: string) => boolean): string | null {
  const v = raw(env, name) ?? fallback;
  if (v.toLowerCase() === 'off') {
    return null;
  }
  if (!validate(v)) {
    throw new ConfigError(name, `must be a cron expression (e.g. '0 */2 * * * *') or 'off', got '${v}'`);
  }
  return v;
}

export interface MysqlUrlParts {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export function parseMysqlUrl(name: string, value: string): MysqlUrlParts {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be a URL like mysql://user:pass@host:3306/db, got '${value}'`);
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') {
    throw new ConfigError(name, `must use the mysql:// scheme, got '${url.protocol}'`);
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_$]{1,64}$/.test(database)) {
    throw new ConfigError(name, `must name a database (letters, digits, _ or $), got '${database}'`);
  }
  if (!url.hostname) {
    throw new ConfigError(name, 'must name a host');
  }
  const port = url.port === '' ? 3306 : Number(url.port);
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port,
    user: decodeURIComponent(url.username) || 'root',
    password: decodeURIComponent(url.password),
    database,
  };
}

export function checkRedisUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be a URL like redis://127.0.0.1:6379/0, got '${value}'`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ConfigError(name, `must use redis:// or rediss://, got '${url.protocol}'`);
  }
  return value;
}
