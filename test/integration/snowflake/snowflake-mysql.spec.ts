import { Server, createServer } from 'node:http';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DEFAULT_TWEPOCH } from '../../../src/config/snowflake-config';
import { decodeId } from '../../../src/snowflake/core/snowflake-layout';
import { pollUntil } from '../../support/poll';
import { TestEnv, createTestEnv, startApp } from '../../support/test-env';
import { freePort } from '../../support/free-port';
import { QUIET_ENV, getIds, startRefusal, workerIdOf } from './snowflake-harness';

interface Row {
  id: number;
  ip_port: string;
  max_timestamp: string | null;
}

/** An HTTP server answering `GET /api/snowflake/time` with its clock shifted by `skewMs`. */
async function fakePeer(skewMs: number): Promise<{ port: number; server: Server }> {
  const port = await freePort();
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ timestamp: Date.now() + skewMs }));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, server };
}

describe('snowflake mysql mode (leaf_workerid_alloc)', () => {
  let env: TestEnv;
  const config = (port: number, extra: Record<string, string> = {}) =>
    env.config({ ...QUIET_ENV, SNOWFLAKE_MODE: 'mysql', SNOWFLAKE_IP: '127.0.0.1', SNOWFLAKE_PORT: String(port), ...extra });
  const rows = async () => (await env.sql('SELECT id, ip_port, max_timestamp FROM leaf_workerid_alloc ORDER BY id')) as Row[];

  beforeAll(async () => {
    env = await createTestEnv('sf_mysql');
  });

  afterAll(async () => {
    await env.cleanup();
  });

  it('gives each ip:port a fixed worker id (the row id) and keeps it across restarts', async () => {
    const app = await startApp(config(7001));
    const first = await workerIdOf(app, DEFAULT_TWEPOCH);
    await app.close();
    const again = await startApp(config(7001));
    expect(await workerIdOf(again, DEFAULT_TWEPOCH)).toBe(first);
    await again.close();
    const mine = (await rows()).filter((r) => r.ip_port === '127.0.0.1:7001');
    expect(mine).toHaveLength(1);
    expect(mine[0].id).toBe(first);
    expect(Number(mine[0].max_timestamp)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('reports max_timestamp while running', async () => {
    const app = await startApp(config(7002, { SNOWFLAKE_REPORT_INTERVAL_MS: '100' }));
    await env.sql("UPDATE leaf_workerid_alloc SET max_timestamp = 1 WHERE ip_port = '127.0.0.1:7002'");
    try {
      // While running: the shutdown writes max_timestamp too.
      const reported = await pollUntil('a report of max_timestamp', async () => {
        const value = Number((await rows()).find((r) => r.ip_port === '127.0.0.1:7002')?.max_timestamp);
        return value !== 1 && value;
      });
      expect(reported).toBeGreaterThan(1);
    } finally {
      await app.close();
    }
  });

  it('refuses a start whose clock is behind max_timestamp', async () => {
    const app = await startApp(config(7003));
    await app.close();
    await env.sql("UPDATE leaf_workerid_alloc SET max_timestamp = ? WHERE ip_port = '127.0.0.1:7003'", [Date.now() + 3_600_000]);
    expect(await startRefusal(config(7003))).toMatch(/behind the time recorded in leaf_workerid_alloc/);
    // The refused start left the row free (no owner): a corrected start takes it at once.
    const owners = (await env.sql("SELECT owner FROM leaf_workerid_alloc WHERE ip_port = '127.0.0.1:7003'")) as Array<{ owner: string | null }>;
    expect(owners).toEqual([{ owner: null }]);
  });

  it('gives N instances distinct worker ids whose IDs are all unique', async () => {
    const apps: NestFastifyApplication[] = [];
    for (const port of [7101, 7102, 7103, 7104]) {
      apps.push(await startApp(config(port, { SNOWFLAKE_PEER_MAX_SKEW_MS: '0' })));
    }
    try {
      const workerIds = await Promise.all(apps.map((app) => workerIdOf(app, DEFAULT_TWEPOCH)));
      expect(new Set(workerIds).size).toBe(apps.length);
      const all: bigint[] = [];
      for (let round = 0; round < 5; round++) {
        const batches = await Promise.all(apps.map((app) => getIds(app, 1000)));
        batches.forEach((batch) => all.push(...batch));
      }
      expect(all).toHaveLength(20_000);
      expect(new Set(all.map((id) => id.toString())).size).toBe(all.length);
      expect(all.every((id) => workerIds.includes(decodeId(id, DEFAULT_TWEPOCH).workerId))).toBe(true);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });

  describe('peer clock check', () => {
    const servers: Server[] = [];

    afterAll(async () => {
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    });

    async function registerPeer(skewMs: number): Promise<number> {
      const { port, server } = await fakePeer(skewMs);
      servers.push(server);
      await env.sql('INSERT INTO leaf_workerid_alloc (ip_port, ip, port, max_timestamp) VALUES (?, ?, ?, ?)', [
        `127.0.0.1:${port}`,
        '127.0.0.1',
        String(port),
        Date.now(),
      ]);
      return port;
    }

    it('refuses to start when this clock is far from the peers’ mean, and starts when it is close', async () => {
      await registerPeer(120_000);
      expect(await startRefusal(config(7201, { SNOWFLAKE_PEER_MAX_SKEW_MS: '5000' }))).toMatch(/differs from the mean of 1 peer/);
      // Mean of +120 s and -110 s is +5 s: within a 10 s threshold.
      await registerPeer(-110_000);
      const app = await startApp(config(7202, { SNOWFLAKE_PEER_MAX_SKEW_MS: '10000' }));
      await app.close();
    });
  });

  // Last: the explicit id 1024 moves AUTO_INCREMENT past the worker-id range for later rows.
  it('never uses a row id above 1023: the row is renamed and a departed row taken instead', async () => {
    await env.sql("INSERT INTO leaf_workerid_alloc (id, ip_port, ip, port, max_timestamp) VALUES (1024, '127.0.0.1:7004', '127.0.0.1', '7004', 0)");
    const app = await startApp(config(7004));
    try {
      expect(await workerIdOf(app, DEFAULT_TWEPOCH)).toBeLessThanOrEqual(1023);
      expect((await rows()).find((r) => r.id === 1024)?.ip_port).toBe('retired#1024');
    } finally {
      await app.close();
    }
    // With no departed row left, a new ip:port is refused rather than given row 1025.
    await env.sql("UPDATE leaf_workerid_alloc SET owner = 'live', last_report = NOW(3) + INTERVAL 1 HOUR WHERE id <= 1023");
    expect(await startRefusal(config(7005))).toMatch(/no free worker id .* a new row would get id 10(2[5-9]|[3-9][0-9])/);
    expect((await rows()).filter((r) => r.id > 1024)).toEqual([]);
  });
});
