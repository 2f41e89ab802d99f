import { MariaDbProcess, RedisProcess } from './support/backends';
import { LoadReply } from './support/load-driver';
import { ManagedProcess } from './support/managed-process';
import { CHAOS_SCALE, ScenarioResult, expectClean, runScenario, sleep } from './support/scenario';
import { ServiceProcess, ensureBuilt, shiftedClockEnv } from './support/service-process';
import { pollUntil } from '../support/poll';

/**
 * Formatted numbers under faults: 3 instances on a private Redis and MariaDB, two of them with
 * their wall clocks 5 s ahead and 5 s behind (the whole process's Date), concurrent batch load,
 * every number in the ledger. Each scenario must end with zero duplicates, only documented
 * 4xx/503 errors and every instance serving again by itself.
 */
const ADMIN = 'chaos-admin-token';
const DATABASE = 'shardleaf_chaos_numbers';
const NUMBERS_PER_SCENARIO = Math.round(150_000 * CHAOS_SCALE);

describe('formatted numbers under faults', () => {
  let redis: RedisProcess;
  let db: MariaDbProcess;
  let services: ServiceProcess[] = [];
  const results: ScenarioResult[] = [];

  const path = (key: string) => (n: number) => `/api/number/${key}?count=${50 + (n % 51)}`;
  const probe = (key: string) => () => `/api/number/${key}?count=5`;

  async function createFormat(key: string, pattern: string, reset: string, step: number): Promise<void> {
    const res = await fetch(`${services[0].baseUrl}/admin/numbers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key, pattern, reset, step }),
    });
    expect([200, 201]).toContain(res.status);
  }

  beforeAll(async () => {
    ensureBuilt();
    [redis, db] = await Promise.all([RedisProcess.create(), MariaDbProcess.create()]);
    await db.query(`CREATE DATABASE ${DATABASE}`);
    const env = {
      DATABASE_URL: db.url(DATABASE),
      REDIS_URL: redis.url,
      ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'warn',
      SNOWFLAKE_MODE: 'off',
      SEGMENT_SYNC_CRON: 'off',
      QUEUE_REFILL_CRON: 'off',
      DB_POOL_SIZE: '8',
    };
    services = await Promise.all(['n1', 'n2', 'n3'].map((name) => ServiceProcess.create(name, env)));
    // The first start applies the migrations; the others start together afterwards, their clocks off.
    await services[0].start();
    await Promise.all([services[1].start(shiftedClockEnv(5000)), services[2].start(shiftedClockEnv(-5000))]);
  }, 180_000);

  afterAll(async () => {
    await ManagedProcess.killAll();
    await Promise.all([redis?.destroy(), db?.destroy()]);
    const total = results.reduce((sum, r) => sum + r.ledger.checked, 0);
    console.log(`[chaos] number scenarios: ${total} numbers checked, ${results.reduce((s, r) => s + r.ledger.duplicates.length, 0)} duplicates`);
  }, 60_000);

  it('1. the database day turns under load, instance clocks 5 s apart', async () => {
    // The database's clock view reads 23:59:52 now and runs on: midnight comes 8 s into the load.
    const [{ us, d1 }] = await db.query<Array<{ us: string; d1: string }>>(
      "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), TIMESTAMP(UTC_DATE(), '23:59:52')) AS us, DATE_FORMAT(UTC_DATE() + INTERVAL 1 DAY, '%Y%m%d') AS d1",
      [],
      DATABASE,
    );
    await db.query(
      `CREATE OR REPLACE SQL SECURITY INVOKER VIEW shardleaf_db_clock AS SELECT TIMESTAMPADD(MICROSECOND, ${BigInt(us)}, UTC_TIMESTAMP(3)) AS db_now`,
      [],
      DATABASE,
    );
    await createFormat('ord', 'ORD{yyyyMMdd}{seq:8}', 'daily', 500);
    const replies: LoadReply[] = [];
    const r = await runScenario({
      name: 'database midnight, clocks ±5 s',
      services,
      path: path('ord'),
      probe: probe('ord'),
      targetIds: NUMBERS_PER_SCENARIO,
      onReply: (reply) => replies.push(reply),
      // The fault is the new day: the load goes on until the database is 2 s into it.
      fault: async () => {
        await pollUntil(
          'the database day to turn',
          async () => {
            const [{ d }] = await db.query<Array<{ d: string }>>("SELECT DATE_FORMAT(db_now, '%Y%m%d') AS d FROM shardleaf_db_clock", [], DATABASE);
            return d === d1;
          },
          { timeoutMs: 60_000, intervalMs: 100 },
        );
        await sleep(2000);
      },
    });
    results.push(r);
    expectClean(r, NUMBERS_PER_SCENARIO);
    const newDay = [...r.ledger.ids()].filter((n) => n.slice(3, 11) === d1).map((n) => Number(n.slice(11)));
    expect(newDay.length).toBeGreaterThan(0);
    expect(newDay.reduce((a, b) => Math.min(a, b), Infinity)).toBe(1);
    // No request sent after the first new-day number came back got a number of the old day.
    const isNew = (n: string): boolean => n.slice(3, 11) === d1;
    const firstNew = replies.filter((x) => x.items.some(isNew)).reduce((t, x) => Math.min(t, x.end), Infinity);
    const late = replies.filter((x) => x.start > firstNew && !x.items.every(isNew));
    expect(late.slice(0, 3).map((x) => `${x.service} +${Math.round(x.start - firstNew)} ms: ${x.items[0]}`)).toEqual([]);
    // Every instance answered its probe after the fault (runScenario) with numbers of the new day.
    const probed = [...r.ledger.ids()].filter((n) => r.ledger.sourceOf(n)?.endsWith('/probe'));
    for (const service of services) {
      const mine = probed.filter((n) => r.ledger.sourceOf(n) === `${service.name}/probe`);
      expect({ service: service.name, probed: mine.length > 0, allNew: mine.every(isNew) }).toEqual({
        service: service.name,
        probed: true,
        allNew: true,
      });
    }
  }, 300_000);

  it('2. MariaDB crashes (kill -9) and restarts in the middle of the load', async () => {
    await createFormat('inv', 'INV-{seq:12}', 'none', 300);
    const r = await runScenario({
      name: 'numbers: mariadb crash + restart',
      services,
      path: path('inv'),
      probe: probe('inv'),
      targetIds: NUMBERS_PER_SCENARIO,
      fault: async () => {
        await db.process.stop('SIGKILL');
        await sleep(1500);
        await db.start();
      },
    });
    results.push(r);
    expectClean(r, NUMBERS_PER_SCENARIO);
  }, 300_000);

  it('3. kill -9 of an instance holding segments, then a restart', async () => {
    await createFormat('doc', 'DOC{yyyy}-{seq62:8}', 'yearly', 1000);
    const victim = services[1];
    const r = await runScenario({
      name: 'numbers: kill -9 of an instance',
      services,
      path: path('doc'),
      probe: probe('doc'),
      targetIds: NUMBERS_PER_SCENARIO,
      fault: async () => {
        await victim.kill('SIGKILL');
        await sleep(500);
        await victim.start(shiftedClockEnv(5000));
      },
    });
    results.push(r);
    expectClean(r, NUMBERS_PER_SCENARIO);
  }, 300_000);
});
