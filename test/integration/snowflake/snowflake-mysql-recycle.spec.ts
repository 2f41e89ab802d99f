import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { ErrorKind } from '../../../src/common/id-gen.error';
import { systemClock } from '../../../src/snowflake/core/clock';
import { MysqlRegistry } from '../../../src/snowflake/registries/mysql.registry';
import { WorkerIdAllocRepository, WorkerIdAllocRow } from '../../../src/snowflake/registries/worker-id-alloc.repository';
import { DEFAULT_TWEPOCH } from '../../../src/config/snowflake-config';
import { JS_SAFE_LAYOUT, decodeId } from '../../../src/snowflake/core/snowflake-layout';
import { pollUntil } from '../../support/poll';
import { TestEnv, createTestEnv, request, startApp } from '../../support/test-env';
import { QUIET_ENV, getIds, startRefusal } from './snowflake-harness';

interface Row {
  id: number;
  ip_port: string;
  owner: string | null;
  max_timestamp: string | null;
}

/**
 * mysql mode (the default) where instances come and go with new ip:ports (Kubernetes pods): rows
 * of departed instances are taken over, and no row id above the layout's largest worker id is used.
 */
describe('snowflake mysql mode recycles the rows of departed instances', () => {
  let env: TestEnv;
  // No SNOWFLAKE_MODE: the default (mysql). The seeded rows' addresses do not answer: no peer check.
  const config = (port: number, extra: Record<string, string> = {}) =>
    env.config({ ...QUIET_ENV, SNOWFLAKE_IP: '127.0.0.1', SNOWFLAKE_PORT: String(port), SNOWFLAKE_PEER_MAX_SKEW_MS: '0', ...extra });
  const rows = async (): Promise<Row[]> =>
    (await env.sql('SELECT id, ip_port, owner, max_timestamp FROM leaf_workerid_alloc ORDER BY id')) as Row[];

  /**
   * Empties the table and inserts rows 1..count of other ip:ports: `live` ones owned and reported
   * (last_report an hour ahead, so they stay live through the test), the others departed (owner
   * NULL, last report an hour ago) with max_timestamp `departedMax(id)`.
   */
  async function seed(count: number, live: (id: number) => boolean, departedMax: (id: number) => number): Promise<void> {
    await env.sql('DELETE FROM leaf_workerid_alloc');
    await env.sql('ALTER TABLE leaf_workerid_alloc AUTO_INCREMENT = 1');
    const values: unknown[] = [];
    const tuples: string[] = [];
    for (let id = 1; id <= count; id++) {
      const ip = `10.8.${id >> 8}.${id & 255}`;
      tuples.push(
        live(id)
          ? '(?, ?, ?, ?, ?, ?, NOW(3) + INTERVAL 1 HOUR)'
          : '(?, ?, ?, ?, ?, NULL, NOW(3) - INTERVAL 1 HOUR)',
      );
      values.push(id, `${ip}:8080`, ip, '8080', live(id) ? Date.now() : departedMax(id));
      if (live(id)) {
        values.push(`live-${id}`);
      }
    }
    if (count > 0) {
      await env.sql(
        `INSERT INTO leaf_workerid_alloc (id, ip_port, ip, port, max_timestamp, owner, last_report) VALUES ${tuples.join(', ')}`,
        values,
      );
    }
  }

  /** An app with snowflake off: it migrated the database; its DataSource serves registries built here. */
  let host: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('sf_recycle');
    // Migrates the database (the table exists before the seeds).
    host = await startApp(env.config({ ...QUIET_ENV, SNOWFLAKE_MODE: 'off' }));
  });

  afterAll(async () => {
    await host?.close();
    await env.cleanup();
  });

  it('with 1,023 rows of departed instances a new ip:port starts, takes a recycled row and issues IDs after its max_timestamp', async () => {
    // Recorded a little ahead of the clock, as a crashed holder leaves it: the new holder must wait.
    const ahead = Date.now() + 1500;
    await seed(1023, () => false, (id) => (id === 700 ? ahead - 1000 : ahead));
    const app = await startApp(config(9001));
    try {
      const ids = await getIds(app, 1000);
      const parts = ids.map((id) => decodeId(id, DEFAULT_TWEPOCH));
      // The oldest recorded time first (the least wait): row 700.
      expect(new Set(parts.map((p) => p.workerId))).toEqual(new Set([700]));
      expect(Math.min(...parts.map((p) => p.timestamp))).toBeGreaterThan(ahead - 1000);
      const row = (await rows()).find((r) => r.id === 700);
      expect(row).toMatchObject({ ip_port: '127.0.0.1:9001' });
      expect(row?.owner).not.toBeNull();
      expect((await rows()).every((r) => r.id <= 1023)).toBe(true);
    } finally {
      await app.close();
    }
    // A graceful stop frees it: the same ip:port gets it back.
    const again = await startApp(config(9001));
    try {
      expect(decodeId((await getIds(again, 1))[0], DEFAULT_TWEPOCH).workerId).toBe(700);
    } finally {
      await again.close();
    }
  });

  it('two new instances started at once against one free row: exactly one gets it, the other is refused', async () => {
    const before = Date.now() - 60_000;
    await seed(1023, (id) => id !== 512, () => before);
    const starts = await Promise.allSettled([startApp(config(9101)), startApp(config(9102))]);
    const started = starts.filter((s): s is PromiseFulfilledResult<NestFastifyApplication> => s.status === 'fulfilled');
    const refused = starts.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
    try {
      expect(started).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(String(refused[0].reason)).toMatch(/no free worker id in leaf_workerid_alloc: every row 1..1023 belongs to a live instance/);
      const ids = await getIds(started[0].value, 100);
      expect(ids.every((id) => decodeId(id, DEFAULT_TWEPOCH).workerId === 512)).toBe(true);
      // The loser's extra row (id 1024 or above) was deleted again.
      const all = await rows();
      expect(all).toHaveLength(1023);
      expect(all.every((r) => r.id <= 1023)).toBe(true);
      expect(all.find((r) => r.id === 512)?.ip_port).toMatch(/^127\.0\.0\.1:910[12]$/);
    } finally {
      await Promise.all(started.map((s) => s.value.close()));
    }
  });

  it('an ip:port whose own row id is above 1023 (refused before) renames it and takes a departed row', async () => {
    await seed(1023, (id) => id !== 3, () => Date.now() - 60_000);
    await env.sql(
      "INSERT INTO leaf_workerid_alloc (id, ip_port, ip, port, max_timestamp) VALUES (1024, '127.0.0.1:9201', '127.0.0.1', '9201', NULL)",
    );
    const app = await startApp(config(9201));
    try {
      expect(decodeId((await getIds(app, 1))[0], DEFAULT_TWEPOCH).workerId).toBe(3);
      const all = await rows();
      expect(all.find((r) => r.id === 1024)?.ip_port).toBe('retired#1024');
      expect(all.find((r) => r.id === 3)?.ip_port).toBe('127.0.0.1:9201');
    } finally {
      await app.close();
    }
  });

  it('does not take a row whose holder still reports, nor a row shardleaf never claimed (a Leaf fork instance’s), however old its max_timestamp', async () => {
    // Row 1: owned, reported a second ago (live). Row 2: never claimed by shardleaf (no owner, no
    // last_report), its max_timestamp an hour old: a Leaf fork instance sharing the table reports
    // only max_timestamp, and only by its own clock; it may be alive and issuing.
    await seed(0, () => false, () => 0);
    await env.sql(
      `INSERT INTO leaf_workerid_alloc (id, ip_port, ip, port, max_timestamp, owner, last_report) VALUES
        (1, '10.9.0.1:8080', '10.9.0.1', '8080', ?, 'live', NOW(3) - INTERVAL 1 SECOND),
        (2, '10.9.0.2:8080', '10.9.0.2', '8080', ?, NULL, NULL)`,
      [Date.now(), Date.now() - 3_600_000],
    );
    const app = await startApp(config(9301));
    try {
      expect(decodeId((await getIds(app, 1))[0], DEFAULT_TWEPOCH).workerId).toBeGreaterThan(2);
      expect((await rows()).find((r) => r.id === 2)).toMatchObject({ ip_port: '10.9.0.2:8080', owner: null });
    } finally {
      await app.close();
    }
  });

  it('a start whose ip:port gets a row from another start while it takes over a departed one is refused as a second instance of that identity', async () => {
    await seed(3, () => false, () => Date.now() - 60_000);
    // The other start of 127.0.0.1:9501 got row 10 right after this one looked for its own row.
    await env.sql(
      "INSERT INTO leaf_workerid_alloc (id, ip_port, ip, port, max_timestamp, owner, last_report) VALUES (10, '127.0.0.1:9501', '127.0.0.1', '9501', NULL, 'other-start', NOW(3))",
    );
    class LookedBeforeTheOtherStart extends WorkerIdAllocRepository {
      override async findByIpPort(): Promise<WorkerIdAllocRow | null> {
        return null;
      }
    }
    const registry = new MysqlRegistry({
      ip: '127.0.0.1',
      port: 9501,
      repository: new LookedBeforeTheOtherStart(host.get(DataSource), 2000),
      livenessMs: 600,
      startAllowanceMs: 1000,
      clock: systemClock,
      maxWorkerId: 1023,
      recycleAfterMs: 1200,
    });
    const refusal = await registry.register(Date.now()).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refusal).toMatchObject({ kind: ErrorKind.SnowflakeStartRefused });
    expect(String(refusal)).toMatch(/another live instance reported as 127\.0\.0\.1:9501/);
    expect((await rows()).filter((r) => r.ip_port === '127.0.0.1:9501').map((r) => r.id)).toEqual([10]);
  });

  it('an instance whose row was taken over (after a long stall) refuses, then registers a row again and serves with it', async () => {
    // js-safe (rows 1..31): every row but 1 is live, so that no other row is free at first.
    await seed(31, (id) => id !== 1, () => Date.now() - 60_000);
    const app = await startApp(
      config(9601, { SNOWFLAKE_LAYOUT: 'js-safe', SNOWFLAKE_REPORT_INTERVAL_MS: '200', SNOWFLAKE_RECORD_AHEAD_MS: '1000' }),
    );
    const workerIdOf = (id: bigint) => decodeId(id, DEFAULT_TWEPOCH, JS_SAFE_LAYOUT);
    try {
      expect(workerIdOf((await getIds(app, 10))[0]).workerId).toBe(1);
      // Another ip:port took row 1 (it looked departed while this instance could not reach MySQL)
      // and reports from now on.
      await env.sql(
        `UPDATE leaf_workerid_alloc SET ip_port = '10.7.0.1:8080', ip = '10.7.0.1', port = '8080', owner = 'taker',
            last_report = NOW(3) + INTERVAL 1 HOUR WHERE id = 1`,
      );
      const takenAt = Date.now();
      const refused = await pollUntil('IDs to be refused', async () => {
        const res = await request(app, 'GET', '/api/snowflake/get/x');
        return res.status === 503 && res.json<{ code: number }>();
      }, { intervalMs: 50 });
      expect(refused).toMatchObject({ code: -213 });
      // No row is free: it stays refused (a new row would be 32, outside 1..31). One is freed,
      // recorded a little ahead of the clock.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await request(app, 'GET', '/api/snowflake/get/x')).status).toBe(503);
      const freedUntil = Date.now() + 800;
      await env.sql('UPDATE leaf_workerid_alloc SET owner = NULL, last_report = NOW(3) - INTERVAL 1 HOUR, max_timestamp = ? WHERE id = 17', [
        freedUntil,
      ]);
      await pollUntil('IDs again', async () => (await request(app, 'GET', '/api/snowflake/get/x')).status === 200, {
        timeoutMs: 15_000,
        intervalMs: 100,
      });
      const again = (await getIds(app, 1000)).map(workerIdOf);
      expect(new Set(again.map((d) => d.workerId))).toEqual(new Set([17]));
      expect(Math.min(...again.map((d) => d.timestamp))).toBeGreaterThan(Math.max(freedUntil, takenAt));
      const all = await rows();
      expect(all.find((r) => r.id === 1)).toMatchObject({ ip_port: '10.7.0.1:8080', owner: 'taker' });
      expect(all.find((r) => r.id === 17)).toMatchObject({ ip_port: '127.0.0.1:9601' });
      expect(all.every((r) => r.id <= 31)).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('js-safe layout: only rows 1..31 are worker ids; a departed one of them is taken, never a higher row', async () => {
    const jsSafe = { SNOWFLAKE_LAYOUT: 'js-safe' };
    await seed(40, (id) => id <= 31, () => Date.now() - 60_000);
    expect(await startRefusal(config(9401, jsSafe))).toMatch(/every row 1..31 belongs to a live instance/);
    expect((await rows()).every((r) => r.id <= 40)).toBe(true);
    await env.sql("UPDATE leaf_workerid_alloc SET owner = NULL, last_report = NOW(3) - INTERVAL 1 HOUR WHERE id = 17");
    const app = await startApp(config(9402, jsSafe));
    try {
      const ids = await getIds(app, 1000);
      expect(ids.every((id) => id < 2n ** 53n && decodeId(id, DEFAULT_TWEPOCH, JS_SAFE_LAYOUT).workerId === 17)).toBe(true);
    } finally {
      await app.close();
    }
  });
});
