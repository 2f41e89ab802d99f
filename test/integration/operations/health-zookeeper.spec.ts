import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomBytes } from 'node:crypto';
import { readinessUntil } from '../../support/readiness';
import { appSuite } from '../../support/app-suite';
import { ZookeeperServer } from '../snowflake/zookeeper-server';

describe('health: readiness in a ZooKeeper snowflake mode', () => {
  const suite = appSuite('healthzk');
  let zk: ZookeeperServer;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    zk = await ZookeeperServer.create();
    suite.defer(() => zk.destroy());
    app = await suite.start({
      SNOWFLAKE_MODE: 'zk_normal',
      ZK_ADDRESS: zk.address,
      SNOWFLAKE_NAME: `health-${randomBytes(3).toString('hex')}`,
      SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
    });
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
