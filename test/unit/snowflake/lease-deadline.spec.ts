import { LeaseDeadline } from '../../../src/snowflake/core/lease-deadline';

class FakeMonotonic {
  constructor(public time = 1000) {}
  now(): number {
    return this.time;
  }
}

describe('LeaseDeadline', () => {
  it('is not held before the first success', () => {
    const deadline = new LeaseDeadline(10_000, 2_000, new FakeMonotonic());
    expect(deadline.held()).toBe(false);
    expect(deadline.remainingMs()).toBe(Number.NEGATIVE_INFINITY);
  });

  it('counts ttl - margin from the moment BEFORE the renewal was sent, not from its reply', () => {
    const clock = new FakeMonotonic(1000);
    const deadline = new LeaseDeadline(10_000, 2_000, clock);
    const sentAt = deadline.stamp();
    clock.time = 1500; // the reply took 500 ms
    deadline.extend(sentAt);
    expect(deadline.remainingMs()).toBe(7_500);
    clock.time = 1000 + 8_000 - 1;
    expect(deadline.held()).toBe(true);
    clock.time = 1000 + 8_000;
    expect(deadline.held()).toBe(false);
  });

  it('a process paused past the deadline refuses as soon as it runs again, whatever reply arrives then', () => {
    const clock = new FakeMonotonic(0);
    const deadline = new LeaseDeadline(3_000, 600, clock);
    deadline.extend(deadline.stamp());
    const sentAt = deadline.stamp(); // a renewal is sent, then the process is stopped (SIGSTOP)
    clock.time += 10_000; // the monotonic clock goes on while stopped
    expect(deadline.held()).toBe(false); // before the reply is read
    deadline.extend(sentAt); // the renewal's "ok" read late still counts from when it was sent
    expect(deadline.held()).toBe(false);
  });

  it('never moves back, and drop ends it at once', () => {
    const clock = new FakeMonotonic(0);
    const deadline = new LeaseDeadline(1_000, 100, clock);
    deadline.extend(500);
    deadline.extend(100);
    expect(deadline.remainingMs()).toBe(1_400);
    deadline.drop();
    expect(deadline.held()).toBe(false);
  });

  it('refuses a margin not below the TTL', () => {
    expect(() => new LeaseDeadline(1_000, 1_000, new FakeMonotonic())).toThrow(RangeError);
    expect(() => new LeaseDeadline(1_000, -1, new FakeMonotonic())).toThrow(RangeError);
  });
});
