import { Clock } from '../src/clock';
import { FetchLike, ResponseLike } from '../src/transport';

/** A clock that moves only when told; timers run in `advance`. */
export class FakeClock implements Clock {
  private t = 1_000_000;
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private ids = 0;

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): () => void {
    const id = ++this.ids;
    this.timers.push({ at: this.t + ms, fn, id });
    return () => {
      this.timers = this.timers.filter((x) => x.id !== id);
    };
  }

  get pendingTimers(): number {
    return this.timers.length;
  }

  advance(ms: number): void {
    const until = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) {
        break;
      }
      this.timers = this.timers.filter((x) => x !== due);
      this.t = Math.max(this.t, due.at);
      due.fn();
    }
    this.t = until;
  }
}

/** Lets pending promise callbacks run (no timers involved). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export type ServerMode = 'ok' | 'down' | '503' | 'hang' | 'manual';

export interface Call {
  server: string;
  method: string;
  path: string;
  count: number;
}

/**
 * An in-memory shardleaf: the lease endpoints (each key's counter is the "row"), the snowflake
 * batch route, and per-server failure modes. Several servers share one database, like the
 * real service instances.
 */
export class FakeServers {
  readonly calls: Call[] = [];
  readonly modes = new Map<string, ServerMode>();
  /** Queue app step: leases are rounded up to whole steps, as id_alloc does. */
  queueStep = 1;
  /** Largest queue index (max_limit_id) per shard: 410 above. */
  queueMaxIndex = 1n << 40n;
  /** The apps' max_limit_id reported in queue lease replies (0 = none); it also cuts the leases. */
  queueMaxLimitId = 0n;
  private readonly rows = new Map<string, bigint>();
  // Far above the queue and segment IDs of the tests, so all three can share one uniqueness check.
  private snowflakeNext = 1n << 60n;
  private readonly held: Array<() => void> = [];
  /** Apps and tags that exist (404 otherwise). */
  readonly apps = new Set<number>([1, 2]);
  readonly tags = new Set<string>(['orders', 'users']);
  /** Number formats (404 otherwise): each prints `<KEY>-<n>`. */
  readonly formats = new Set<string>(['ORD']);

  mode(server: string, mode: ServerMode): void {
    this.modes.set(server, mode);
  }

  /** Answers the requests held by servers in 'manual' mode. */
  release(): void {
    for (const go of this.held.splice(0)) {
      go();
    }
  }

  get heldCount(): number {
    return this.held.length;
  }

  readonly fetch: FetchLike = (url, init) => {
    const u = new URL(url);
    const server = `${u.protocol}//${u.host}`;
    const count = Number(u.searchParams.get('count'));
    this.calls.push({ server, method: init.method, path: u.pathname, count });
    const mode = this.modes.get(server) ?? 'ok';
    if (mode === 'down') {
      return Promise.reject(new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') }));
    }
    if (mode === '503') {
      return Promise.resolve(reply(503, { code: -109, error: 'BACKEND_UNAVAILABLE', message: 'a backend is unavailable' }));
    }
    if (mode === 'hang') {
      return new Promise<ResponseLike>(() => undefined);
    }
    if (mode === 'manual') {
      // The row update happens when the reply is released (as late as possible).
      return new Promise<ResponseLike>((resolve) => this.held.push(() => resolve(this.handle(init.method, u, count))));
    }
    return Promise.resolve(this.handle(init.method, u, count));
  };

  private handle(method: string, u: URL, count: number): ResponseLike {
    if (!Number.isInteger(count) || count < 1) {
      return reply(400, { code: -100, error: 'BAD_INPUT', message: 'count must be an integer' });
    }
    let m = /^\/api\/id\/(\d+)\/lease$/.exec(u.pathname);
    if (m && method === 'POST') {
      const appId = Number(m[1]);
      if (!this.apps.has(appId)) {
        return reply(404, { code: -2, error: 'QUEUE_APP_NOT_FOUND', message: `appId ${appId} is not configured` });
      }
      const shard = shardOfForFake(u.searchParams.get('gatePass') ?? '');
      const key = `q:${appId}:${shard}`;
      const max = this.rows.get(key) ?? 0n;
      let maxIndex = this.queueMaxIndex;
      if (this.queueMaxLimitId > 0n) {
        const byLimit = (this.queueMaxLimitId - BigInt((shard << 8) | appId)) >> 14n;
        maxIndex = byLimit < maxIndex ? byLimit : maxIndex;
      }
      if (max >= maxIndex) {
        return reply(410, { code: -5, error: 'QUEUE_EXHAUSTED', message: 'used up' });
      }
      const steps = BigInt(Math.ceil(count / this.queueStep));
      let to = max + steps * BigInt(this.queueStep);
      to = to < maxIndex ? to : maxIndex;
      this.rows.set(key, to);
      return reply(200, {
        appId,
        shard,
        from: String(max + 1n),
        to: String(to),
        count: Number(to - max),
        maxLimitId: String(this.queueMaxLimitId),
      });
    }
    m = /^\/api\/segment\/lease\/(.+)$/.exec(u.pathname);
    if (m && method === 'POST') {
      const tag = decodeURIComponent(m[1]);
      if (!this.tags.has(tag)) {
        return reply(404, { code: -2, error: 'SEGMENT_KEY_NOT_FOUND', message: `biz_tag '${tag}' is not in leaf_alloc` });
      }
      const key = `s:${tag}`;
      const max = (this.rows.get(key) ?? 1n) + BigInt(count);
      this.rows.set(key, max);
      return reply(200, { key: tag, from: String(max - BigInt(count)), to: String(max - 1n), count });
    }
    m = /^\/api\/number\/(.+)$/.exec(u.pathname);
    if (m && method === 'GET') {
      const key = decodeURIComponent(m[1]);
      if (!this.formats.has(key)) {
        return reply(404, { code: -300, error: 'NUMBER_FORMAT_NOT_FOUND', message: `no number format '${key}'` });
      }
      const next = this.rows.get(`n:${key}`) ?? 0n;
      this.rows.set(`n:${key}`, next + BigInt(count));
      return reply(200, { numbers: Array.from({ length: count }, (_, i) => `${key}-${next + BigInt(i) + 1n}`) });
    }
    m = /^\/api\/snowflake\/get\/(.+)$/.exec(u.pathname);
    if (m && method === 'GET') {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        ids.push(String(this.snowflakeNext++));
      }
      return reply(200, { ids });
    }
    return reply(404, { code: -103, error: 'ROUTE_NOT_FOUND', message: `no route ${method} ${u.pathname}` });
  }
}

/** Independent of the code under test: Java's hashCode and Math.abs % 64, written out again. */
function shardOfForFake(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) {
    h = (h * 31 + s.charCodeAt(i)) | 0;
  }
  const abs = h === -2147483648 ? h : Math.abs(h);
  const r = abs % 64;
  return r === 0 ? 0 : r;
}

function reply(status: number, body: unknown): ResponseLike {
  const text = JSON.stringify(body);
  return { status, text: () => Promise.resolve(text) };
}
