import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DEFAULT_TWEPOCH } from '../../../src/config/snowflake-config';
import { ZookeeperClient } from '../../../src/infra/zookeeper/zookeeper-client';
import { WorkerIdRegistry } from '../../../src/snowflake/core/worker-id-registry';
import { WORKER_ID_REGISTRY } from '../../../src/snowflake/snowflake.tokens';
import { pollUntil } from '../../support/poll';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';
import { ZookeeperServer } from './zookeeper-server';
import { QUIET_ENV, getIds, testZk, uniqueName, workerIdOf } from './snowflake-harness';

const LEASE_MS = 2000;

describe('snowflake zk_recycle mode (notuse/inuse pools)', () => {
  let env: TestEnv;
  let server: ZookeeperServer;
  let zk: ZookeeperClient;
  let name: string;
  const apps: NestFastifyApplication[] = [];

  const config = (port: number) =>
    env.config({
      ...QUIET_ENV,
      SNOWFLAKE_MODE: 'zk_recycle',
      ZK_ADDRESS: server.address,
      ZK_SESSION_TIMEOUT_MS: '2000',
      ZK_CONNECT_TIMEOUT_MS: '1000',
      SNOWFLAKE_NAME: name,
      SNOWFLAKE_IP: '127.0.0.1',
      SNOWFLAKE_PORT: String(port),
      SNOWFLAKE_LEASE_MS: String(LEASE_MS),
      SNOWFLAKE_LEASE_MARGIN_MS: '700',
      SNOWFLAKE_REPORT_INTERVAL_MS: '150',
      SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
    });
  const start = async (port: number) => {
    const app = await startApp(config(port));
    apps.push(app);
    return app;
  };
  const pool = async (which: 'inuse' | 'notuse') =>
    (await zk.getChildren(`/snowflake/${name}/recycle/${which}`)).map((n) => Number(n.split(':')[1]));
  const nodeData = async (which: 'inuse' | 'notuse', id: number) =>
    JSON.parse((await zk.getData(`/snowflake/${name}/recycle/${which}/workId:${id}`))?.data.toString() ?? 'null') as {
      ip: string;
      port: string;
      timestamp: number;
    } | null;
  /** Starts the server (if stopped) and waits until the test's own client is connected again. */
  const zookeeperBack = async () => {
    await server.start();
    await pollUntil('the test client to reconnect', () =>
      zk.getChildren('/').then(
        () => true,
        () => false,
      ),
    );
  };
  const expectExactly1024 = async () => {
    const inuse = await pool('inuse');
    const notuse = await pool('notuse');
    expect(inuse.length + notuse.length).toBe(1024);
    expect(new Set([...inuse, ...notuse])).toEqual(new Set([...Array(1024).keys()]));
  };

  beforeAll(async () => {
    env = await createTestEnv('sf_zkr');
    server = await ZookeeperServer.create();
    zk = testZk(server.address);
  });

  beforeEach(() => {
    name = uniqueName('zkr');
  });

  afterEach(async () => {
    await zookeeperBack();
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  afterAll(async () => {
    await zk.close();
    await server.destroy();
    await env.cleanup();
  });

  it('gives 3 instances 3 different ids out of exactly 1024, and takes one back at once on shutdown', async () => {
    const [a, b, c] = [await start(9301), await start(9302), await start(9303)];
    const ids = await Promise.all([a, b, c].map((app) => workerIdOf(app, DEFAULT_TWEPOCH)));
    expect(new Set(ids).size).toBe(3);
    expect((await pool('inuse')).sort()).toEqual([...ids].sort());
    expect(await nodeData('inuse', ids[1])).toMatchObject({ ip: '127.0.0.1', port: '9302' });
    await expectExactly1024();
    const issued = (await Promise.all([a, b, c].map((app) => getIds(app, 1000)))).flat();
    expect(new Set(issued.map(String)).size).toBe(3000);

    await b.close();
    apps.splice(apps.indexOf(b), 1);
    expect(await pool('notuse')).toContain(ids[1]);
    expect((await pool('inuse')).sort()).toEqual([ids[0], ids[2]].sort());
    await expectExactly1024();
  });

  it('reclaims the id of a killed instance after the lease; the instance stops issuing before that', async () => {
    const survivor = await start(9311);
    const victim = await start(9312);
    const victimId = await workerIdOf(victim, DEFAULT_TWEPOCH);
    // A crash as ZooKeeper sees it: the victim's connection is gone and it never reports again.
    await victim.get<WorkerIdRegistry>(WORKER_ID_REGISTRY).close();

    let stillInuseWhenRefused = false;
    await pollUntil('the victim to stop issuing', async () => {
      const res = await request(victim, 'GET', '/api/snowflake/get/k');
      if (res.status === 503) {
        expect(res.json()).toMatchObject({ code: -213, error: 'SNOWFLAKE_LEASE_LOST' });
        stillInuseWhenRefused = (await pool('inuse')).includes(victimId);
        return true;
      }
      return false;
    });
    expect(stillInuseWhenRefused).toBe(true);

    await pollUntil('the victim id to be reclaimed', async () => (await pool('notuse')).includes(victimId));
    const returned = await nodeData('notuse', victimId);
    expect(returned?.timestamp).toBeGreaterThan(Date.now() - LEASE_MS); // stamped past the old holder's last use
    expect((await request(survivor, 'GET', '/api/snowflake/get/k')).status).toBe(200);
    await expectExactly1024();
  });

  it('stops issuing when cut from ZooKeeper and takes a fresh id once it is back', async () => {
    const app = await start(9321);
    await workerIdOf(app, DEFAULT_TWEPOCH);
    await server.stop();
    await pollUntil('the instance to stop issuing', async () => {
      const res = await request(app, 'GET', '/api/snowflake/get/k');
      return res.status === 503 && res.json<{ code: number }>().code === -213;
    });
    await zookeeperBack();
    await pollUntil('the instance to issue again', async () => (await request(app, 'GET', '/api/snowflake/get/k')).status === 200);
    const now = await workerIdOf(app, DEFAULT_TWEPOCH);
    expect(await nodeData('inuse', now)).toMatchObject({ port: '9321' });
    expect(await pool('inuse')).toEqual([now]);
    await expectExactly1024();
  });

  it('refuses to start without ZooKeeper', async () => {
    await server.stop();
    await expect(startApp(config(9331))).rejects.toThrow(/zk_recycle needs ZooKeeper/);
  });
});
