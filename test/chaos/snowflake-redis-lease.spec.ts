import { connect } from 'node:net';
import { DEFAULT_TWEPOCH } from '../../src/config/snowflake-config';
import { decodeId } from '../../src/snowflake/core/snowflake-layout';
import { pollUntil } from '../support/poll';
import { MariaDbProcess, RedisProcess } from './support/backends';
import { ManagedProcess } from './support/managed-process';
import { CHAOS_SCALE, expectClean, runScenario } from './support/scenario';
import { ServiceProcess, ensureBuilt } from './support/service-process';

/**
 * SNOWFLAKE_MODE=redis: an instance frozen (SIGSTOP) past its lease's TTL, its worker id leased
 * meanwhile by a new instance. When it runs again it must not issue a single ID with the old lease
 * (it checks its monotonic deadline before any renewal reply) and serves again only with a fresh
 * one. And the deadline alone: with Redis frozen, an instance stops at ttl - margin after its last
 * renewal was sent, while the time it recorded (its ceiling) would still let it issue.
 */
const IDS = Math.round(300_000 * CHAOS_SCALE);
const TTL = 2000;
const path = (n: number): string => `/api/snowflake/get/chaos-${n % 7}?count=1000`;
const probe = (n: number): string => `/api/snowflake/get/probe-${n}?count=10`;

async function workerIdOf(service: ServiceProcess): Promise<number> {
  const res = await fetch(`${service.baseUrl}/api/snowflake/get/who`);
  expect(res.status).toBe(200);
  return decodeId(BigInt(await res.text()), DEFAULT_TWEPOCH).workerId;
}

interface RawReply {
  status: number;
  code?: number;
  /** The IDs of a 200 batch answer. */
  ids: string[];
}

/**
 * A GET over a raw connection: `written` resolves once the whole request is in the kernel's hands
 * (on loopback: in the server's receive queue, even while the server process is stopped). The
 * reply is read to its end, however long that takes.
 */
function rawGet(port: number, path: string): { written: Promise<void>; reply: Promise<RawReply> } {
  const socket = connect(port, '127.0.0.1');
  let data = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (data += chunk));
  const reply = new Promise<RawReply>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      const code = /"code":(-?\d+)/.exec(data)?.[1];
      const ids = status === 200 ? ((JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4)) as { ids?: string[] }).ids ?? []) : [];
      resolve({ status, code: code === undefined ? undefined : Number(code), ids });
    });
  });
  const written = new Promise<void>((resolve, reject) => {
    socket.once('connect', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, (err) => (err ? reject(err) : resolve())),
    );
  });
  return { written, reply };
}

describe('snowflake redis mode under a frozen instance', () => {
  let redis: RedisProcess;
  let db: MariaDbProcess;

  beforeAll(async () => {
    ensureBuilt();
    [redis, db] = await Promise.all([RedisProcess.create(), MariaDbProcess.create()]);
    await db.query('CREATE DATABASE shardleaf_lease');
  }, 180_000);

  afterAll(async () => {
    await ManagedProcess.killAll();
    await Promise.all([redis?.destroy(), db?.destroy()]);
  }, 60_000);

  it('5c. an instance paused (SIGSTOP) past its TTL issues nothing until it holds a fresh lease; 0 duplicates', async () => {
    const env = {
      DATABASE_URL: db.url('shardleaf_lease'),
      REDIS_URL: redis.url,
      LOG_LEVEL: 'warn',
      QUEUE_REFILL_CRON: 'off',
      QUEUE_RELOAD_CRON: 'off',
      SEGMENT_SYNC_CRON: 'off',
      SNOWFLAKE_MODE: 'redis',
      SNOWFLAKE_NAME: 'chaos',
      SNOWFLAKE_LEASE_TTL_MS: String(TTL),
      SNOWFLAKE_REPORT_INTERVAL_MS: '300',
      SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
    };
    const [frozen, other, newcomer] = await Promise.all(['rl1', 'rl2', 'rl3'].map((n) => ServiceProcess.create(n, env)));
    await frozen.start();
    await other.start();
    const held = await workerIdOf(frozen);
    const leaseKey = 'id.gen.snowflake:chaos:leases';
    let pausedAt = 0;
    let resumedAt = 0;
    let newcomerId = -1;
    let firstAnswer: RawReply | null = null;
    let queuedAnswers: RawReply[] = [];
    const r = await runScenario({
      name: 'redis lease: SIGSTOP past the TTL',
      services: [frozen, other, newcomer],
      path,
      probe,
      targetIds: IDS,
      fault: async (ledger) => {
        pausedAt = Date.now();
        // Out of the load balancer while frozen: requests caught in the pause may outlast the
        // load's 20 s timeout on a loaded machine (counted as cut, as for a killed instance).
        frozen.up = false;
        frozen.process.signal('SIGSTOP');
        // Until its lease has expired by Redis's clock (same host) …
        await pollUntil('the frozen instance’s lease to expire', async () => {
          const expires = Number(await redis.command(['HGET', leaseKey, `e:${held}`]));
          return expires > 0 && expires < Date.now();
        }, { timeoutMs: 30_000, intervalMs: 100 });
        // … and a new instance has leased its worker id (the lowest free one).
        await newcomer.start();
        newcomerId = await workerIdOf(newcomer);
        // A request reaches the frozen instance's socket while it is stopped; it is read first
        // thing after SIGCONT, before any reply from Redis to its renewal.
        const early = rawGet(frozen.port, '/api/snowflake/get/after-pause?count=10');
        await early.written;
        // And 20 batch requests more, all read after SIGCONT: none may carry the old worker id.
        const queued = Array.from({ length: 20 }, (_, k) => rawGet(frozen.port, `/api/snowflake/get/queued-${k}?count=1000`));
        await Promise.all(queued.map((q) => q.written));
        resumedAt = Date.now();
        frozen.process.signal('SIGCONT');
        firstAnswer = await early.reply;
        queuedAnswers = await Promise.all(queued.map((q) => q.reply));
        for (const answer of [firstAnswer, ...queuedAnswers]) {
          for (const id of answer.ids) {
            ledger.add(id, 'rl1/queued');
          }
        }
        frozen.up = true;
        // It comes back by itself with a fresh lease.
        await pollUntil('the resumed instance to serve again', async () => {
          const again = await fetch(`${frozen.baseUrl}/api/snowflake/get/again`);
          return again.status === 200;
        }, { timeoutMs: 30_000, intervalMs: 100 });
      },
    });
    expectClean(r, IDS);
    expect(newcomerId).toBe(held);
    expect(firstAnswer).toEqual({ status: 503, code: -213, ids: [] });
    // Every queued request was answered: refused, or served with a fresh id (never the old one).
    expect(queuedAnswers).toHaveLength(20);
    const queuedStatuses = queuedAnswers.map((a) => `${a.status} ${a.code ?? ''}`.trim());
    expect(queuedStatuses.filter((st) => st !== '503 -213' && st !== '200')).toEqual([]);
    const queuedWithOld = queuedAnswers.flatMap((a) => a.ids).filter((id) => decodeId(BigInt(id), DEFAULT_TWEPOCH).workerId === held);
    expect(queuedWithOld).toEqual([]);
    const recovered = new RegExp(`recovered from a lost lease: worker id ${held} → (\\d+)`).exec(frozen.process.log);
    expect(recovered).not.toBeNull();
    expect(Number(recovered?.[1])).not.toBe(held);
    // Not one ID of the frozen instance carries the old worker id with a time at or after it resumed.
    let late = 0;
    let withOld = 0;
    for (const id of r.ledger.ids()) {
      const d = decodeId(BigInt(id), DEFAULT_TWEPOCH);
      if (r.ledger.sourceOf(id)?.startsWith('rl1') && d.workerId === held) {
        withOld++;
        if (d.timestamp >= resumedAt) {
          late++;
        }
      }
    }
    console.log(
      `[chaos] redis lease: worker id ${held} frozen at ${new Date(pausedAt).toISOString()}, taken by the newcomer; ` +
        `resumed ${resumedAt - pausedAt} ms later; ${withOld} IDs with it from the frozen instance, ${late} of them at or after it resumed; ${recovered?.[0]}; ` +
        `first answer after SIGCONT ${JSON.stringify(firstAnswer)}; the 20 queued: ${JSON.stringify(countBy(queuedAnswers))}`,
    );
    expect(withOld).toBeGreaterThan(0);
    expect(late).toBe(0);
    await Promise.all([frozen, other, newcomer].map((s) => s.kill('SIGKILL')));
  }, 300_000);

  it('5d. Redis frozen: the instance stops at its lease deadline (ttl - margin), while its recorded time would still let it issue', async () => {
    const ownRedis = await RedisProcess.create();
    const ttl = 8000;
    const env = {
      DATABASE_URL: db.url('shardleaf_lease'),
      REDIS_URL: ownRedis.url,
      LOG_LEVEL: 'warn',
      ADMIN_TOKEN: 'chaos-admin',
      QUEUE_REFILL_CRON: 'off',
      QUEUE_RELOAD_CRON: 'off',
      SEGMENT_SYNC_CRON: 'off',
      SNOWFLAKE_MODE: 'redis',
      SNOWFLAKE_NAME: 'chaos-deadline',
      SNOWFLAKE_LEASE_TTL_MS: String(ttl),
      SNOWFLAKE_REPORT_INTERVAL_MS: '300',
      SNOWFLAKE_PEER_MAX_SKEW_MS: '0',
    };
    const service = await ServiceProcess.create('rl4', env);
    try {
      await service.start();
      await workerIdOf(service);
      ownRedis.process.signal('SIGSTOP');
      const frozenAt = Date.now();
      let served = 0;
      const refusal = await pollUntil('the instance to refuse', async () => {
        const res = await fetch(`${service.baseUrl}/api/snowflake/get/d?count=10`, { signal: AbortSignal.timeout(10_000) });
        const at = Date.now();
        const body = await res.text();
        if (res.status === 200) {
          served++;
          return false;
        }
        return { at, status: res.status, body: JSON.parse(body) as { code: number; message: string } };
      }, { timeoutMs: 2 * ttl, intervalMs: 20 });
      const status = (await (
        await fetch(`${service.baseUrl}/admin/snowflake`, { headers: { authorization: 'Bearer chaos-admin' }, signal: AbortSignal.timeout(10_000) })
      ).json()) as { serving: boolean; recordedUntil: string };
      console.log(
        `[chaos] 5d: Redis frozen at ${new Date(frozenAt).toISOString()}; ${served} batches served after it; refused ${refusal.at - frozenAt} ms later ` +
          `(${refusal.body.message}); the recorded time (ceiling) ${status.recordedUntil}`,
      );
      expect(refusal.status).toBe(503);
      expect(refusal.body.code).toBe(-213);
      // The deadline's reason, not the ceiling's …
      expect(refusal.body.message).toMatch(/could not be renewed in time/);
      // … while the ceiling (the time recorded with the last renewal, now + TTL) was still ahead.
      expect(status.serving).toBe(false);
      expect(refusal.at).toBeLessThan(Date.parse(status.recordedUntil));
      ownRedis.process.signal('SIGCONT');
      await pollUntil('the instance to serve again', async () => (await fetch(`${service.baseUrl}/api/snowflake/get/again`)).status === 200, {
        timeoutMs: 30_000,
        intervalMs: 100,
      });
    } finally {
      ownRedis.process.signal('SIGCONT');
      await service.kill('SIGKILL');
      await ownRedis.destroy();
    }
  }, 120_000);
});

function countBy(answers: RawReply[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of answers) {
    const key = `${a.status}${a.code === undefined ? '' : ` ${a.code}`}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
