import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, TestEnv, createTestEnv } from '../support/test-env';
import { ManagedProcess } from './support/managed-process';
import { ServiceProcess, ensureBuilt } from './support/service-process';

/**
 * Two @shardleaf/client processes against two real service instances (shared Redis and MariaDB,
 * this suite's own database and key prefix), each taking IDS_PER_GENERATOR queue, segment and
 * snowflake IDs in three phases: both instances up; instance A killed (SIGKILL) — the clients
 * fail over to B; A restarted. Every ID of every client is then checked: 0 duplicates within a
 * client, across clients and across generators' own ID spaces, and every call answered.
 */
const IDS_PER_GENERATOR = 2_100_000;
const PHASE = IDS_PER_GENERATOR / 3;
const ROOT = join(__dirname, '..', '..');

class Worker {
  private output = '';
  private readonly child: ChildProcess;
  private waiters: Array<() => void> = [];

  constructor(name: string, env: Record<string, string>) {
    this.child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', join(__dirname, 'support', 'client-worker.ts')], {
      cwd: ROOT,
      env: { ...process.env, ...env, CLIENT_NAME: name },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const onData = (chunk: Buffer): void => {
      this.output += chunk.toString();
      for (const wake of this.waiters.splice(0)) {
        wake();
      }
    };
    this.child.stdout?.on('data', onData);
    this.child.stderr?.on('data', onData);
    this.child.on('exit', () => onData(Buffer.from('')));
  }

  /** Sends a command and resolves the answer line matching `pattern`. */
  async command(line: string, pattern: RegExp, timeoutMs = 120_000): Promise<string> {
    const since = this.output.length;
    this.child.stdin?.write(`${line}\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(this.output.slice(since));
      if (m) {
        return m[0];
      }
      if (this.child.exitCode !== null || /failed \{/.test(this.output.slice(since))) {
        throw new Error(`client worker failed: ${this.output.slice(-3000)}`);
      }
      if (Date.now() > deadline) {
        throw new Error(`client worker: no ${pattern} within ${timeoutMs} ms: ${this.output.slice(-3000)}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async go(n: number): Promise<{ totals: Record<string, number>; errors: string[] }> {
    const line = await this.command(`go ${n}`, /done (\{.*\})\n/);
    return JSON.parse(line.slice('done '.length)) as { totals: Record<string, number>; errors: string[] };
  }

  kill(): void {
    if (this.child.exitCode === null) {
      this.child.kill('SIGKILL');
    }
  }
}

/** Leases granted by one instance since its start, per generator (absent when none). */
async function grantedLeases(service: ServiceProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^shardleaf_leases_total\{generator="(\w+)",outcome="granted"\} (\d+)/gm)) {
    if (Number(m[2]) > 0) {
      out[m[1]] = Number(m[2]);
    }
  }
  return out;
}

describe('two client processes, two service instances, one killed and restarted', () => {
  let env: TestEnv;
  let out: string;
  let a: ServiceProcess;
  let b: ServiceProcess;
  const workers: Worker[] = [];

  beforeAll(async () => {
    ensureBuilt();
    env = await createTestEnv('clientfo');
    out = mkdtempSync(join(tmpdir(), 'shardleaf-client-fo-'));
    const common = {
      ...env.env,
      LOG_LEVEL: 'warn',
      SEGMENT_SYNC_CRON: 'off',
      SNOWFLAKE_MODE: 'local',
      SNOWFLAKE_CACHE_DIR: out,
      // The default report interval (3 s, recorded 9 s ahead): a shorter one let both instances
      // stop at their recorded time (503 SNOWFLAKE_LEASE_LOST) when a report ran late under load.
      // A restart after the kill waits until its clock passes the time recorded before (≤ 9 s).
    };
    a = await ServiceProcess.create('client-fo-a', { ...common, SNOWFLAKE_WORKER_ID: '1' });
    b = await ServiceProcess.create('client-fo-b', { ...common, SNOWFLAKE_WORKER_ID: '2' });
    await a.start();
    await b.start();
    const admin = (path: string, body: unknown) =>
      fetch(`${a.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await admin('/admin/apps', { appId: 1, appName: 'client-fo', step: 1000 })).status).toBe(201);
    expect((await admin('/admin/segment/tags', { tag: 'orders', step: 1000 })).status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    for (const w of workers) {
      w.kill();
    }
    await ManagedProcess.killAll();
    await env?.cleanup();
    if (out) {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);

  it(`hands out ${IDS_PER_GENERATOR.toLocaleString('en')} IDs per generator and client with 0 duplicates across the kill`, async () => {
    const servers = [a.baseUrl, b.baseUrl].join(',');
    for (const name of ['c1', 'c2']) {
      workers.push(new Worker(name, { CLIENT_SERVERS: servers, CLIENT_OUT: out, CLIENT_APP_ID: '1', CLIENT_TAG: 'orders' }));
    }
    const phase = async () => {
      const reports = await Promise.all(workers.map((w) => w.go(PHASE)));
      for (const r of reports) {
        expect(r.errors).toEqual([]);
      }
      return reports;
    };

    await phase(); // both instances up
    // Both instances granted leases (round robin).
    expect(await grantedLeases(a)).toEqual({ queue: expect.any(Number), segment: expect.any(Number) });
    expect(await grantedLeases(b)).toEqual({ queue: expect.any(Number), segment: expect.any(Number) });
    await a.kill('SIGKILL');
    await phase(); // A down: every lease from B (a lease in flight on A is lost: a gap)
    await a.start();
    const last = await phase(); // A back
    // The clients came back to A after its backoff (its counters restarted with it).
    expect(await grantedLeases(a)).toEqual({ queue: expect.any(Number), segment: expect.any(Number) });
    console.log(`[chaos] client failover: leases granted by the restarted A: ${JSON.stringify(await grantedLeases(a))}`);
    for (const r of last) {
      expect(r.totals).toEqual({ queue: IDS_PER_GENERATOR, segment: IDS_PER_GENERATOR, snowflake: IDS_PER_GENERATOR });
    }
    await Promise.all(workers.map((w) => w.command('end', /written/)));

    for (const generator of ['queue', 'segment', 'snowflake']) {
      const files = ['c1', 'c2'].map((name) => readFileSync(join(out, `${name}-${generator}.bin`)));
      const all = new BigUint64Array(files.reduce((n, f) => n + f.length / 8, 0));
      let offset = 0;
      for (const f of files) {
        all.set(new BigUint64Array(f.buffer, f.byteOffset, f.length / 8), offset);
        offset += f.length / 8;
      }
      expect(all.length).toBe(2 * IDS_PER_GENERATOR);
      all.sort();
      let duplicates = 0;
      for (let i = 1; i < all.length; i++) {
        if (all[i] === all[i - 1]) {
          duplicates++;
        }
      }
      expect({ generator, duplicates, zero: all[0] === 0n }).toEqual({ generator, duplicates: 0, zero: false });
    }
  }, 600_000);
});
