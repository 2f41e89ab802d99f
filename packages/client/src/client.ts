import { Clock, systemClock } from './clock';
import { ShardleafArgumentError, ShardleafClosedError, ShardleafError } from './errors';
import { IdBuffer, IdBufferView, Lease } from './id-buffer';
import { QUEUE_SHARD_COUNT, shardOf } from './java-hash';
import { toSafeNumber } from './safe-number';
import { FetchLike, ServerView, Transport } from './transport';

export interface ShardleafClientOptions {
  /** One base URL or several (round robin, failover), e.g. `http://127.0.0.1:8080`. */
  servers: string | readonly string[];
  /** Timeout of every HTTP call, ms (default 2000). */
  timeoutMs?: number;
  /** Fetch the next lease once this share of the current one is used, 0 < r <= 1 (default 0.8). */
  prefetchAt?: number;
  /** Size of the first queue/segment lease (default 1000). */
  initialLease?: number;
  /** Smallest queue/segment lease (default 100). */
  minLease?: number;
  /** Largest queue/segment lease (default 1,000,000; at most the server's 10,000,000). */
  maxLease?: number;
  /** A lease used up within this time makes the next one twice as big; one lasting twice as long, half (default 60,000 ms). */
  targetLeaseMs?: number;
  /**
   * A lease is dropped (its unused IDs become a gap) this long after it arrived, bounding how long
   * a range granted under an older max_limit_id can still be handed out (default: no bound).
   */
  leaseTtlMs?: number;
  /** Largest snowflake batch per call (default 1000, the server's maximum). */
  snowflakeBatch?: number;
  /** A failing server is skipped for backoffBaseMs × 2^(failures-1) ms, at most backoffMaxMs (defaults 100, 10,000). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Extra HTTP headers on every call. */
  headers?: Record<string, string>;
  /** Injected for tests: the HTTP function (default: Node's global fetch) and the clock. */
  fetch?: FetchLike;
  clock?: Clock;
}

/** A buffer of one key, for monitoring. */
export interface BufferView extends IdBufferView {
  generator: 'queue' | 'segment' | 'snowflake';
  key: string;
}

interface QueueLeaseBody {
  appId: number;
  shard: number;
  from: string;
  to: string;
  /** The app's max_limit_id now (decimal string, "0" = none); absent from servers before it was added. */
  maxLimitId?: string | null;
}

interface SegmentLeaseBody {
  from: string;
  to: string;
}

const INDEX_SHIFT = 14n;
const QUEUE_STRIDE = 1n << INDEX_SHIFT;
const MAX_APP_ID = 255;
/** The server's largest lease `count` (MAX_LEASE_COUNT in src/lease/lease-input.ts). */
const MAX_LEASE_COUNT = 10_000_000;
/** The server's largest snowflake batch. */
const MAX_SNOWFLAKE_BATCH = 1000;
/** The server's largest `count` of GET /api/number/{key}. */
const MAX_NUMBER_BATCH = 1000;

/**
 * IDs of a shardleaf service, handed out in this process from leased ranges: a double buffer per
 * (queue app, shard), per segment tag and per snowflake key. See docs/client.md.
 *
 * Every ID is returned once by this client, and two clients never share a lease (each lease is a
 * row update on the server). IDs left in a client's buffers when it stops are never handed out
 * (gaps). Queue and segment IDs of one buffer increase; across buffers and restarts they do not.
 */
export class ShardleafClient {
  private readonly transport: Transport;
  private readonly clock: Clock;
  private readonly queueBuffers = new Map<number, IdBuffer>();
  private readonly segmentBuffers = new Map<string, IdBuffer>();
  private readonly snowflakeBuffers = new Map<string, IdBuffer>();
  private readonly prefetchAt: number;
  private readonly initialLease: number;
  private readonly minLease: number;
  private readonly maxLease: number;
  private readonly targetLeaseMs: number;
  private readonly snowflakeBatch: number;
  private readonly retryDelayMs: number;
  private readonly leaseTtlMs: number | undefined;
  private closed = false;

  /** Throws a ShardleafArgumentError (a RangeError) naming the option when one is out of range. */
  constructor(options: ShardleafClientOptions) {
    const servers = typeof options.servers === 'string' ? [options.servers] : [...options.servers];
    this.clock = options.clock ?? systemClock;
    const backoffBaseMs = positive('backoffBaseMs', options.backoffBaseMs ?? 100);
    this.transport = new Transport({
      servers,
      timeoutMs: positive('timeoutMs', options.timeoutMs ?? 2000),
      backoffBaseMs,
      backoffMaxMs: positive('backoffMaxMs', options.backoffMaxMs ?? 10_000),
      clock: this.clock,
      fetch: options.fetch ?? ((url, init) => fetch(url, init)),
      headers: options.headers,
    });
    this.prefetchAt = options.prefetchAt ?? 0.8;
    // 1: the next lease is fetched when the last ID of the current one is taken.
    if (!(typeof this.prefetchAt === 'number' && this.prefetchAt > 0 && this.prefetchAt <= 1)) {
      throw new ShardleafArgumentError('prefetchAt', `prefetchAt must be a number in (0, 1], got ${options.prefetchAt}`);
    }
    this.minLease = leaseSize('minLease', options.minLease ?? 100);
    this.maxLease = leaseSize('maxLease', options.maxLease ?? 1_000_000);
    if (this.minLease > this.maxLease) {
      throw new ShardleafArgumentError('minLease', `minLease (${this.minLease}) must not be above maxLease (${this.maxLease})`);
    }
    this.initialLease = leaseSize('initialLease', options.initialLease ?? 1000);
    this.targetLeaseMs = positive('targetLeaseMs', options.targetLeaseMs ?? 60_000);
    this.snowflakeBatch = positive('snowflakeBatch', options.snowflakeBatch ?? MAX_SNOWFLAKE_BATCH);
    if (!Number.isInteger(this.snowflakeBatch) || this.snowflakeBatch > MAX_SNOWFLAKE_BATCH) {
      throw new ShardleafArgumentError('snowflakeBatch', `snowflakeBatch must be an integer 1..${MAX_SNOWFLAKE_BATCH}, got ${options.snowflakeBatch}`);
    }
    this.leaseTtlMs = options.leaseTtlMs === undefined ? undefined : positive('leaseTtlMs', options.leaseTtlMs);
    this.retryDelayMs = backoffBaseMs;
  }

  /**
   * A queue ID of `appId` for `gatePass` (the shard is computed here, as the server does).
   * Like every method that returns a promise, it never throws: bad input, a closed client and
   * server errors reject the promise.
   */
  queueId(appId: number, gatePass: string): Promise<bigint> {
    try {
      return takeOne(this.queueBuffer(appId, gatePass));
    } catch (err) {
      return rejected(err);
    }
  }

  /**
   * The next queue ID when one is buffered, without awaiting; else undefined (and a fetch starts,
   * unless the last one failed less than backoffBaseMs ago). Synchronous, so it THROWS (never
   * rejects): a ShardleafArgumentError on bad input, ShardleafClosedError after close(), and
   * once per failed fetch the server's refusal of it (a ShardleafError: 404 for an unknown app,
   * 410 for an exhausted shard…), so a caller that polls learns why it gets nothing.
   */
  tryQueueId(appId: number, gatePass: string): bigint | undefined {
    return this.queueBuffer(appId, gatePass).pollOne();
  }

  /**
   * Why the buffer of (appId, shard of gatePass) has nothing: the error of its last fetch when that
   * fetch failed and none succeeded since (a ShardleafError, or a ShardleafUnavailableError while
   * no server answers); undefined otherwise. Starts nothing.
   */
  lastQueueFailure(appId: number, gatePass: string): Error | undefined {
    return this.queueBuffer(appId, gatePass).lastFailure() ?? undefined;
  }

  queueIdBatch(appId: number, gatePass: string, n: number): Promise<bigint[]> {
    try {
      const size = count(n);
      return this.queueBuffer(appId, gatePass).take(size);
    } catch (err) {
      return rejected(err);
    }
  }

  async queueIdString(appId: number, gatePass: string): Promise<string> {
    return (await this.queueId(appId, gatePass)).toString();
  }

  async queueIdBatchStrings(appId: number, gatePass: string, n: number): Promise<string[]> {
    return (await this.queueIdBatch(appId, gatePass, n)).map(String);
  }

  /** A segment ID of `tag` (a leaf_alloc biz_tag). */
  segmentId(tag: string): Promise<bigint> {
    try {
      return takeOne(this.segmentBuffer(tag));
    } catch (err) {
      return rejected(err);
    }
  }

  /** Like tryQueueId: synchronous, throws on bad input, after close() and once per refused fetch. */
  trySegmentId(tag: string): bigint | undefined {
    return this.segmentBuffer(tag).pollOne();
  }

  /** Like lastQueueFailure, for the tag's buffer. */
  lastSegmentFailure(tag: string): Error | undefined {
    return this.segmentBuffer(tag).lastFailure() ?? undefined;
  }

  segmentIdBatch(tag: string, n: number): Promise<bigint[]> {
    try {
      const size = count(n);
      return this.segmentBuffer(tag).take(size);
    } catch (err) {
      return rejected(err);
    }
  }

  async segmentIdString(tag: string): Promise<string> {
    return (await this.segmentId(tag)).toString();
  }

  async segmentIdBatchStrings(tag: string, n: number): Promise<string[]> {
    return (await this.segmentIdBatch(tag, n)).map(String);
  }

  /**
   * A snowflake ID. Snowflake has no lease (a range of future IDs would need a worker id of its
   * own): the client buffers IDs the server issued in batches (`GET /api/snowflake/get/{key}?count=N`).
   */
  snowflakeId(key = 'default'): Promise<bigint> {
    try {
      return takeOne(this.snowflakeBuffer(key));
    } catch (err) {
      return rejected(err);
    }
  }

  snowflakeIdBatch(key: string, n: number): Promise<bigint[]> {
    try {
      const size = count(n);
      return this.snowflakeBuffer(key).take(size);
    } catch (err) {
      return rejected(err);
    }
  }

  async snowflakeIdString(key = 'default'): Promise<string> {
    return (await this.snowflakeId(key)).toString();
  }

  async snowflakeIdBatchStrings(key: string, n: number): Promise<string[]> {
    return (await this.snowflakeIdBatch(key, n)).map(String);
  }

  /**
   * A formatted business number of format `key` (GET /api/number/{key}), e.g. `ORD20261126000042`.
   * Not leased nor buffered: each number's date and period are decided by the server's database
   * when it is issued. A call that failed over after a timeout may have left a number unused (a gap).
   */
  async number(key: string): Promise<string> {
    return (await this.numbers(key, 1))[0];
  }

  /** `n` numbers of format `key`, in order, fetched in batches of at most 1000 per call. */
  async numbers(key: string, n: number): Promise<string[]> {
    if (this.closed) {
      throw new ShardleafClosedError();
    }
    if (typeof key !== 'string' || key.length === 0) {
      throw new ShardleafArgumentError('key', 'key must be a non-empty string');
    }
    const size = count(n);
    const out: string[] = [];
    while (out.length < size) {
      const batch = Math.min(MAX_NUMBER_BATCH, size - out.length);
      const body = await this.transport.request<{ numbers?: unknown }>('GET', `/api/number/${encodeURIComponent(key)}?count=${batch}`);
      const numbers = body.numbers;
      if (!Array.isArray(numbers) || numbers.length !== batch || !numbers.every((x) => typeof x === 'string')) {
        throw new Error(`the server answered ${JSON.stringify(body).slice(0, 200)} for ${batch} numbers of '${key}'`);
      }
      out.push(...numbers);
    }
    return out;
  }

  /**
   * The `number` forms (yitter's NextNumber): the ID as an exact JavaScript number. They reject
   * with a RangeError, never round, when an ID is above 2^53 - 1 (that ID is then a gap): use them
   * with SNOWFLAKE_LAYOUT=js-safe, or for queue and segment IDs known to stay below 2^53.
   */
  async queueIdNumber(appId: number, gatePass: string): Promise<number> {
    return toSafeNumber(await this.queueId(appId, gatePass));
  }

  async queueIdBatchNumbers(appId: number, gatePass: string, n: number): Promise<number[]> {
    return numbers(await this.queueIdBatch(appId, gatePass, n));
  }

  async segmentIdNumber(tag: string): Promise<number> {
    return toSafeNumber(await this.segmentId(tag));
  }

  async segmentIdBatchNumbers(tag: string, n: number): Promise<number[]> {
    return numbers(await this.segmentIdBatch(tag, n));
  }

  async snowflakeIdNumber(key = 'default'): Promise<number> {
    return toSafeNumber(await this.snowflakeId(key));
  }

  async snowflakeIdBatchNumbers(key: string, n: number): Promise<number[]> {
    return numbers(await this.snowflakeIdBatch(key, n));
  }

  buffers(): BufferView[] {
    const views: BufferView[] = [];
    for (const [k, b] of this.queueBuffers) {
      views.push({ generator: 'queue', key: `${Math.floor(k / QUEUE_SHARD_COUNT)}/${k % QUEUE_SHARD_COUNT}`, ...b.view() });
    }
    for (const [k, b] of this.segmentBuffers) {
      views.push({ generator: 'segment', key: k, ...b.view() });
    }
    for (const [k, b] of this.snowflakeBuffers) {
      views.push({ generator: 'snowflake', key: k, ...b.view() });
    }
    return views;
  }

  servers(): ServerView[] {
    return this.transport.servers();
  }

  /**
   * Stops all background work: fetches in flight are aborted, calls waiting for one fail with
   * ShardleafClosedError, and the IDs left in the buffers are dropped (gaps, never reused).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.transport.close();
    for (const map of [this.queueBuffers, this.segmentBuffers, this.snowflakeBuffers] as Array<Map<unknown, IdBuffer>>) {
      for (const buffer of map.values()) {
        buffer.close();
      }
    }
  }

  /** The buffer of (appId, shard of gatePass); input checked before any lookup. Throws. */
  private queueBuffer(appId: number, gatePass: string): IdBuffer {
    if (this.closed) {
      throw new ShardleafClosedError();
    }
    // Checked before the key is computed: 0.5 * 64 + shard would be another app's key.
    if (!Number.isInteger(appId) || appId < 0 || appId > MAX_APP_ID) {
      throw new ShardleafArgumentError('appId', `appId must be an integer 0..${MAX_APP_ID}, got ${appId}`);
    }
    if (typeof gatePass !== 'string' || gatePass.length === 0) {
      throw new ShardleafArgumentError('gatePass', 'gatePass must be a non-empty string');
    }
    const shard = shardOf(gatePass);
    const key = appId * QUEUE_SHARD_COUNT + shard;
    const buffer = this.queueBuffers.get(key);
    if (buffer !== undefined) {
      return buffer;
    }
    const low = BigInt((shard << 8) | appId);
    // Any gatePass of the shard selects it on the server; the first one seen is kept.
    const path = `/api/id/${appId}/lease?gatePass=${encodeURIComponent(gatePass)}&count=`;
    return this.add(
      this.queueBuffers,
      key,
      async (size): Promise<Lease> => {
        const body = await this.transport.request<QueueLeaseBody>('POST', path + String(size));
        if (body.appId !== appId || body.shard !== shard) {
          throw new Error(`the server leased app ${body.appId} shard ${body.shard} for app ${appId} shard ${shard}`);
        }
        const from = BigInt(body.from);
        const to = BigInt(body.to);
        const maxLimitId = body.maxLimitId === undefined || body.maxLimitId === null ? 0n : BigInt(body.maxLimitId);
        return {
          first: (from << INDEX_SHIFT) | low,
          stride: QUEUE_STRIDE,
          count: rangeCount(from, to),
          // 0 = no limit. The buffer cuts this lease and the ones it still holds at the limit.
          maxId: maxLimitId > 0n ? maxLimitId : undefined,
        };
      },
      undefined,
      // Exhausted: max_limit_id may have been lowered below what this buffer holds; hand out none of it.
      (err) => err instanceof ShardleafError && err.error === 'QUEUE_EXHAUSTED',
    );
  }

  private segmentBuffer(tag: string): IdBuffer {
    if (this.closed) {
      throw new ShardleafClosedError();
    }
    if (typeof tag !== 'string' || tag.length === 0) {
      throw new ShardleafArgumentError('tag', 'tag must be a non-empty string');
    }
    const buffer = this.segmentBuffers.get(tag);
    if (buffer !== undefined) {
      return buffer;
    }
    const path = `/api/segment/lease/${encodeURIComponent(tag)}?count=`;
    return this.add(this.segmentBuffers, tag, async (size): Promise<Lease> => {
      const body = await this.transport.request<SegmentLeaseBody>('POST', path + String(size));
      const from = BigInt(body.from);
      return { first: from, stride: 1n, count: rangeCount(from, BigInt(body.to)) };
    });
  }

  private snowflakeBuffer(key: string): IdBuffer {
    if (this.closed) {
      throw new ShardleafClosedError();
    }
    if (typeof key !== 'string' || key.length === 0) {
      throw new ShardleafArgumentError('key', 'key must be a non-empty string');
    }
    const buffer = this.snowflakeBuffers.get(key);
    if (buffer !== undefined) {
      return buffer;
    }
    const path = `/api/snowflake/get/${encodeURIComponent(key)}?count=`;
    const min = Math.min(this.minLease, this.snowflakeBatch);
    return this.add(
      this.snowflakeBuffers,
      key,
      async (size): Promise<Lease> => {
        const body = await this.transport.request<{ ids: string[] }>('GET', path + String(size));
        return { ids: body.ids.map((id) => BigInt(id)) };
      },
      { initialSize: Math.min(this.initialLease, this.snowflakeBatch), minSize: min, maxSize: this.snowflakeBatch },
    );
  }

  private add<K>(
    map: Map<K, IdBuffer>,
    key: K,
    fetcher: (size: number) => Promise<Lease>,
    sizes?: { initialSize: number; minSize: number; maxSize: number },
    dropHeldOn?: (err: Error) => boolean,
  ): IdBuffer {
    if (this.closed) {
      throw new ShardleafClosedError();
    }
    const buffer = new IdBuffer(fetcher, {
      prefetchAt: this.prefetchAt,
      initialSize: sizes?.initialSize ?? this.initialLease,
      minSize: sizes?.minSize ?? this.minLease,
      maxSize: sizes?.maxSize ?? this.maxLease,
      targetLeaseMs: this.targetLeaseMs,
      retryDelayMs: this.retryDelayMs,
      leaseTtlMs: this.leaseTtlMs,
      dropHeldOn,
      clock: this.clock,
    });
    map.set(key, buffer);
    return buffer;
  }
}

function rangeCount(from: bigint, to: bigint): number {
  if (to < from) {
    throw new Error(`the server answered an empty range ${from}..${to}`);
  }
  // A lease is at most 10,000,000 IDs plus a step: far below 2^53.
  return Number(to - from + 1n);
}

/** Every ID of a batch as a number, or a RangeError when any of them is above 2^53 - 1. */
function numbers(ids: bigint[]): number[] {
  return ids.map(toSafeNumber);
}

/** A rejected promise in place of a synchronous throw (bad input, closed client). */
function rejected(err: unknown): Promise<never> {
  return Promise.reject(err instanceof Error ? err : new Error(String(err)));
}

/** One ID of `buffer`: at once when one is buffered, else after a fetch. */
function takeOne(buffer: IdBuffer): Promise<bigint> {
  const id = buffer.tryTakeOne();
  return id !== undefined ? Promise.resolve(id) : buffer.takeOne();
}

function count(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new ShardleafArgumentError('n', `n must be a positive integer, got ${n}`);
  }
  return n;
}

/** A lease size option: an integer 1..MAX_LEASE_COUNT (a bigger lease would be refused with 400 forever). */
function leaseSize(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > MAX_LEASE_COUNT) {
    throw new ShardleafArgumentError(name, `${name} must be an integer 1..${MAX_LEASE_COUNT} (the server's largest lease), got ${value}`);
  }
  return value;
}

function positive(name: string, value: number): number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
    throw new ShardleafArgumentError(name, `${name} must be a positive number, got ${value}`);
  }
  return value;
}
