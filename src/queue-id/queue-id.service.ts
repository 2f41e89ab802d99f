import { Injectable, Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { AppRegistry, ShardConfig } from './core/app-registry';
import { acceptEntries, batchBody, queueIdOf, queueIdString } from './core/queue-batch';
import { lowNumber, shardOf } from './core/queue-id-layout';
import { PoppedIndexes, QueueLists } from './core/queue-lists';
import { RETRY_TIME } from './core/refill-policy';
import { AppRegistrySync } from './app-registry-sync.service';
import { BackgroundRefills } from './refill/background-refills';
import { OnDemandTake } from './refill/on-demand-take';
import { RequestPops } from './request-pops';

/**
 * The request path: gatePass → shard, one LPOP (with a count for batches); a short list is
 * refilled now, under the shard's lock, at most RETRY_TIME times (OnDemandTake). With refill-ahead
 * on (QUEUE_REFILL_AHEAD) the pop also reads the list's length (RequestPops), and a pop that leaves
 * it at or below the shard's threshold starts one background refill (BackgroundRefills). The lists
 * are behind the QueueLists port (core/queue-lists.ts): this service never talks to Redis itself.
 */
@Injectable()
export class QueueIdService {
  private readonly logger = new Logger(QueueIdService.name);

  constructor(
    private readonly registry: AppRegistry,
    private readonly registrySync: AppRegistrySync,
    private readonly pops: RequestPops,
    private readonly demand: OnDemandTake,
    private readonly background: BackgroundRefills,
    private readonly lists: QueueLists,
  ) {}

  /** `count` IDs for (appId, gatePass), all from the gatePass's shard. */
  async get(appId: number, gatePass: string, count: number): Promise<bigint[]> {
    const shardId = shardOf(gatePass);
    // The common case needs no await: the app and shard are in the registry.
    const shard = this.knownShard(appId, shardId) ?? (await this.resolveShard(appId, shardId));
    const indexes = await this.takeIndexes(appId, shardId, shard, count);
    return indexes.map((index) => queueIdOf(index, shardId, appId));
  }

  /**
   * One ID as its decimal string (the single get), the same ID `get(appId, gatePass, 1)` gives.
   * The common case — the shard in the registry, pops not confirmed by replicas, a valid index
   * popped (RequestPops.popOneIndex: plain, or reading the length when the budget is spent) — is
   * one pop and one continuation; anything else goes the general way, from wherever the common
   * case left it. On a standalone Redis the pop is `LPOP key 1` (+ `LLEN key`) on the pop
   * connection, read straight into an index (pop-connection.ts): no ioredis command, pipeline or
   * Buffer per request.
   */
  getOneText(appId: number, gatePass: string): Promise<string> {
    const shardId = shardOf(gatePass);
    const shard = this.knownShard(appId, shardId);
    let popped: Promise<PoppedIndexes> | null;
    try {
      popped = shard !== undefined && !this.lists.confirmsPops ? this.pops.popOneIndex({ appId, shardId }, shard.step, shard.maxIndex) : null;
    } catch (err) {
      // A client that throws instead of rejecting (ioredis' Cluster pipelining with no node for a slot).
      return Promise.reject(this.backendError(err));
    }
    if (popped === null) {
      return this.get(appId, gatePass, 1).then(firstText);
    }
    return popped.then(
      (result) => {
        if (result.indexes.length === 1) {
          if (result.length >= 0) {
            // A reading pop: one that left the list low starts one background refill.
            this.background.afterPop({ appId, shardId }, shard!.step, result.length);
          }
          return queueIdString(result.indexes[0], lowNumber(appId, shardId), shardId, appId);
        }
        return this.afterOddPop(result, appId, shardId, shard!).then(firstText);
      },
      (err: unknown) => {
        throw this.backendError(err);
      },
    );
  }

  /**
   * The common case's pop found the list empty, or its entry was dropped (malformed, or above the
   * shard's limit: exhausted): on as `get`.
   */
  private afterOddPop(popped: PoppedIndexes, appId: number, shardId: number, shard: ShardConfig): Promise<bigint[]> {
    if (popped.length < 0 && !popped.overLimit && popped.malformed === 0) {
      this.pops.poppedNothing({ appId, shardId });
    }
    this.logMalformed(popped.malformed, appId, shardId);
    return this.finishTake(appId, shardId, shard, 1, [], popped.overLimit, -1).then((indexes) =>
      indexes.map((index) => queueIdOf(index, shardId, appId)),
    );
  }

  /**
   * A batch as its JSON body `{"ids":["…",…]}`: the same IDs in the same order as `get`, written
   * from the digits (core/queue-batch.ts) instead of bigint → string → JSON.stringify.
   */
  async getBatchJson(appId: number, gatePass: string, count: number): Promise<Buffer> {
    const shardId = shardOf(gatePass);
    const shard = this.knownShard(appId, shardId) ?? (await this.resolveShard(appId, shardId));
    const indexes = await this.takeIndexes(appId, shardId, shard, count);
    return batchBody(indexes, shardId, appId);
  }

  private knownShard(appId: number, shardId: number): ShardConfig | undefined {
    return this.registry.isLoaded ? this.registry.get(appId)?.shards.get(shardId) : undefined;
  }

  private async resolveShard(appId: number, shardId: number): Promise<ShardConfig> {
    let app = this.registry.get(appId);
    if (!app || !this.registry.isLoaded) {
      await this.guardBackend(() => this.registrySync.reloadOnMiss());
      app = this.registry.get(appId);
    }
    if (!this.registry.isLoaded) {
      throw new IdGenError(ErrorKind.QueueNotInitialised, 'the queue ID generator has not loaded id_alloc yet');
    }
    if (!app) {
      throw new IdGenError(ErrorKind.QueueAppNotFound, `appId ${appId} is not configured`);
    }
    const shard = app.shards.get(shardId);
    if (!shard) {
      throw new IdGenError(ErrorKind.QueueShardNotFound, `appId ${appId} has no shard ${shardId}`);
    }
    return shard;
  }

  /** The indexes of `count` IDs (numbers: an accepted index is ≤ MAX_INDEX < 2^49, exact). */
  private async takeIndexes(appId: number, shardId: number, shard: ShardConfig, count: number): Promise<number[]> {
    const lists = this.lists;
    let out: number[] = [];
    // The list's length after the pop (refill-ahead only; -1 = not read).
    let length: number;
    let exhausted: boolean;
    try {
      if (lists.confirmsPops) {
        // REDIS_WAIT_REPLICAS: the pop (and LLEN) and its WAIT in one round trip on one connection.
        let popped: Uint8Array[];
        ({ entries: popped, length } = await lists.popConfirmed(appId, shardId, count, this.pops.aheadEnabled));
        exhausted = this.accept(popped, shard, out, appId, shardId);
      } else if (count > 1) {
        // A batch: a plain `LPOP key n` (and LLEN with refill ahead; no script: popping inside Lua
        // costs Redis 5–9× more CPU per entry), read straight into indexes (QueueLists.popIndexes).
        const popped = this.pops.aheadEnabled
          ? await this.pops.popReadingLength({ appId, shardId }, shard.step, count, shard.maxIndex)
          : await lists.popIndexes(appId, shardId, count, shard.maxIndex, false);
        out = popped.indexes;
        length = popped.length;
        exhausted = popped.overLimit;
        this.logMalformed(popped.malformed, appId, shardId);
      } else {
        // A single get (or count=1) pops plainly while the shard's length-read budget lasts, else
        // reads the length with it (RequestPops.popOneIndex).
        const popped = await this.pops.popOneIndex({ appId, shardId }, shard.step, shard.maxIndex);
        out = popped.indexes;
        length = popped.length;
        exhausted = popped.overLimit;
        this.logMalformed(popped.malformed, appId, shardId);
        if (out.length === 0 && length < 0 && !exhausted && popped.malformed === 0) {
          this.pops.poppedNothing({ appId, shardId });
        }
      }
    } catch (err) {
      throw this.backendError(err);
    }
    return this.finishTake(appId, shardId, shard, count, out, exhausted, length);
  }

  /**
   * After the request's own pop: `out` holds the indexes it gave, `length` the list's length it
   * read (-1: not read). Starts a background refill when that left the list low; refills on demand
   * what is missing.
   */
  private async finishTake(
    appId: number,
    shardId: number,
    shard: ShardConfig,
    count: number,
    out: number[],
    exhausted: boolean,
    length: number,
  ): Promise<number[]> {
    const lists = this.lists;
    if (length >= 0 && out.length === count) {
      // Refill ahead: a pop that left the list low starts one background refill; this request goes on.
      this.background.afterPop({ appId, shardId }, shard.step, length);
    }
    // Pops of the on-demand refill below are confirmed at the end, on the connection of this epoch.
    const demandMark = out.length < count && lists.confirmsPops ? lists.confirmMark() : 0;
    let demanded = false;
    for (let attempt = 0; out.length < count && !exhausted && attempt < RETRY_TIME; attempt++) {
      demanded = true;
      const result = await this.guardBackend(() => this.demand.take({ appId, shardId }, count - out.length));
      if (result.status === 'missing') {
        throw new IdGenError(ErrorKind.QueueShardNotFound, `appId ${appId} has no shard ${shardId} any more`);
      }
      exhausted = this.accept(result.indexes, shard, out, appId, shardId) || result.status === 'exhausted';
      if (result.status === 'limited') {
        // A stored limit that outlived a raise would refuse the next allocation too: none is made.
        break;
      }
    }
    if (out.length === count) {
      // REDIS_WAIT_REPLICAS: unconfirmed pops are dropped (a gap), never returned.
      if (demanded && lists.confirmsPops) {
        await this.guardBackend(() => lists.confirmPops(appId, shardId, demandMark));
      }
      return out;
    }
    // Indexes taken but not returned are gaps: never handed out again.
    if (exhausted) {
      throw new IdGenError(
        ErrorKind.QueueExhausted,
        `appId ${appId} shard ${shardId} has used up its ID space (max_limit_id); raise max_limit_id to continue`,
      );
    }
    throw new IdGenError(ErrorKind.QueueEmpty, `the queue of appId ${appId} shard ${shardId} is empty; retry later`);
  }

  /**
   * Appends valid indexes to `out` (core/queue-batch.ts: malformed entries and entries above the
   * shard's limit dropped); true when one was above the limit (the shard is now exhausted).
   */
  private accept(
    raw: ReadonlyArray<string | Uint8Array>,
    shard: ShardConfig,
    out: number[],
    appId: number,
    shardId: number,
  ): boolean {
    const { overLimit, malformed } = acceptEntries(raw, shard.maxIndex, out);
    this.logMalformed(malformed, appId, shardId);
    return overLimit;
  }

  private logMalformed(malformed: number, appId: number, shardId: number): void {
    for (let i = 0; i < malformed; i++) {
      this.logger.warn(`dropped a malformed entry from the list of app ${appId} shard ${shardId}`);
    }
  }

  /** Redis or MySQL failing under a request is a 503, not a 500. */
  private async guardBackend<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.backendError(err);
    }
  }

  private backendError(err: unknown): IdGenError {
    if (err instanceof IdGenError) {
      return err;
    }
    // Logged when sent, with the request id: once per text per 10 s, the repeats counted (common/error.filter.ts, error-log.ts).
    return new IdGenError(ErrorKind.BackendUnavailable, 'a backend (Redis or MySQL) is unavailable; retry later', { cause: err });
  }
}

function firstText(ids: bigint[]): string {
  return ids[0].toString();
}
