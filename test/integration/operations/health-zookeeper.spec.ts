import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomBytes } from 'node:crypto';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';
import { ZookeeperServer } from '../snowflake/zookeeper-server';

interface Readiness {
  status: string;
  info?: Record<string, { status: string }>;
  error?: Record<string, { status: string }>;
}

async function readinessUntil(app: NestFastifyApplication, status: number): Promise<Readiness> {
  let last = '';
  for (let attempt = 0; attempt < 100; attempt++) {
    const res = await request(app, 'GET', '/health/ready', { token: null });
    if (res.status === status) {
      return res.json<Readiness>();
    }
    last = `${res.status} ${res.body}`;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`readiness never answered ${status}; last: ${last}`);
}

describe('health: readiness in a ZooKeeper snowflake mode', () => {
  let env: TestEnv;
  let zk: ZookeeperServer;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('healthzk');
    zk = await ZookeeperServer.create();
    app = await startApp(
      env.config({
        SNOWFLAKE_MODE: 'zk_normal',
        ZK_ADDRESS: zk.address,
        SNOWFLAKE_NAME: `health-${randomBytes(3).toString('hex')}`,
        SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
      }),
    );
  });

  afterAll(async () => {
    await app?.close();
    await zk?.destroy();
    await env?.cleanup();
  });

  it('checks ZooKeeper too, and turns not ready (naming zookeeper) when it is away', async () => {
    const ready = await readinessUntil(app, 200);
    expect(ready.info?.zookeeper?.status).toBe('up');
    await zk.stop();
    const down = await readinessUntil(app, 503);
    expect(down.error?.zookeeper?.status).toBe('down');
    expect(down.error?.redis).toBeUndefined();
  });
});
