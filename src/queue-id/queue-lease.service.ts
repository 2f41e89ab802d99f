import { Injectable } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { LeaseMonitor } from '../lease/lease-monitor';
import { shardOf } from './core/queue-id-layout';
import { QueueKeys } from './core/queue-keys';
import { QueueLists } from './core/queue-lists';
import { IdAllocRepository } from './id-alloc.repository';
import { RefillMonitor } from './refill-monitor';
import { SegmentClaims } from './refill/segment-claims';

/** Allocations of one lease: a range refused by the marker moves the row past it, so the second lands above. */
const ATTEMPTS = 2;

/** A run of queue indexes owned by one caller: IDs are `index << 14 | shard << 8 | appId`. */
export interface QueueLease {
  appId: number;
  shard: number;
  /** First index, inclusive. */
  from: bigint;
  /** Last index, inclusive; never above the shard's max_limit_id. */
  to: bigint;
  /**
   * The app's max_limit_id read by this allocation (0 = no limit). A client never hands out an ID
   * above it, and cuts the ranges it already holds when a later lease reports a lower limit.
   */
  maxLimitId: bigint;
}

/**
 * `POST /api/id/{appId}/lease`: a range of indexes straight from `id_alloc`, with the refill's
 * own allocation (IdAllocRepository.allocate: one `CALL shardleaf_id_alloc_next`, one round trip,
 * whole steps, cut exactly at max_limit_id). Not from the Redis list: a lease is one row update
 * whatever its size, where a pop costs Redis work per ID (docs/client.md, "Why id_alloc").
 *
 * Never twice: the row update hands the range to this call alone, whichever instance runs it; a
 * reply lost on the way (DB or HTTP) loses the range (a gap), and a retried lease allocates a new
 * one. A deleted app has no row any more: its lease answers 404 (the delete's tombstone keeps a
 * re-created app above every range granted before). The shard's list may have handed out indexes
 * above the row (a database restored from an older backup): the range is checked against the
 * list's push marker read before the allocation, and a range it reached is a gap and the row is
 * moved past the marker before a second allocation. The marker is then raised over the range
 * (segment-claims.ts), so that a later restore catches leased ranges too; a lease whose raise
 * fails on Redis is refused (503) and its range is a gap: leases need Redis as the list path does.
 * A marker that is not an index refuses the lease (503 QUEUE_MARKER_INVALID) before anything is
 * allocated.
 */
@Injectable()
export class QueueLeaseService {
  private readonly claims: SegmentClaims;

  constructor(
    private readonly repository: IdAllocRepository,
    private readonly monitor: LeaseMonitor,
    lists: QueueLists,
    keys: QueueKeys,
    refills: RefillMonitor,
  ) {
    this.claims = new SegmentClaims(lists, keys, repository, refills);
  }

  async lease(appId: number, gatePass: string, count: number): Promise<QueueLease> {
    const shard = shardOf(gatePass);
    try {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const before = await this.claims.assertUsable(appId, shard);
        const result = await this.repository.allocate(appId, shard, count);
        if (result === null) {
          throw new IdGenError(ErrorKind.QueueAppNotFound, `appId ${appId} shard ${shard} is not in id_alloc`);
        }
        if (result.segment === null) {
          throw new IdGenError(
            ErrorKind.QueueExhausted,
            `appId ${appId} shard ${shard} has used up its ID space (max_limit_id); raise max_limit_id to continue`,
          );
        }
        const { from, to } = result.segment;
        if (await this.claims.clearForLease(appId, shard, from, to, result.maxIndex, before)) {
          this.monitor.record('queue', 'granted', to - from + 1n);
          return { appId, shard, from, to, maxLimitId: result.maxLimitId };
        }
      }
      throw new IdGenError(ErrorKind.QueueEmpty, `appId ${appId} shard ${shard}: no range clear of its list's push marker yet; retry`);
    } catch (err) {
      this.monitor.record('queue', err instanceof IdGenError ? 'refused' : 'failed');
      throw err;
    }
  }
}
