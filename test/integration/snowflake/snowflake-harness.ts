import { randomBytes } from 'node:crypto';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createClient } from 'node-zookeeper-client';
import { AppConfig } from '../../../src/config/app-config';
import { ZookeeperClient } from '../../../src/infra/zookeeper/zookeeper-client';
import { decodeId } from '../../../src/snowflake/core/snowflake-layout';
import { request, startApp } from '../../support/test-env';

export const SHARED_ZK = process.env.TEST_ZK_ADDRESS ?? '127.0.0.1:2181';

/**
 * Settings every snowflake suite adds to its TestEnv: other features' background jobs off, so a
 * suite exercises only snowflake's timers.
 */
export const QUIET_ENV: Record<string, string> = { SEGMENT_SYNC_CRON: 'off' };

/** A ZooKeeper namespace (SNOWFLAKE_NAME) of its own for each test. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** The error message a refused start rejects with (fails the test when the start succeeds). */
export async function startRefusal(config: AppConfig): Promise<string> {
  let app: NestFastifyApplication;
  try {
    app = await startApp(config);
  } catch (err) {
    return (err as Error).message;
  }
  await app.close();
  throw new Error('expected the start to be refused');
}

export async function getId(app: NestFastifyApplication): Promise<bigint> {
  const res = await request(app, 'GET', '/api/snowflake/get/test');
  if (res.status !== 200) {
    throw new Error(`GET /api/snowflake/get/test: ${res.status} ${res.body}`);
  }
  return BigInt(res.body);
}

export async function getIds(app: NestFastifyApplication, count: number): Promise<bigint[]> {
  const res = await request(app, 'GET', `/api/snowflake/get/test?count=${count}`);
  if (res.status !== 200) {
    throw new Error(`GET ?count=${count}: ${res.status} ${res.body}`);
  }
  return res.json<{ ids: string[] }>().ids.map((id) => BigInt(id));
}

export async function workerIdOf(app: NestFastifyApplication, twepoch: number): Promise<number> {
  return decodeId(await getId(app), twepoch).workerId;
}

export function testZk(address: string): ZookeeperClient {
  return new ZookeeperClient({ address, sessionTimeoutMs: 4000, connectTimeoutMs: 3000 });
}

/** Deletes a ZooKeeper subtree (a test's `/snowflake/{name}`); a missing path is fine. */
export async function removeTree(address: string, root: string): Promise<void> {
  const client = createClient(address, { sessionTimeout: 4000 });
  const call = <T>(run: (cb: (err: Error | null, value?: T) => void) => void): Promise<T | undefined> =>
    new Promise((resolve, reject) => run((err, value) => (err ? reject(err) : resolve(value))));
  const walk = async (path: string): Promise<void> => {
    const children = (await call<string[]>((cb) => client.getChildren(path, (e, c) => cb(e as Error | null, c)))) ?? [];
    for (const child of children) {
      await walk(`${path}/${child}`);
    }
    await call<void>((cb) => client.remove(path, -1, (e) => cb(e as Error | null)));
  };
  await new Promise<void>((resolve) => {
    client.once('connected', () => resolve());
    client.connect();
  });
  try {
    await walk(root);
  } catch (err) {
    if ((err as { getCode?: () => number }).getCode?.() !== -101) {
      throw err;
    }
  } finally {
    client.close();
  }
}
