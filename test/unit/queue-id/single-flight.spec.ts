import { SingleFlight } from '../../../src/queue-id/core/single-flight';

describe('SingleFlight', () => {
  it('runs one per key; callers meanwhile wait for it and then do their joined work', async () => {
    const flights = new SingleFlight();
    let release: (v: string) => void = () => undefined;
    const runs: string[] = [];
    const first = flights.run('a', () => new Promise<string>((resolve) => (release = resolve)), async () => 'joined-never');
    const second = flights.run('a', async () => 'run-never', async () => 'joined');
    const other = flights.run('b', async () => {
      runs.push('b');
      return 'b';
    }, async () => 'joined-never');
    expect(await other).toBe('b');
    // 'b' is done: the next caller for it runs its own.
    expect(await flights.run('b', async () => 'b again', async () => 'joined-never')).toBe('b again');
    release('first');
    expect(await first).toBe('first');
    expect(await second).toBe('joined');
    expect(runs).toEqual(['b']);
    // 'a' is done too.
    expect(await flights.run('a', async () => 'a again', async () => 'joined-never')).toBe('a again');
  });

  it('a failed run fails the callers that waited for it; the next caller runs again', async () => {
    const flights = new SingleFlight();
    let fail: (err: Error) => void = () => undefined;
    const first = flights.run('a', () => new Promise<string>((_, reject) => (fail = reject)), async () => 'x');
    const waiting = flights.run('a', async () => 'x', async () => 'joined');
    fail(new Error('backend down'));
    await expect(first).rejects.toThrow('backend down');
    await expect(waiting).rejects.toThrow('backend down');
    expect(await flights.run('a', async () => 'again', async () => 'x')).toBe('again');
  });
});
