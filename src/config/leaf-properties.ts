import { readFileSync } from 'node:fs';
import { ConfigError } from './config.error';
import { Env } from './env-readers';
import { SNOWFLAKE_NAME_PATTERN, ZK_ADDRESS_PATTERN } from './snowflake-config';

/**
 * Migration from Meituan Leaf: LEAF_PROPERTIES=path/to/leaf.properties maps Leaf's settings onto
 * our variables. A variable set explicitly in the environment wins over the file.
 */

/** Java `.properties` lines: `key=value` or `key: value`, `#`/`!` comments, `\` continuations. */
export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) {
      continue;
    }
    while (line.endsWith('\\') && i + 1 < lines.length) {
      line = line.slice(0, -1) + lines[++i].trim();
    }
    const m = /^([^=:\s]+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (m) {
      out.set(m[1], m[2].trim());
    } else {
      out.set(line, '');
    }
  }
  return out;
}

const MODES: Record<string, string> = {
  zk: 'zk_normal',
  zookeeper: 'zk_normal',
  zk_normal: 'zk_normal',
  zk_recycle: 'zk_recycle',
  recycle: 'zk_recycle',
  local: 'local',
  mysql: 'mysql',
};

/** The environment variables a Leaf properties map stands for. */
export function leafPropertiesToEnv(props: Map<string, string>, file: string): Env {
  const fail = (property: string, why: string): never => {
    throw new ConfigError(`${property} (in LEAF_PROPERTIES=${file})`, why);
  };
  const get = (key: string) => {
    const v = props.get(key);
    return v === undefined || v === '' ? undefined : v;
  };
  const bool = (key: string): boolean | undefined => {
    const v = get(key)?.toLowerCase();
    if (v === undefined) {
      return undefined;
    }
    if (v !== 'true' && v !== 'false') {
      return fail(key, `must be true or false, got '${v}'`);
    }
    return v === 'true';
  };
  const env: Env = {};
  const name = get('leaf.name');
  if (name !== undefined) {
    if (!SNOWFLAKE_NAME_PATTERN.test(name)) {
      fail('leaf.name', `must be 1..128 letters, digits, '_', '.' or '-', got '${name}'`);
    }
    env.SNOWFLAKE_NAME = name;
  }
  const segment = bool('leaf.segment.enable');
  if (segment !== undefined) {
    env.SEGMENT_ENABLED = String(segment);
  }
  const jdbc = get('leaf.jdbc.url');
  if (jdbc !== undefined) {
    env.DATABASE_URL = jdbcToMysqlUrl(jdbc, get('leaf.jdbc.username'), get('leaf.jdbc.password'), fail);
  }
  const snowflake = bool('leaf.snowflake.enable');
  const mode = get('leaf.snowflake.mode');
  if (mode !== undefined && MODES[mode.toLowerCase()] === undefined) {
    fail('leaf.snowflake.mode', `must be one of ${Object.keys(MODES).join(', ')}, got '${mode}'`);
  }
  if (snowflake === false) {
    env.SNOWFLAKE_MODE = 'off';
  } else if (snowflake === true) {
    // Leaf's snowflake mode is ZooKeeper (zk_normal) unless a mode is named.
    env.SNOWFLAKE_MODE = mode === undefined ? 'zk_normal' : MODES[mode.toLowerCase()];
  } else if (mode !== undefined) {
    env.SNOWFLAKE_MODE = MODES[mode.toLowerCase()];
  }
  const zk = get('leaf.snowflake.zk.address');
  if (zk !== undefined) {
    if (!ZK_ADDRESS_PATTERN.test(zk)) {
      fail('leaf.snowflake.zk.address', `must be host:port[,host:port…][/chroot], got '${zk}'`);
    }
    env.ZK_ADDRESS = zk;
  }
  const port = get('leaf.snowflake.port');
  if (port !== undefined) {
    if (!/^[0-9]{1,5}$/.test(port) || Number(port) > 65535) {
      fail('leaf.snowflake.port', `must be a port 0..65535, got '${port}'`);
    }
    env.SNOWFLAKE_PORT = port;
  }
  return env;
}

/** `jdbc:mysql://host:port/db?params` + user + password → `mysql://user:pass@host:port/db`. */
function jdbcToMysqlUrl(
  jdbc: string,
  user: string | undefined,
  password: string | undefined,
  fail: (property: string, why: string) => never,
): string {
  const m = /^jdbc:(mysql|mariadb):\/\/([^/?#]+)\/([A-Za-z0-9_$]{1,64})(\?.*)?$/.exec(jdbc);
  if (!m) {
    return fail('leaf.jdbc.url', `must be like jdbc:mysql://host:3306/leaf, got '${jdbc}'`);
  }
  const hosts = m[2].split(',');
  if (hosts.length > 1) {
    fail('leaf.jdbc.url', `names several hosts (${m[2]}); give one (a proxy or VIP in front of the primary)`);
  }
  const url = new URL(`mysql://${hosts[0]}/${m[3]}`);
  url.username = encodeURIComponent(user ?? 'root');
  url.password = encodeURIComponent(password ?? '');
  return url.toString();
}

/** The environment with LEAF_PROPERTIES (if set) filled in under the variables set explicitly. */
export function withLeafProperties(env: Env): Env {
  const file = env.LEAF_PROPERTIES?.trim();
  if (!file) {
    return env;
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError('LEAF_PROPERTIES', `cannot read '${file}': ${(err as Error).message}`);
  }
  const merged: Env = { ...env };
  for (const [key, value] of Object.entries(leafPropertiesToEnv(parseProperties(text), file))) {
    if (merged[key] === undefined || merged[key]?.trim() === '') {
      merged[key] = value;
    }
  }
  return merged;
}
