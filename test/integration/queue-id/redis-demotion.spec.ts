import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { countConnectionPops } from '../../support/connection-pops-served';
import { appSuite } from '../../support/app-suite';
import { pollUntil } from '../../support/poll';
import { SeenIds } from '../../support/seen-ids';
import { OwnRedisServer } from '../../support/redis-server';
import { TcpProxy } from '../../support/tcp-proxy';
import { BOUNDS_AT_DEFAULTS, request } from '../../support/test-env';

/**
 * A Redis demoted under its name: a primary and its replica swap roles (FAILOVER, coordinated: no
 * write is lost) and the name the service connects to (a proxy here, a DNS name or a virtual IP in
 * production) is moved to the promoted node for new connections only; the open connections stay
 * with the demoted node, which answers every write with READONLY. The ioredis client and the batch
 * pop's own connection drop a connection that says READONLY and connect again, so gets succeed
 * again within 10 s, and no ID comes out twice. Before: 503 for ever (READONLY in the log).
 */
const APP = 11;
const SINGLE = `/api/id/${APP}?gatePass=alice`;
const BATCH = `/api/id/${APP}?gatePass=bob&count=20`;

async function role(port: number): Promise<string> {
  const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await client.connect();
    return String(await client.call('ROLE')).split(',')[0];
  } finally {
    client.disconnect();
  }
}

describe.each([
  ['', {}, false],
  [' with REDIS_WAIT_REPLICAS=1', { REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '200' }, false],
  // ioredis's reconnect on READONLY only ends its socket: a demoted node (or a path) that never
  // closes its side leaves the client "ready" and unable to write; the watchdog destroys it.
  [' that never closes a connection', {}, true],
])('a Redis demoted under its name%s', (_name, extra: Record<string, string>, keepHalfOpen: boolean) => {
  const suite = appSuite('qdemoted');
  let primary: OwnRedisServer;
  let replica: OwnRedisServer;
  let name: TcpProxy;
  let app: NestFastifyApplication;
  const ids = new SeenIds();

  beforeAll(async () => {
    primary = await OwnRedisServer.start();
    suite.defer(() => primary.destroy());
    replica = await OwnRedisServer.start();
    suite.defer(() => replica.destroy());
    const r = new Redis(replica.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    await r.replicaof('127.0.0.1', primary.port);
    await pollUntil('the replica to sync', async () => (await r.info('replication')).includes('master_link_status:up'));
    r.disconnect();
    name = await TcpProxy.start(primary.port, '127.0.0.1', { keepHalfOpen });
    suite.defer(() => name.close());
    app = await suite.start({ ...BOUNDS_AT_DEFAULTS, ...extra, REDIS_URL: `redis://127.0.0.1:${name.port}/0`, QUEUE_REFILL_AHEAD: 'true' });
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: APP, appName: 'demoted', step: 1000 } })).status).toBe(201);
  });

  it('follows the name to the promoted node within 10 s, ioredis and the pop connection alike, no ID twice', async () => {
    const waits = extra.REDIS_WAIT_REPLICAS !== undefined;
    for (const path of [SINGLE, BATCH, SINGLE, BATCH]) {
      const res = await request(app, 'GET', path, { token: null });
      expect(res.status).toBe(200);
      ids.record(res);
    }
    // With WAIT the batches pop through ioredis (the WAIT must run on the popping connection).
    const pops = countConnectionPops(app);
    expect(pops.enabled).toBe(!waits);

    // The coordinated failover: the primary waits for its replica, then they swap roles.
    const admin = new Redis(primary.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    try {
      await admin.call('FAILOVER', 'TO', '127.0.0.1', String(replica.port), 'TIMEOUT', '5000');
    } finally {
      admin.disconnect();
    }
    await pollUntil('the roles to swap', async () => (await role(replica.port)) === 'master' && (await role(primary.port)) === 'slave');
    // The name moves; the service's open connections still reach the demoted node.
    name.retarget(replica.port);
    const moved = Date.now();
    for (const path of [SINGLE, BATCH]) {
      const res = await pollUntil(`${path} to succeed on the promoted node`, async () => {
        const r = await request(app, 'GET', path, { token: null });
        return r.status === 200 ? r : false;
      }, { timeoutMs: 10_000, intervalMs: 100 });
      ids.record(res);
    }
    const recovered = Date.now() - moved;
    console.log(`[demotion] gets succeeded again ${recovered} ms after the name moved`);
    expect(recovered).toBeLessThan(10_000);
    for (let i = 0; i < 20; i++) {
      const res = await request(app, 'GET', i % 2 === 0 ? SINGLE : BATCH, { token: null });
      expect(res.status).toBe(200);
      ids.record(res);
    }
    // The batches went over the pop connection, now to the promoted node.
    if (!waits) {
      expect(pops.served).toBeGreaterThan(0);
    }
    expect(ids.duplicates).toBe(0);
  });
});
