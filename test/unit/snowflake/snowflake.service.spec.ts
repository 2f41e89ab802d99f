import { Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';
import { loadConfig } from '../../../src/config/load-config';
import { decodeId } from '../../../src/snowflake/core/snowflake-layout';
import { PeerEndpoint, Registration, Report, WorkerIdRegistry } from '../../../src/snowflake/core/worker-id-registry';
import { PeerClockService } from '../../../src/snowflake/peer-clock.service';
import { SnowflakeReports } from '../../../src/snowflake/snowflake-reports';
import { SnowflakeService } from '../../../src/snowflake/snowflake.service';
import { FakeClock } from './fake-clock';

const T = 1_763_769_600_000;

/** An in-memory registry that records what the service asked of it. */
class FakeRegistry implements WorkerIdRegistry {
  readonly description = 'fake';
  workerId = 7;
  refuse: IdGenError | null = null;
  serving: IdGenError | null = null;
  released: number[] = [];
  closed = 0;
  beats = 0;
  /** The time a previous holder recorded (register resolves it). */
  recorded = 0;
  /** Every `until` recorded by a report. */
  reports: number[] = [];
  failReports = false;

  async register(): Promise<Registration> {
    if (this.refuse) {
      throw this.refuse;
    }
    return { workerId: this.workerId, recordedUntil: this.recorded };
  }
  async heartbeat(_now: number, until: number): Promise<Report> {
    this.beats++;
    if (this.failReports) {
      throw new Error('registry unreachable');
    }
    this.reports.push(until);
    return { workerId: this.workerId, recordedUntil: until };
  }
  assertServing(): void {
    if (this.serving) {
      throw this.serving;
    }
  }
  get heldWorkerId(): number | null {
    return this.workerId;
  }
  async peers(): Promise<PeerEndpoint[]> {
    return [];
  }
  async release(maxTimestamp: number): Promise<void> {
    this.released.push(maxTimestamp);
  }
  async close(): Promise<void> {
    this.closed++;
  }
}

function service(registry: FakeRegistry | null, clock: FakeClock, env: Record<string, string> = {}): SnowflakeService {
  const config = loadConfig({ SNOWFLAKE_IP: '127.0.0.1', SNOWFLAKE_REPORT_INTERVAL_MS: '100', ...env });
  const peerClock = { check: async () => undefined } as unknown as PeerClockService;
  return new SnowflakeService(config.snowflake, registry, clock, peerClock, new SnowflakeReports());
}

async function kindOf(promise: Promise<unknown>): Promise<ErrorKind | undefined> {
  return promise.then(
    () => undefined,
    (err: unknown) => (err as IdGenError).kind,
  );
}

describe('SnowflakeService', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('issues IDs with the registered worker id', async () => {
    const clock = new FakeClock(T);
    const svc = service(new FakeRegistry(), clock);
    await svc.onModuleInit();
    const [id] = await svc.nextIds(1);
    expect(decodeId(id, 1288834974657)).toMatchObject({ workerId: 7, timestamp: T });
    await svc.onApplicationShutdown();
  });

  it('issues with the worker id of the first report when the registered one was lost while starting', async () => {
    class SwitchingRegistry extends FakeRegistry {
      override async heartbeat(now: number, until: number): Promise<Report> {
        const report = await super.heartbeat(now, until);
        this.workerId = 12;
        return { ...report, workerId: 12 };
      }
    }
    const clock = new FakeClock(T);
    const svc = service(new SwitchingRegistry(), clock);
    await svc.onModuleInit();
    expect(decodeId((await svc.nextIds(1))[0], 1288834974657).workerId).toBe(12);
    await svc.onApplicationShutdown();
  });

  it('answers SNOWFLAKE_DISABLED when the mode is off', async () => {
    const svc = service(null, new FakeClock(T));
    await svc.onModuleInit();
    expect(await kindOf(svc.nextIds(1))).toBe(ErrorKind.SnowflakeDisabled);
  });

  it('answers SNOWFLAKE_NOT_READY before the registry is registered', async () => {
    const svc = service(new FakeRegistry(), new FakeClock(T));
    expect(await kindOf(svc.nextIds(1))).toBe(ErrorKind.SnowflakeNotReady);
  });

  it('refuses to issue while the registry says the lease is lost', async () => {
    const registry = new FakeRegistry();
    const svc = service(registry, new FakeClock(T));
    await svc.onModuleInit();
    registry.serving = new IdGenError(ErrorKind.SnowflakeLeaseLost, 'lost');
    expect(await kindOf(svc.nextIds(3))).toBe(ErrorKind.SnowflakeLeaseLost);
    registry.serving = null;
    expect(await svc.nextIds(3)).toHaveLength(3);
    await svc.onApplicationShutdown();
  });

  it('fails the start on a refusal and closes the registry', async () => {
    const registry = new FakeRegistry();
    registry.refuse = new IdGenError(ErrorKind.SnowflakeStartRefused, 'clock behind');
    const svc = service(registry, new FakeClock(T));
    expect(await kindOf(svc.onModuleInit())).toBe(ErrorKind.SnowflakeStartRefused);
    expect(registry.closed).toBe(1);
  });

  it('reports every interval and moves to the worker id a heartbeat returns', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    const registry = new FakeRegistry();
    const clock = new FakeClock(T);
    const svc = service(registry, clock);
    await svc.onModuleInit();
    registry.workerId = 900;
    await jest.advanceTimersByTimeAsync(250);
    expect(registry.beats).toBe(3); // once before serving, then every 100 ms
    clock.time = T + 1;
    const [id] = await svc.nextIds(1);
    expect(decodeId(id, 1288834974657).workerId).toBe(900);
    await svc.onApplicationShutdown();
    await jest.advanceTimersByTimeAsync(1000);
    expect(registry.beats).toBe(3); // no report after shutdown
  });

  it('refuses the old worker id as soon as the registry holds a fresh one, before the generator switched', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    let answer!: () => void;
    class RecoveringRegistry extends FakeRegistry {
      recovering = false;
      override async heartbeat(now: number, until: number): Promise<Report> {
        const report = await super.heartbeat(now, until);
        if (!this.recovering) {
          return report;
        }
        // The lost id is replaced: the registry holds 900 from here on, and the report that
        // hands 900 to the service comes back a little later.
        this.workerId = 900;
        await new Promise<void>((resolve) => (answer = resolve));
        return { ...report, workerId: 900, floor: 0 };
      }
    }
    const registry = new RecoveringRegistry();
    const clock = new FakeClock(T);
    const svc = service(registry, clock);
    await svc.onModuleInit();
    expect(decodeId((await svc.nextIds(1))[0], 1288834974657).workerId).toBe(7);
    registry.recovering = true;
    await jest.advanceTimersByTimeAsync(100);
    expect(answer).toBeDefined();
    // The generator still has id 7 and a ceiling earned with it: refused all the same.
    expect(await kindOf(svc.nextIds(1))).toBe(ErrorKind.SnowflakeLeaseLost);
    expect(svc.notServingReason()).toMatch(/worker id 7 is not the one held/);
    answer();
    await jest.advanceTimersByTimeAsync(0);
    clock.time = T + 1;
    expect(decodeId((await svc.nextIds(1))[0], 1288834974657).workerId).toBe(900);
    await svc.onApplicationShutdown();
  });

  it('on shutdown records the last time and closes', async () => {
    const registry = new FakeRegistry();
    const clock = new FakeClock(T + 50);
    const svc = service(registry, clock);
    await svc.onModuleInit();
    await svc.nextIds(1);
    clock.time = T + 40; // the clock went back: the release still covers the last ID
    await svc.onApplicationShutdown();
    expect(registry.released).toEqual([T + 50]);
    expect(registry.closed).toBe(1);
  });

  it('records now + SNOWFLAKE_RECORD_AHEAD_MS before the first ID, and issues only below the recorded time', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    const registry = new FakeRegistry();
    const clock = new FakeClock(T);
    const svc = service(registry, clock, { SNOWFLAKE_RECORD_AHEAD_MS: '300' });
    await svc.onModuleInit();
    expect(registry.reports).toEqual([T + 300]);
    expect(svc.serving).toBe(true);
    registry.failReports = true; // every later report fails: the ceiling stays at T + 300
    clock.time = T + 299;
    await jest.advanceTimersByTimeAsync(250);
    expect(await svc.nextIds(1)).toHaveLength(1);
    clock.time = T + 300;
    expect(await kindOf(svc.nextIds(1))).toBe(ErrorKind.SnowflakeLeaseLost);
    expect(svc.serving).toBe(false);
    registry.failReports = false;
    await jest.advanceTimersByTimeAsync(100);
    expect(svc.serving).toBe(true);
    expect(await svc.nextIds(1)).toHaveLength(1);
    await svc.onApplicationShutdown();
  });

  it('waits at start until the clock is past the time recorded by a crashed predecessor', async () => {
    const registry = new FakeRegistry();
    registry.recorded = T + 1234;
    const clock = new FakeClock(T);
    const svc = service(registry, clock);
    await svc.onModuleInit();
    expect(clock.time).toBeGreaterThan(T + 1234);
    const [id] = await svc.nextIds(1);
    expect(decodeId(id, 1288834974657).timestamp).toBeGreaterThan(T + 1234);
    await svc.onApplicationShutdown();
  });

  it('issues nothing once shutdown has begun, and records the exact last time', async () => {
    const registry = new FakeRegistry();
    const clock = new FakeClock(T);
    const svc = service(registry, clock);
    await svc.onModuleInit();
    await svc.nextIds(1);
    await svc.onApplicationShutdown();
    expect(registry.released).toEqual([T]);
    expect(await kindOf(svc.nextIds(1))).toBe(ErrorKind.SnowflakeNotReady);
  });
});
