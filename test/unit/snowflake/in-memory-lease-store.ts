import { ClaimRequest, LeaseClaim, LeaseHolder, WorkerLeaseStore } from '../../../src/snowflake/core/worker-lease-store';

interface Entry {
  owner?: string;
  expires?: number;
  identity?: string;
  recorded?: number;
}

/** The Redis scripts' semantics in memory; `serverNow` is the store's own clock. */
export class InMemoryLeaseStore implements WorkerLeaseStore {
  readonly description = 'in-memory leases';
  readonly entries = new Map<number, Entry>();
  /** Store time from which claims are served; null: no hash yet (a fresh or emptied Redis). */
  since: number | null = null;
  /** When set, every call waits for it (a frozen store). */
  frozen: Promise<void> | null = null;
  calls = 0;

  constructor(public serverNow: () => number) {}

  private async gate(): Promise<void> {
    this.calls++;
    if (this.frozen) {
      await this.frozen;
    }
  }

  async claim(r: ClaimRequest): Promise<LeaseClaim> {
    await this.gate();
    const now = this.serverNow();
    if (this.since === null) {
      this.since = now + r.ttlMs;
      return { kind: 'wait', waitMs: r.ttlMs };
    }
    if (now < this.since) {
      return { kind: 'wait', waitMs: this.since - now };
    }
    let minAhead: number | null = null;
    for (let i = 0; i <= r.maxWorkerId; i++) {
      const e = this.entries.get(i) ?? {};
      if ((e.expires ?? 0) <= now) {
        const floor = e.recorded ?? 0;
        if (floor <= r.now + r.allowanceMs) {
          this.entries.set(i, { ...e, owner: r.owner, expires: now + r.ttlMs, identity: r.identity });
          return { kind: 'claimed', workerId: i, floor };
        }
        minAhead = minAhead === null ? floor : Math.min(minAhead, floor);
      }
    }
    return minAhead === null ? { kind: 'none-free' } : { kind: 'ahead', floor: minAhead };
  }

  async renew(workerId: number, owner: string, ttlMs: number, until: number): Promise<boolean> {
    await this.gate();
    const e = this.entries.get(workerId);
    if (e?.owner !== owner) {
      return false;
    }
    e.expires = this.serverNow() + ttlMs;
    e.recorded = Math.max(e.recorded ?? 0, until);
    return true;
  }

  async release(workerId: number, owner: string, maxTimestamp: number): Promise<boolean> {
    await this.gate();
    const e = this.entries.get(workerId);
    if (e?.owner !== owner) {
      return false;
    }
    this.entries.set(workerId, { recorded: maxTimestamp });
    return true;
  }

  async holders(since: number): Promise<LeaseHolder[]> {
    await this.gate();
    return [...this.entries]
      .filter(([, e]) => e.identity !== undefined && (e.recorded ?? 0) >= since)
      .map(([workerId, e]) => ({ workerId, identity: e.identity as string, recordedUntil: e.recorded ?? 0 }));
  }

  async close(): Promise<void> {}
}
