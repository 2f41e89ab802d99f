import { Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { PushMarker, readPushMarker, segmentVerdict } from '../core/push-marker';
import { MAX_INDEX } from '../core/queue-id-layout';
import { QueueKeys } from '../core/queue-keys';
import { QueueLists } from '../core/queue-lists';
import { IdAllocRepository } from '../id-alloc.repository';
import { RefillMonitor } from '../refill-monitor';

/** A shard's invalid marker is logged at most this often per instance (every request that needs a refill meets it). */
const INVALID_LOG_INTERVAL_MS = 60_000;

/** Why a segment was not pushed (SegmentClaims.push): refused by the list's marker, or by the shard's stored limit. */
export type PushRefusal = 'refused' | 'limited';

/**
 * Every path that allocates from id_alloc checks its segment against the list's "pushed up to"
 * marker (core/push-marker.ts), so that no index that went through a list is handed out again:
 * - refills claim the segment on the marker as they push it (`push`: QueueLists.pushSegment);
 * - a lease, which does not go through the list, raises the marker over its range after its
 *   allocation (`clearForLease`), so that the marker covers leased ranges too;
 * - all of them read the marker before allocating (`assertUsable`): a marker that is not an index
 *   (corrupt, or another deployment's) refuses the shard with QUEUE_MARKER_INVALID (503, naming the
 *   key) before id_alloc moves, so the row moves by at most one refill while it stands (one
 *   allocation racing a marker written meanwhile), and the shard serves again once an operator
 *   fixes or deletes the key, without a restart.
 * A marker above the whole segment means id_alloc is behind the list (a restored database, a
 * shared key prefix): the segment is a gap and the row is moved past the marker (never past the
 * shard's limit), counted as `row_behind`.
 */
export class SegmentClaims {
  private readonly logger = new Logger('SegmentClaims');
  private readonly invalidLogged = new Map<string, number>();

  constructor(
    private readonly lists: QueueLists,
    private readonly keys: QueueKeys,
    private readonly repo: Pick<IdAllocRepository, 'advancePast'>,
    private readonly monitor: RefillMonitor,
  ) {}

  /**
   * The shard's marker read before an allocation. Throws QUEUE_MARKER_INVALID when it is not an
   * index: nothing may be allocated for the shard.
   */
  async assertUsable(appId: number, shardId: number): Promise<PushMarker> {
    const marker = readPushMarker(await this.lists.pushMark(appId, shardId));
    if (marker.kind === 'invalid') {
      throw this.invalid(appId, shardId, marker.raw, 'nothing allocated');
    }
    return marker;
  }

  /**
   * Claims from..to and pushes pushFrom..to once (QueueLists.pushSegment); returns how many were
   * pushed. Otherwise the segment is a gap, none of it may be handed out, and the answer says why:
   * `refused`, the marker was already at or past `from` (a marker above the whole segment moves
   * the row past it, else every refill of the shard is refused, one step at a time, for as long as
   * the distance lasts: one more allocation lands above it); `limited`, the shard's stored limit is
   * below the segment (max_limit_id lowered: an allocation made now reads the new limit, but a
   * stored limit that outlived a raise would refuse it too, so none is made). Throws
   * QUEUE_MARKER_INVALID when the marker is not an index (the segment is a gap).
   */
  async push(appId: number, shardId: number, from: bigint, to: bigint, maxIndex: bigint, pushFrom: bigint = from): Promise<number | PushRefusal> {
    const outcome = await this.lists.pushSegment(appId, shardId, from, to, pushFrom);
    if (outcome.invalidMark !== undefined) {
      throw this.invalid(appId, shardId, outcome.invalidMark, `push of ${from}..${to} refused: a gap`);
    }
    if (outcome.limitedAt !== undefined) {
      // Allocated before max_limit_id was lowered: a gap; the next allocation reads the new limit.
      this.monitor.refused('above_limit');
      this.logger.warn(
        `push of ${from}..${to} to app ${appId} shard ${shardId} refused: max_limit_id was lowered meanwhile ` +
          `(index ${outcome.limitedAt} at most): left as a gap`,
      );
      return 'limited';
    }
    if (!outcome.refusedAt) {
      return outcome.pushed;
    }
    await this.refused(appId, shardId, from, to, maxIndex, { kind: 'index', mark: outcome.refusedAt.mark }, 'push');
    return 'refused';
  }

  /**
   * Whether a lease's segment from..to may be handed out, given `before`, the marker read before
   * its allocation (assertUsable). The marker is raised over the segment first (a lease is covered
   * by the marker like a push; raising it can only turn later pushes into gaps), which reads it as
   * it was. The segment is refused (a gap, and false is returned) when `before` had reached it
   * (id_alloc behind the list: a restored database, a shared key prefix; the row is moved past the
   * marker when it is above the whole segment), or when the marker raised lay within it (an
   * overlapping segment went through the list). A marker above the whole segment that was not
   * there before is a refill of a newer segment that ran meanwhile: the lease stands. Throws
   * QUEUE_MARKER_INVALID on a marker that is not an index, and Redis's error when the raise fails:
   * either way the segment is a gap, never handed out uncovered.
   */
  async clearForLease(appId: number, shardId: number, from: bigint, to: bigint, maxIndex: bigint, before: PushMarker): Promise<boolean> {
    const found = readPushMarker(await this.lists.raiseMarker(appId, shardId, to));
    if (found.kind === 'invalid') {
      throw this.invalid(appId, shardId, found.raw, `lease of ${from}..${to} refused: a gap`);
    }
    if (before.kind === 'index' && before.mark >= from) {
      await this.refused(appId, shardId, from, to, maxIndex, before, 'lease');
      return false;
    }
    if (found.kind === 'index' && found.mark >= from && found.mark <= to) {
      await this.refused(appId, shardId, from, to, maxIndex, found, 'lease');
      return false;
    }
    return true;
  }

  private async refused(
    appId: number,
    shardId: number,
    from: bigint,
    to: bigint,
    maxIndex: bigint,
    marker: PushMarker,
    what: 'push' | 'lease',
  ): Promise<void> {
    const verdict = segmentVerdict(marker, from, to, maxIndex < MAX_INDEX ? maxIndex : MAX_INDEX);
    const mark = marker.kind === 'index' ? marker.mark : -1n;
    const behind = verdict.kind === 'behind' && (await this.repo.advancePast(appId, shardId, verdict.advanceTo));
    this.monitor.refused(behind ? 'row_behind' : 'older');
    if (behind) {
      this.logger.error(
        `${what} of ${from}..${to} to app ${appId} shard ${shardId} refused: its list was already handed out up to ${mark}, ` +
          `above id_alloc's max_id; max_id moved to ${verdict.advanceTo} (was the database restored, or does another deployment use key prefix ` +
          `"${this.keys.prefix}"?)`,
      );
    } else {
      this.logger.warn(`${what} of ${from}..${to} to app ${appId} shard ${shardId} refused (already pushed up to ${mark}): left as a gap`);
    }
  }

  private invalid(appId: number, shardId: number, raw: string, what: string): IdGenError {
    const key = this.keys.pushMark(appId, shardId);
    this.monitor.refused('marker_invalid');
    const now = Date.now();
    if (now - (this.invalidLogged.get(key) ?? -Infinity) >= INVALID_LOG_INTERVAL_MS) {
      this.invalidLogged.set(key, now);
      this.logger.error(
        `app ${appId} shard ${shardId}: push marker ${key} holds '${raw.slice(0, 64)}', not an index this service pushes ` +
          `(corrupt, or another deployment's): ${what}; the shard allocates nothing until the key is fixed or deleted`,
      );
    }
    return new IdGenError(
      ErrorKind.QueueMarkerInvalid,
      `appId ${appId} shard ${shardId} cannot be refilled: its push marker ${key} is not an index this service pushed ` +
        '(corrupt, or another deployment\'s); an operator must fix or delete that key',
    );
  }
}
