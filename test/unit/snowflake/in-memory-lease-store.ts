import { ClaimRequest, LeaseClaim, LeaseHolder, RenewOutcome, WorkerLeaseStore } from '../../../src/snowflake/core/worker-lease-store';

interface Entry {
  owner?: string;
  expires?: number;
  identity?: string;
  recorded?: number;
}

/** What a Redis snapshot of the lease hash holds. */
export interface LeaseSnapshot {
  entries: Map<number, Entry>;
  run: string | null;
  since: number;
}

/**
 * The Redis scripts' semantics in memory (redis-lease-scripts.ts), epochs included; `serverNow`
 * is the store's own clock, `serverRun` the run_id of the server process serving it.
 */
export class InMemoryLeaseStore implements WorkerLeaseStore {
  readonly description = 'in-memory leases';
  entries = new Map<number, Entry>();
  /** The run_id recorded in the hash; null: no hash yet (a fresh or emptied Redis). */
  run: string | null = null;
  /** Store time from which claims are served. */
  since = 0;
  serverRun = 'run-1';
  /** How far a taking-over server's clock may be behind (the registry's margin in production). */
  skewMs = 0;
  /** Whether the replicas required confirm claims and renewals (REDIS_WAIT_REPLICAS). */
  replicasConfirm = true;
  /** When set, every call waits for it (a frozen store). */
  frozen: Promise<void> | null = null;
  calls = 0;

  constructor(public serverNow: () => number) {}

  /** The hash as it is now (a SAVE). */
  snapshot(): LeaseSnapshot {
    return { entries: new Map([...this.entries].map(([id, e]) => [id, { ...e }])), run: this.run, since: this.since };
  }

  /** A new server process (new run_id) that loaded `snapshot` (null: started empty). */
  restartFrom(snapshot: LeaseSnapshot | null, run: string): void {
    this.entries = snapshot ? new Map([...snapshot.entries].map(([id, e]) => [id, { ...e }])) : new Map();
    this.run = snapshot?.run ?? null;
    this.since = snapshot?.since ?? 0;
    this.serverRun = run;
  }

  private async gate(): Promise<void> {
    this.calls++;
    if (this.frozen) {
      await this.frozen;
    }
  }

  /** The scripts' prelude: a hash of another server process starts a new epoch. */
  private epoch(now: number, ttlMs: number): void {
    if (this.run === this.serverRun) {
      return;
    }
    for (const [id, e] of this.entries) {
      if ((e.expires ?? 0) <= now + this.skewMs) {
        this.entries.set(id, { recorded: e.recorded });
      }
    }
    this.run = this.serverRun;
    this.since = Math.max(this.since, now + ttlMs);
  }

  async claim(r: ClaimRequest): Promise<LeaseClaim> {
    await this.gate();
    const now = this.serverNow();
    this.epoch(now, r.ttlMs);
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
          return { kind: 'claimed', workerId: i, floor, confirmed: this.replicasConfirm };
        }
        minAhead = minAhead === null ? floor : Math.min(minAhead, floor);
      }
    }
    return minAhead === null ? { kind: 'none-free' } : { kind: 'ahead', floor: minAhead };
  }

  async renew(workerId: number, owner: string, ttlMs: number, until: number): Promise<RenewOutcome> {
    await this.gate();
    const now = this.serverNow();
    this.epoch(now, ttlMs);
    const e = this.entries.get(workerId);
    if (e?.owner !== owner) {
      return 'lost';
    }
    e.expires = now + ttlMs;
    e.recorded = Math.max(e.recorded ?? 0, until);
    return this.replicasConfirm ? 'renewed' : 'unconfirmed';
  }

  async release(workerId: number, owner: string, maxTimestamp: number): Promise<boolean> {
    await this.gate();
    const e = this.entries.get(workerId);
    if (this.run !== this.serverRun || e?.owner !== owner) {
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
