import { performance } from 'node:perf_hooks';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { appSuite } from '../../support/app-suite';
import { request } from '../../support/test-env';
import { faultOverrides } from '../../support/provider-overrides';

interface Reply {
  app: string;
  /** performance.now() when the request was sent and when its reply arrived. */
  start: number;
  end: number;
  numbers: string[];
}

/**
 * The database's day moves forward while two instances serve under load: the test redefines the
 * clock view of its own database (DB-side state) to read 23:59:56 now and run on from there. The
 * second instance runs with the clock-offset test hook: its snowflake clock and both clocks its
 * number generator reads (monotonic and wall) are 5 s ahead. That shows what it is meant to: a
 * constant offset changes nothing, since the generator only measures time since a database
 * reading and never asks its clocks for the time of day. Clocks that run at different rates,
 * stop (a suspend) or are stepped are the unit tests' (number-generator.spec.ts); whole processes
 * whose Date is 5 s ahead and behind, the fault suite's (test/chaos/number-faults.spec.ts). The
 * sequence must restart at 1 on the new day, and no request sent after a number of the new day
 * came back may get a number of the old one.
 */
describe('formatted numbers across the database midnight', () => {
  const suite = appSuite('nummid');
  let a: NestFastifyApplication;
  let b: NestFastifyApplication;

  beforeAll(async () => {
    const env = { DB_QUERY_TIMEOUT_MS: '20000' };
    a = await suite.start(env);
    b = await suite.start(env, faultOverrides({ refillDelayMs: 0, clockOffsetMs: 5000 }));
  });

  it('restarts at 1 on the new day, and no number of the old day is issued after it', async () => {
    const rows = (await suite.env.sql(
      "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), TIMESTAMP(UTC_DATE(), '23:59:56')) AS us, " +
        "DATE_FORMAT(UTC_DATE(), '%Y%m%d') AS d0, DATE_FORMAT(UTC_DATE() + INTERVAL 1 DAY, '%Y%m%d') AS d1",
    )) as Array<{ us: string; d0: string; d1: string }>;
    const { us, d0, d1 } = rows[0];
    await suite.env.sql(
      `CREATE OR REPLACE SQL SECURITY INVOKER VIEW shardleaf_db_clock AS SELECT TIMESTAMPADD(MICROSECOND, ${BigInt(us)}, UTC_TIMESTAMP(3)) AS db_now`,
    );
    const movedAt = performance.now();
    // 'held': big segments and a slow load, so each instance still holds numbers of the old day at
    // midnight; 'busy': small segments used up in a tight loop.
    for (const [key, step] of [['held', 5000], ['busy', 20]] as const) {
      const created = await request(a, 'POST', '/admin/numbers', {
        body: { key, pattern: `${key === 'held' ? 'H' : 'B'}{yyyyMMdd}{seq:6}`, reset: 'daily', step },
      });
      expect(created.status).toBe(201);
    }

    const replies: Record<string, Reply[]> = { held: [], busy: [] };
    const failures: string[] = [];
    // Midnight comes 4 s after the view was redefined; the load goes on until 4 s after it.
    const until = movedAt + 8000;
    const worker = async (key: 'held' | 'busy', app: NestFastifyApplication, name: string, w: number): Promise<void> => {
      for (let i = 0; performance.now() < until; i++) {
        const count = 1 + ((i + w) % 3);
        const start = performance.now();
        const res = await request(app, 'GET', `/api/number/${key}?count=${count}`, { token: null });
        const end = performance.now();
        if (res.status !== 200) {
          failures.push(`${name}: ${res.status} ${res.body}`);
        } else {
          replies[key].push({ app: name, start, end, numbers: res.json<{ numbers: string[] }>().numbers });
        }
        if (key === 'held') {
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      }
    };
    await Promise.all(
      (['held', 'busy'] as const).flatMap((key) =>
        Array.from({ length: 8 }, (_, w) => worker(key, w % 2 === 0 ? a : b, w % 2 === 0 ? 'a' : 'b', w)),
      ),
    );
    expect(failures.slice(0, 5)).toEqual([]);

    for (const key of ['held', 'busy'] as const) {
      const all = replies[key].flatMap((r) => r.numbers);
      expect(new Set(all).size).toBe(all.length);
      const dayOf = (n: string): string => n.slice(1, 9);
      const seqOf = (n: string): number => Number(n.slice(9));
      expect(new Set(all.map(dayOf))).toEqual(new Set([d0, d1]));
      const oldDay = all.filter((n) => dayOf(n) === d0).map(seqOf);
      const newDay = all.filter((n) => dayOf(n) === d1).map(seqOf);
      // The sequence restarts at 1 on the new day (and started at 1 on the old one).
      expect(Math.min(...oldDay)).toBe(1);
      expect(Math.min(...newDay)).toBe(1);
      // Both instances crossed into the new day.
      for (const name of ['a', 'b']) {
        expect(replies[key].some((r) => r.app === name && r.numbers.some((n) => dayOf(n) === d1))).toBe(true);
      }
      // Once a number of the new day came back, no request sent afterwards got one of the old day.
      const firstNewDay = Math.min(...replies[key].filter((r) => r.numbers.some((n) => dayOf(n) === d1)).map((r) => r.end));
      const late = replies[key].filter((r) => r.start > firstNewDay && r.numbers.some((n) => dayOf(n) === d0));
      expect(late.map((r) => `${key}: ${r.app} sent ${Math.round(r.start - firstNewDay)} ms after: ${r.numbers.join(',')}`)).toEqual([]);
      console.log(
        `[numbers] midnight, ${key}: ${replies[key].length} requests, ${oldDay.length} numbers of ${d0} (up to ` +
          `${Math.max(...oldDay)}), ${newDay.length} of ${d1}; requests sent after the first new-day number: ` +
          `${replies[key].filter((r) => r.start > firstNewDay).length}`,
      );
    }
  }, 60_000);
});
