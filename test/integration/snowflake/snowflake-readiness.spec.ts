import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Readiness, readinessUntil } from '../../support/readiness';
import { pollUntil } from '../../support/poll';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';
import { QUIET_ENV, uniqueName } from './snowflake-harness';
import { ZookeeperServer } from './zookeeper-server';

type GeneratorsDetail = { status: string; snowflake?: boolean | null; snowflakeReason?: string };

/** /health/ready follows whether snowflake IDs can be issued, not only whether it started. */
describe('snowflake readiness', () => {
  let env: TestEnv;
  let zk: ZookeeperServer;
  let app: NestFastifyApplication | null = null;

  beforeAll(async () => {
    env = await createTestEnv('sf_ready');
    zk = await ZookeeperServer.create();
  });

  afterAll(async () => {
    await app?.close();
    await zk?.destroy();
    await env?.cleanup();
  });

  it('zk_recycle: not ready (naming snowflake) once the lease is lost and IDs are refused', async () => {
    app = await startApp(
      env.config({
        ...QUIET_ENV,
        SNOWFLAKE_MODE: 'zk_recycle',
        ZK_ADDRESS: zk.address,
        SNOWFLAKE_NAME: uniqueName('ready'),
        SNOWFLAKE_REPORT_INTERVAL_MS: '200',
        SNOWFLAKE_LEASE_MS: '3000',
        SNOWFLAKE_LEASE_MARGIN_MS: '1000',
        SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
        ZK_SESSION_TIMEOUT_MS: '2000',
        ZK_CONNECT_TIMEOUT_MS: '500',
      }),
    );
    const ready = await readinessUntil(app, 200);
    expect((ready.info?.generators as GeneratorsDetail).snowflake).toBe(true);
    await zk.stop();
    // Until IDs are refused (lease lost: no report for lease - margin)…
    const started = app;
    await pollUntil('IDs to be refused', async () => (await request(started, 'GET', '/api/snowflake/get/ready')).status === 503);
    // …then readiness names snowflake as the reason (ZooKeeper is down too, reported apart).
    const res = await request(app, 'GET', '/health/ready', { token: null });
    expect(res.status).toBe(503);
    const generators = res.json<Readiness>().error?.generators as GeneratorsDetail;
    expect(generators.status).toBe('down');
    expect(generators.snowflake).toBe(false);
    expect(generators.snowflakeReason).toMatch(/could not be renewed/);
  });
});
