import { Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { ProcessControl } from '../../../src/common/shutdown-deadline';
import { StartAbandoned, StartSignals, uninterrupted } from '../../../src/common/start-signals';

/** Signals and exits of a process, as the guard sees them. */
class FakeProcess extends EventEmitter implements ProcessControl {
  readonly exits: number[] = [];
  exit(code: number): void {
    this.exits.push(code);
  }
}

describe('signals during the start', () => {
  let proc: FakeProcess;
  let guard: StartSignals;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  beforeEach(() => {
    jest.useFakeTimers();
    proc = new FakeProcess();
    guard = StartSignals.install(8000, proc);
  });

  afterEach(() => {
    guard.remove();
    jest.useRealTimers();
  });

  it('end the start at once while nothing that must not be cut runs (as without a listener: 128 + the signal)', () => {
    proc.emit('SIGTERM', 'SIGTERM');
    expect(proc.exits).toEqual([143]);
    expect(proc.listenerCount('SIGTERM')).toBe(0);
  });

  it('during the migrations: they finish, then the start is abandoned; past SHUTDOWN_TIMEOUT_MS the process exits anyway', async () => {
    let finished = false;
    const migrating = uninterrupted(async () => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      finished = true;
      return ['Migration1'];
    });
    await jest.advanceTimersByTimeAsync(100);
    proc.emit('SIGTERM', 'SIGTERM');
    expect(proc.exits).toEqual([]);
    expect(guard.held).toBe('SIGTERM');
    const outcome = expect(migrating).rejects.toBeInstanceOf(StartAbandoned);
    await jest.advanceTimersByTimeAsync(3000);
    await outcome;
    expect(finished).toBe(true);
    expect(proc.exits).toEqual([]);
    // Whatever still runs after the migrations, the deadline armed by the signal holds.
    await jest.advanceTimersByTimeAsync(5000);
    expect(proc.exits).toEqual([1]);
  });

  it('without a signal, or without a guard, the work just runs', async () => {
    guard.remove();
    await expect(uninterrupted(async () => 'applied')).resolves.toBe('applied');
    guard = StartSignals.install(8000, proc);
    await expect(uninterrupted(async () => 'applied')).resolves.toBe('applied');
    expect(guard.held).toBeNull();
  });
});
