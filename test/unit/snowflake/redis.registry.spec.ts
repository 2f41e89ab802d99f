import { Logger } from '@nestjs/common';
import { ErrorKind } from '../../../src/common/id-gen.error';
import { RedisRegistry } from '../../../src/snowflake/registries/redis.registry';
import { FakeClock } from './fake-clock';
import { InMemoryLeaseStore } from './in-memory-lease-store';
import { errorKindOfCall } from '../../support/error-kind';

const T = 1_763_769_600_000;
const TTL = 3000;
const MARGIN = 600;

/** A wall clock whose sleeps move the whole world (wall, monotonic and store clocks) on. */
class WorldClock extends FakeClock {
  constructor(private readonly world: World) {
    super(T);
    this.advanceOnSleep = false;
  }

  override async sleep(ms: number): Promise<void> {
    await super.sleep(ms);
    this.world.advance(ms);
  }
}

/** One machine: the wall clock, the monotonic clock and the store's clock move together. */
class World {
  readonly wall: FakeClock = new WorldClock(this);
  mono = 0;
  /** The store's clock (Redis TIME). */
  server = T;
  readonly store = new InMemoryLeaseStore(() => this.server);
  readonly monotonic = { now: () => this.mono };

  constructor() {
    // The hash exists since long ago, written by this server process.
    this.store.run = this.store.serverRun;
    this.store.since = T - 60_000;
  }

  advance(ms: number): void {
    this.wall.time += ms;
    this.mono += ms;
    this.server += ms;
  }

  registry(identity = '10.0.0.1:8080', maxWorkerId = 1023, callTimeoutMs = 1000): RedisRegistry {
    return new RedisRegistry({
      store: this.store,
      identity,
      ttlMs: TTL,
      marginMs: MARGIN,
      maxWorkerId,
      allowanceMs: TTL + 5,
      callTimeoutMs,
      clock: this.wall,
      monotonic: this.monotonic,
    });
  }
}

const kindOf = errorKindOfCall;

describe('RedisRegistry (in-memory store, fake clocks)', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  it('leases distinct ids, lowest free first, with no identity setting', async () => {
    const w = new World();
    const ids = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await w.registry('same:0').register(T)).workerId);
    }
    expect(ids).toEqual([0, 1, 2, 3, 4]);
  });

  it('serves until ttl - margin after the renewal was sent, and renewals move that on', async () => {
    const w = new World();
    const r = w.registry();
    await r.register(T);
    expect((await r.heartbeat(w.wall.time)).recordedUntil).toBe(T + TTL);
    w.advance(TTL - MARGIN - 1);
    expect(kindOf(() => r.assertServing())).toBeUndefined();
    w.advance(1);
    expect(kindOf(() => r.assertServing())).toBe(ErrorKind.SnowflakeLeaseLost);
    await r.heartbeat(w.wall.time);
    expect(kindOf(() => r.assertServing())).toBeUndefined();
  });

  it('refuses at once after a pause past the deadline (SIGSTOP), before any renewal reply', async () => {
    const w = new World();
    const r = w.registry();
    await r.register(T);
    await r.heartbeat(w.wall.time);
    let thaw!: () => void;
    w.store.frozen = new Promise((resolve) => (thaw = resolve));
    const renewal = r.heartbeat(w.wall.time); // sent, then the process is stopped
    w.advance(TTL + 1000);
    expect(kindOf(() => r.assertServing())).toBe(ErrorKind.SnowflakeLeaseLost);
    thaw();
    w.store.frozen = null;
    await renewal; // the reply "renewed" arrives late: it counts from when it was sent
    expect(kindOf(() => r.assertServing())).toBe(ErrorKind.SnowflakeLeaseLost);
  });

  it('a lease claimed by another instance stops issuing; the next report takes a fresh id past its recorded time', async () => {
    const w = new World();
    const a = w.registry('a:1');
    const b = w.registry('b:1');
    expect((await a.register(T)).workerId).toBe(0);
    await a.heartbeat(w.wall.time);
    expect((await b.register(T)).workerId).toBe(1);
    await b.heartbeat(w.wall.time);
    // a is paused past its TTL; a new instance takes id 0 (after its recorded time)
    w.advance(TTL + 1);
    await b.heartbeat(w.wall.time);
    const c = w.registry('c:1');
    const taken = await c.register(w.wall.time);
    expect(taken).toEqual({ workerId: 0, recordedUntil: T + TTL });
    await c.heartbeat(w.wall.time);
    // a resumes: refuses before renewing, the renewal finds id 0 taken, and it recovers with id 2
    expect(kindOf(() => a.assertServing())).toBe(ErrorKind.SnowflakeLeaseLost);
    const report = await a.heartbeat(w.wall.time);
    expect(report.workerId).toBe(2);
    expect(kindOf(() => a.assertServing())).toBeUndefined();
  });

  it('keeps refusing while a lost lease cannot be replaced (every id leased), and recovers later', async () => {
    const w = new World();
    const a = w.registry('a:1', 1);
    await a.register(T);
    w.advance(TTL + 1);
    const b = w.registry('b:1', 1);
    const c = w.registry('c:1', 1);
    expect((await b.register(w.wall.time)).workerId).toBe(0);
    expect((await c.register(w.wall.time)).workerId).toBe(1);
    await expect(a.heartbeat(w.wall.time)).rejects.toThrow(/every worker id 0..1 is leased/);
    expect(kindOf(() => a.assertServing())).toBe(ErrorKind.SnowflakeLeaseLost);
    await c.release(w.wall.time);
    expect((await a.heartbeat(w.wall.time)).workerId).toBe(1);
  });

  it('a new holder waits until its clock is past the id’s recorded time', async () => {
    const w = new World();
    const a = w.registry('a:1', 0);
    await a.register(T);
    await a.heartbeat(w.wall.time);
    w.advance(TTL + 1);
    w.wall.time -= 2000; // this instance's clock is behind the previous holder's
    const b = w.registry('b:1', 0);
    const reg = await b.register(w.wall.time);
    expect(reg.recordedUntil).toBe(T + TTL);
    expect(reg.recordedUntil).toBeGreaterThan(w.wall.time);
  });

  it('release frees the id at once, recording the exact last time (the next holder need not wait)', async () => {
    const w = new World();
    const a = w.registry('a:1', 0);
    await a.register(T);
    await a.heartbeat(w.wall.time);
    w.advance(100);
    await a.release(T + 90);
    expect(kindOf(() => a.assertServing())).toBe(ErrorKind.SnowflakeLeaseLost);
    expect(await w.registry('b:1', 0).register(w.wall.time)).toEqual({ workerId: 0, recordedUntil: T + 90 });
  });

  it('refuses to start when every id is live, or every free id is recorded far ahead', async () => {
    const w = new World();
    await w.registry('a:1', 0).register(T);
    await expect(w.registry('b:1', 0).register(T)).rejects.toThrow(/every worker id 0..0 is leased/);
    const v = new World();
    v.store.entries.set(0, { recorded: T + 60_000 });
    await expect(v.registry('a:1', 0).register(T)).rejects.toMatchObject({ kind: ErrorKind.SnowflakeStartRefused });
  });

  it('a renewal that does not answer in time fails the report and extends nothing', async () => {
    const w = new World();
    const r = w.registry('a:1', 1023, 20);
    await r.register(T);
    w.store.frozen = new Promise(() => undefined);
    await expect(r.heartbeat(w.wall.time)).rejects.toMatchObject({ kind: ErrorKind.BackendUnavailable });
    w.advance(TTL - MARGIN);
    expect(kindOf(() => r.assertServing())).toBe(ErrorKind.SnowflakeLeaseLost);
  });

  it('a store without leases (a Redis restarted empty) hands out no id for a TTL: holders from before stop first', async () => {
    const w = new World();
    const a = w.registry('a:1');
    expect((await a.register(T)).workerId).toBe(0);
    await a.heartbeat(w.wall.time);
    // Redis restarts empty: every lease and recorded time is gone.
    w.store.restartFrom(null, 'run-2');
    w.advance(100);
    const b = w.registry('b:1');
    const started = w.wall.time;
    const registering = b.register(w.wall.time);
    const reg = await registering;
    expect(reg.workerId).toBe(0);
    // b got id 0 only a whole TTL after it found the store empty; by then a's deadline had passed.
    expect(w.wall.time - started).toBeGreaterThanOrEqual(TTL);
    expect(kindOf(() => a.assertServing())).toBe(ErrorKind.SnowflakeLeaseLost);
    // a's next renewal finds its token gone and it takes a fresh id.
    expect((await a.heartbeat(w.wall.time)).workerId).toBe(1);
  });

  it('a lease the replicas did not confirm (REDIS_WAIT_REPLICAS) does not count: no deadline from it', async () => {
    const w = new World();
    w.store.replicasConfirm = false;
    const r = w.registry();
    expect((await r.register(T)).workerId).toBe(0);
    // Claimed in the master, unconfirmed: not serving.
    expect(kindOf(() => r.assertServing())).toBe(ErrorKind.SnowflakeLeaseLost);
    await expect(r.heartbeat(w.wall.time)).rejects.toThrow(/not confirmed by the Redis replicas/);
    expect(kindOf(() => r.assertServing())).toBe(ErrorKind.SnowflakeLeaseLost);
    // Confirmed again: the renewal counts from when it was sent.
    w.store.replicasConfirm = true;
    await r.heartbeat(w.wall.time);
    expect(kindOf(() => r.assertServing())).toBeUndefined();
    // An unconfirmed renewal extends nothing: the deadline of the last confirmed one passes.
    w.store.replicasConfirm = false;
    w.advance(TTL - MARGIN - 10);
    await expect(r.heartbeat(w.wall.time)).rejects.toMatchObject({ kind: ErrorKind.BackendUnavailable });
    expect(kindOf(() => r.assertServing())).toBeUndefined();
    w.advance(10);
    expect(kindOf(() => r.assertServing())).toBe(ErrorKind.SnowflakeLeaseLost);
  });

  it('a recovery whose renewal failed renews the id it claimed at the next report, not another one', async () => {
    const w = new World();
    const a = w.registry('a:1');
    await a.register(T);
    await a.heartbeat(w.wall.time);
    // a is paused past its TTL; b takes id 0.
    w.advance(TTL + 1);
    const b = w.registry('b:1');
    expect((await b.register(w.wall.time)).workerId).toBe(0);
    // a's recovery claims id 1, but the replicas do not confirm its renewal.
    w.store.replicasConfirm = false;
    await expect(a.heartbeat(w.wall.time)).rejects.toThrow(/not confirmed/);
    expect(w.store.entries.get(1)?.owner).toBeDefined();
    w.store.replicasConfirm = true;
    expect((await a.heartbeat(w.wall.time)).workerId).toBe(1);
    expect(w.store.entries.get(2)?.owner).toBeUndefined();
    expect(a.heldWorkerId).toBe(1);
  });

  it('the first start on a new Redis waits one TTL', async () => {
    const w = new World();
    w.store.run = null;
    const r = w.registry();
    await r.register(T);
    expect(w.wall.sleeps).toEqual([TTL + 1]);
  });

  it('only leases ids of the layout (js-safe: 0..31)', async () => {
    const w = new World();
    const ids = new Set<number>();
    for (let i = 0; i < 32; i++) {
      ids.add((await w.registry(`h:${i}`, 31).register(T)).workerId);
    }
    expect(Math.max(...ids)).toBe(31);
    expect(ids.size).toBe(32);
    await expect(w.registry('h:99', 31).register(T)).rejects.toThrow(/0..31/);
  });
});
