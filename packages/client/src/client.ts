import { Clock } from './clock';
import { ClientSettings, ShardleafClientOptions, count, nonEmpty, resolveOptions } from './client-options';
import { ShardleafArgumentError, ShardleafClosedError } from './errors';
import { IdBuffer, IdBufferView, LeaseFetcher } from './id-buffer';
import { IdForms } from './id-forms';
import { QUEUE_SHARD_COUNT, shardOf } from './java-hash';
import { queueLeaseRevoked, queueLeases, segmentLeases, snowflakeBatches } from './lease-fetchers';
import { ServerView, Transport } from './transport';

export type { ShardleafClientOptions } from './client-options';

/** A buffer of one key, for monitoring. */
export interface BufferView extends IdBufferView {
  generator: 'queue' | 'segment' | 'snowflake';
  key: string;
}

const MAX_APP_ID = 255;
/** No app (the remembered pair after close()): a small integer, so the field holds one kind of number. */
const NO_APP_ID = -1;
/** The server's largest `count` of GET /api/number/{key}. */
const MAX_NUMBER_BATCH = 1000;

/**
 * IDs of a shardleaf service, handed out in this process from leased ranges: a double buffer per
 * (queue app, shard), per segment tag and per snowflake key. See docs/client.md. The string and
 * number forms of each method are in id-forms.ts, the options in client-options.ts.
 *
 * Every ID is returned once by this client, and two clients never share a lease (each lease is a
 * row update on the server). IDs left in a client's buffers when it stops are never handed out
 * (gaps). Queue and segment IDs of one buffer increase; across buffers and restarts they do not.
 */
export class ShardleafClient extends IdForms {
  private readonly settings: ClientSettings;
  private readonly transport: Transport;
  private readonly clock: Clock;
  private readonly queueBuffers = new Map<number, IdBuffer>();
  private readonly segmentBuffers = new Map<string, IdBuffer>();
  private readonly snowflakeBuffers = new Map<string, IdBuffer>();
  private closed = false;
  /**
   * The queue buffer of the last (appId, gatePass) looked up, found again without hashing the
   * gatePass or a Map lookup when a caller asks for the same pair (the common case: one service,
   * one app, a few gatePasses). The pair was checked when it was stored; close() clears it.
   */
  private lastQueueAppId = NO_APP_ID;
  private lastQueueGatePass = '';
  private lastQueueBuffer: IdBuffer | null = null;

  /** Throws a ShardleafArgumentError (a RangeError) naming the option when one is out of range. */
  constructor(options: ShardleafClientOptions) {
    super();
    this.settings = resolveOptions(options);
    this.clock = this.settings.clock;
    this.transport = new Transport(this.settings.transport);
  }

  /**
   * A queue ID of `appId` for `gatePass` (the shard is computed here, as the server does).
   * Like every method that returns a promise, it never throws: bad input, a closed client and
   * server errors reject the promise.
   */
  async queueId(appId: number, gatePass: string): Promise<bigint> {
    // async: an ID at hand is returned as from an async function (fewer instructions per call than
    // Promise.resolve), and what the buffer lookup throws rejects the promise.
    const buffer = appId === this.lastQueueAppId && gatePass === this.lastQueueGatePass ? this.lastQueueBuffer! : this.queueBuffer(appId, gatePass);
    const id = buffer.tryTakeOne();
    return id !== undefined ? id : buffer.takeOne();
  }

  /**
   * The next queue ID when one is buffered, without awaiting; else undefined (and a fetch starts,
   * unless the last one failed less than backoffBaseMs ago). Synchronous, so it THROWS (never
   * rejects): a ShardleafArgumentError on bad input, ShardleafClosedError after close(), and
   * once per failed fetch the server's refusal of it (a ShardleafError: 404 for an unknown app,
   * 410 for an exhausted shard…), so a caller that polls learns why it gets nothing.
   */
  tryQueueId(appId: number, gatePass: string): bigint | undefined {
    const buffer = appId === this.lastQueueAppId && gatePass === this.lastQueueGatePass ? this.lastQueueBuffer! : this.queueBuffer(appId, gatePass);
    return buffer.pollOne();
  }

  /**
   * Why the buffer of (appId, shard of gatePass) has nothing: the error of its last fetch when that
   * fetch failed and none succeeded since (a ShardleafError, or a ShardleafUnavailableError while
   * no server answers); undefined otherwise, and for a buffer this client never made (bad input
   * included). Only looks: it creates no buffer, starts nothing, throws nothing (after close()
   * too), and does not take the error try* throws once.
   */
  lastQueueFailure(appId: number, gatePass: string): Error | undefined {
    if (!validAppId(appId) || typeof gatePass !== 'string' || gatePass.length === 0) {
      return undefined;
    }
    return this.queueBuffers.get(appId * QUEUE_SHARD_COUNT + shardOf(gatePass))?.lastFailure() ?? undefined;
  }

  queueIdBatch(appId: number, gatePass: string, n: number): Promise<bigint[]> {
    try {
      const size = count(n);
      return this.queueBuffer(appId, gatePass).take(size);
    } catch (err) {
      return rejected(err);
    }
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

  /** Like lastQueueFailure, for the tag's buffer: only looks. */
  lastSegmentFailure(tag: string): Error | undefined {
    return this.segmentBuffers.get(tag)?.lastFailure() ?? undefined;
  }

  segmentIdBatch(tag: string, n: number): Promise<bigint[]> {
    try {
      const size = count(n);
      return this.segmentBuffer(tag).take(size);
    } catch (err) {
      return rejected(err);
    }
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
    nonEmpty('key', key);
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
    this.lastQueueAppId = NO_APP_ID;
    this.lastQueueBuffer = null;
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
    if (!validAppId(appId)) {
      throw new ShardleafArgumentError('appId', `appId must be an integer 0..${MAX_APP_ID}, got ${appId}`);
    }
    nonEmpty('gatePass', gatePass);
    const shard = shardOf(gatePass);
    const key = appId * QUEUE_SHARD_COUNT + shard;
    const buffer =
      this.queueBuffers.get(key) ?? this.add(this.queueBuffers, key, queueLeases(this.transport, appId, shard, gatePass), queueLeaseRevoked);
    this.lastQueueAppId = appId;
    this.lastQueueGatePass = gatePass;
    this.lastQueueBuffer = buffer;
    return buffer;
  }

  private segmentBuffer(tag: string): IdBuffer {
    if (this.closed) {
      throw new ShardleafClosedError();
    }
    nonEmpty('tag', tag);
    return this.segmentBuffers.get(tag) ?? this.add(this.segmentBuffers, tag, segmentLeases(this.transport, tag));
  }

  private snowflakeBuffer(key: string): IdBuffer {
    if (this.closed) {
      throw new ShardleafClosedError();
    }
    nonEmpty('key', key);
    const buffer = this.snowflakeBuffers.get(key);
    if (buffer !== undefined) {
      return buffer;
    }
    const { initialLease, minLease, snowflakeBatch } = this.settings;
    return this.add(this.snowflakeBuffers, key, snowflakeBatches(this.transport, key), undefined, {
      initialSize: Math.min(initialLease, snowflakeBatch),
      minSize: Math.min(minLease, snowflakeBatch),
      maxSize: snowflakeBatch,
    });
  }

  private add<K>(
    map: Map<K, IdBuffer>,
    key: K,
    fetcher: LeaseFetcher,
    dropHeldOn?: (err: Error) => boolean,
    sizes?: { initialSize: number; minSize: number; maxSize: number },
  ): IdBuffer {
    const s = this.settings;
    const buffer = new IdBuffer(fetcher, {
      prefetchAt: s.prefetchAt,
      initialSize: sizes?.initialSize ?? s.initialLease,
      minSize: sizes?.minSize ?? s.minLease,
      maxSize: sizes?.maxSize ?? s.maxLease,
      targetLeaseMs: s.targetLeaseMs,
      retryDelayMs: s.retryDelayMs,
      leaseTtlMs: s.leaseTtlMs,
      dropHeldOn,
      clock: this.clock,
    });
    map.set(key, buffer);
    return buffer;
  }
}

function validAppId(appId: number): boolean {
  return Number.isInteger(appId) && appId >= 0 && appId <= MAX_APP_ID;
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
