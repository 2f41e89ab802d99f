import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomBytes } from 'node:crypto';
import { readinessUntil } from '../../support/readiness';
import { TestEnv, createTestEnv, startApp } from '../../support/test-env';
import { ZookeeperServer } from '../snowflake/zookeeper-server';

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
