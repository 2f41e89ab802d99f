import { LimiterClock, REPEAT_MAX_KEYS, REPEAT_WINDOW_MS, RepeatLimiter, realLimiterClock } from '../../../src/logging/repeat-limiter';

/** A clock moved by hand; its timers run when `advance` passes them. */
class FakeClock implements LimiterClock {
  private t = 1_000_000;
  private timers: Array<{ at: number; fn: () => void; live: boolean }> = [];

  now(): number {
    return this.t;
  }
  after(ms: number, fn: () => void): () => void {
    const timer = { at: this.t + ms, fn, live: true };
    this.timers.push(timer);
    return () => {
      timer.live = false;
    };
  }
  get pending(): number {
    return this.timers.filter((timer) => timer.live).length;
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((timer) => timer.live && timer.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) {
        break;
      }
      this.t = due.at;
      due.live = false;
      due.fn();
    }
    this.t = end;
  }
}

function limiter(options: { maxKeys?: number } = {}) {
  const clock = new FakeClock();
  const lines: Array<{ message: string; fields: Record<string, unknown> }> = [];
  const repeats = new RepeatLimiter((message, fields) => lines.push({ message, fields }), { ...options, clock });
  return { clock, lines, repeats };
}

describe('RepeatLimiter', () => {
  it('writes the first occurrence at once with its fields, and only counts repeats within the window', () => {
    const { clock, lines, repeats } = limiter();
    repeats.report('backend failure: Connection is closed.', { reqId: 'r-1' });
    expect(lines).toEqual([{ message: 'backend failure: Connection is closed.', fields: { reqId: 'r-1' } }]);
    for (let i = 2; i <= 1000; i++) {
      clock.advance(5);
      repeats.report('backend failure: Connection is closed.', { reqId: `r-${i}` });
    }
    // 999 repeats in 4,995 ms: none written.
    expect(lines).toHaveLength(1);
  });

  it('writes the first occurrence after the window with how many were not written since the line before', () => {
    const { clock, lines, repeats } = limiter();
    repeats.report('m', { reqId: 'a' });
    clock.advance(1);
    repeats.report('m', { reqId: 'b' });
    clock.advance(REPEAT_WINDOW_MS - 2);
    repeats.report('m', { reqId: 'c' });
    expect(lines).toHaveLength(1);
    clock.advance(1);
    repeats.report('m', { reqId: 'd' });
    expect(lines[1]).toEqual({ message: 'm', fields: { reqId: 'd', repeated: 2, sinceMs: REPEAT_WINDOW_MS } });
    // A new window starts at that line: no count on a line after a quiet window.
    clock.advance(REPEAT_WINDOW_MS);
    repeats.report('m', { reqId: 'e' });
    expect(lines[2]).toEqual({ message: 'm', fields: { reqId: 'e' } });
  });

  it('keeps keys apart', () => {
    const { clock, lines, repeats } = limiter();
    repeats.report('backend failure: connect ECONNREFUSED 127.0.0.1:6379', { reqId: 'a' });
    repeats.report('backend failure: MySQL did not answer', { reqId: 'b' });
    repeats.report('backend failure: connect ECONNREFUSED 127.0.0.1:6379', { reqId: 'c' });
    clock.advance(REPEAT_WINDOW_MS);
    repeats.report('backend failure: MySQL did not answer', { reqId: 'd' });
    expect(lines.map((line) => line.fields)).toEqual([{ reqId: 'a' }, { reqId: 'b' }, { reqId: 'd' }]);
  });

  it('writes a pending count by the timer once the occurrences stopped, then forgets the key', () => {
    const { clock, lines, repeats } = limiter();
    repeats.report('m', { reqId: 'a' });
    clock.advance(3_000);
    repeats.report('m', { reqId: 'b' });
    repeats.report('m', { reqId: 'c' });
    expect(clock.pending).toBe(1);
    clock.advance(2 * REPEAT_WINDOW_MS - 3_000 - 1);
    expect(lines).toHaveLength(1);
    clock.advance(1);
    expect(lines[1]).toEqual({ message: 'm', fields: { repeated: 2, sinceMs: 2 * REPEAT_WINDOW_MS } });
    expect(clock.pending).toBe(0);
    // Forgotten: the next occurrence is a first one.
    clock.advance(1);
    repeats.report('m', { reqId: 'd' });
    expect(lines[2]).toEqual({ message: 'm', fields: { reqId: 'd' } });
  });

  it('writes no summary of its own while the occurrences go on (the lines after each window carry the counts)', () => {
    const { clock, lines, repeats } = limiter();
    for (let t = 0; t < 6 * REPEAT_WINDOW_MS; t += 100) {
      repeats.report('m', { reqId: `r${t}` });
      clock.advance(100);
    }
    // One line per window, each after the first with the 99 repeats before it.
    expect(lines).toHaveLength(6);
    expect(lines.slice(1).every((line) => line.fields.repeated === 99 && line.fields.sinceMs === REPEAT_WINDOW_MS)).toBe(true);
    expect(lines.every((line) => typeof line.fields.reqId === 'string')).toBe(true);
    // Then they stop: the last window's 99 come in one line, no later than two windows after its line.
    clock.advance(2 * REPEAT_WINDOW_MS);
    expect(lines).toHaveLength(7);
    expect(lines[6].fields).toEqual({ repeated: 99, sinceMs: 2 * REPEAT_WINDOW_MS });
    expect(clock.pending).toBe(0);
  });

  it('caps the keys: the one with the oldest line is dropped, its pending count written', () => {
    const { clock, lines, repeats } = limiter({ maxKeys: 3 });
    repeats.report('k0');
    repeats.report('k0');
    clock.advance(1);
    repeats.report('k1');
    repeats.report('k2');
    repeats.report('k1');
    expect(lines.map((line) => line.message)).toEqual(['k0', 'k1', 'k2']);
    clock.advance(1);
    repeats.report('k3');
    // k0 dropped (its one repeat written), k1 and k2 kept.
    expect(lines.slice(3)).toEqual([
      { message: 'k0', fields: { repeated: 1, sinceMs: 2 } },
      { message: 'k3', fields: {} },
    ]);
    repeats.report('k1');
    repeats.report('k2');
    expect(lines).toHaveLength(5);
    repeats.report('k0');
    expect(lines[5]).toEqual({ message: 'k1', fields: { repeated: 2, sinceMs: 1 } });
    expect(lines[6]).toEqual({ message: 'k0', fields: {} });
  });

  it('holds at most REPEAT_MAX_KEYS keys by default, whatever the number of distinct messages', () => {
    const { lines, repeats } = limiter();
    for (let i = 0; i < 5 * REPEAT_MAX_KEYS; i++) {
      repeats.report(`backend failure: timeout after ${i} ms`);
    }
    expect(lines).toHaveLength(5 * REPEAT_MAX_KEYS);
    // The last REPEAT_MAX_KEYS are still remembered (repeats counted), the ones before are not.
    repeats.report(`backend failure: timeout after ${5 * REPEAT_MAX_KEYS - 1} ms`);
    repeats.report(`backend failure: timeout after ${4 * REPEAT_MAX_KEYS + 1} ms`);
    expect(lines).toHaveLength(5 * REPEAT_MAX_KEYS);
    repeats.report(`backend failure: timeout after ${4 * REPEAT_MAX_KEYS - 1} ms`);
    expect(lines).toHaveLength(5 * REPEAT_MAX_KEYS + 1);
    // That dropped the oldest (no count pending); the next one dropped carries its count.
    repeats.report(`backend failure: timeout after ${4 * REPEAT_MAX_KEYS - 2} ms`);
    expect(lines.slice(-2).map((line) => line.fields)).toEqual([{ repeated: 1, sinceMs: 0 }, {}]);
  });

  it('close() writes the pending counts, stops the timer and forgets the keys', () => {
    const { clock, lines, repeats } = limiter();
    repeats.report('a', { reqId: '1' });
    repeats.report('a', { reqId: '2' });
    repeats.report('b', { reqId: '3' });
    clock.advance(500);
    expect(clock.pending).toBe(1);
    repeats.close();
    expect(clock.pending).toBe(0);
    expect(lines.slice(2)).toEqual([{ message: 'a', fields: { repeated: 1, sinceMs: 500 } }]);
    repeats.report('a', { reqId: '4' });
    expect(lines[3]).toEqual({ message: 'a', fields: { reqId: '4' } });
  });

  it("the real clock's timer does not keep the process alive, and its cancel clears it", () => {
    const setTimer = jest.spyOn(global, 'setTimeout');
    const fn = jest.fn();
    const cancel = realLimiterClock.after(60_000, fn);
    const timer = setTimer.mock.results[0].value as NodeJS.Timeout;
    setTimer.mockRestore();
    expect(timer.hasRef()).toBe(false);
    const clearTimer = jest.spyOn(global, 'clearTimeout');
    cancel();
    expect(clearTimer).toHaveBeenCalledWith(timer);
    clearTimer.mockRestore();
    expect(fn).not.toHaveBeenCalled();
  });
});
