import { Injectable } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { LeaseMonitor } from '../lease/lease-monitor';
import { LeafAllocLeaseRepository } from './leaf-alloc-lease.repository';
import { SegmentService } from './segment.service';

/** A run of segment IDs owned by one caller: every ID `from..to` (inclusive). */
export interface SegmentLease {
  key: string;
  from: bigint;
  to: bigint;
}

/**
 * `POST /api/segment/lease/{key}`: exactly `count` IDs of the tag straight from `leaf_alloc`
 * (one row update). Never twice: the update hands the range to this call alone; a lost reply is
 * a gap. A deleted tag has no row (404); its tombstone in leaf_alloc_retired holds the max_id
 * after every lease granted before the delete, so a re-created tag resumes above them. A row whose
 * max_id is below 1 (made by hand in SQL) is refused with 409 CONFLICT and left unchanged: a lease
 * never holds an ID below 1.
 */
@Injectable()
export class SegmentLeaseService {
  constructor(
    private readonly segment: SegmentService,
    private readonly repository: LeafAllocLeaseRepository,
    private readonly monitor: LeaseMonitor,
  ) {}

  async lease(key: string, count: number): Promise<SegmentLease> {
    try {
      this.segment.assertEnabled();
      const maxId = await this.repository.advance(key, count);
      if (maxId === null) {
        throw new IdGenError(ErrorKind.SegmentKeyNotFound, `biz_tag '${key}' is not in leaf_alloc`);
      }
      if (typeof maxId !== 'bigint') {
        // A row made by hand with max_id < 1: the lease would hold 0 or negative IDs (the
        // generator skips them as a gap; a lease must own exactly its range). Nothing was taken.
        throw new IdGenError(
          ErrorKind.Conflict,
          `biz_tag '${key}' has max_id ${maxId.belowOne}, below 1: IDs start at 1; set its max_id to at least 1 to lease`,
        );
      }
      const from = maxId - BigInt(count);
      const lease = { key, from, to: maxId - 1n };
      this.monitor.record('segment', 'granted', BigInt(count));
      return lease;
    } catch (err) {
      this.monitor.record('segment', err instanceof IdGenError ? 'refused' : 'failed');
      throw err;
    }
  }
}
