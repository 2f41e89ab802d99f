/** How a refill (one segment from id_alloc into a Redis list) ended. */
export type RefillOutcome = 'refilled' | 'exhausted' | 'failed';
/**
 * What asked for it: the cron sweep or an admin refill (`sweep`), a pop that left the list at or
 * below its threshold (`ahead`, in the background), or an empty list under a request (`demand`).
 */
export type RefillTrigger = 'sweep' | 'ahead' | 'demand';

export type RefillListener = (trigger: RefillTrigger, outcome: RefillOutcome, seconds: number) => void;

/**
 * Why a segment's claim on its list's marker was refused (the segment is a gap): `older` — the
 * marker was within it or at its end (a second run of a push, an older segment than one already
 * claimed, a deleted app); `row_behind` — the marker was above the whole segment, so `id_alloc`
 * was behind the list (a restored database, another deployment on the key prefix) and its row
 * was moved past the marker; `marker_invalid` — the marker is not an index this service pushes
 * (corrupt, or another deployment's): the shard was refused, before or after allocating;
 * `above_limit` — the segment was allocated before max_limit_id was lowered and reaches above it.
 */
export type PushRefusal = 'older' | 'row_behind' | 'marker_invalid' | 'above_limit';

export type RefusalListener = (reason: PushRefusal) => void;

/**
 * In-process notifications of finished refills (and refused segment claims), for metrics. No framework imports; recording
 * costs one call per listener (none unless metrics are wired).
 */
export class RefillMonitor {
  private listeners: RefillListener[] = [];
  private refusalListeners: RefusalListener[] = [];

  subscribe(listener: RefillListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  subscribeRefusals(listener: RefusalListener): () => void {
    this.refusalListeners = [...this.refusalListeners, listener];
    return () => {
      this.refusalListeners = this.refusalListeners.filter((l) => l !== listener);
    };
  }

  /** A segment's claim was refused (rare: never on the request path's hot loop). */
  refused(reason: PushRefusal): void {
    for (const listener of this.refusalListeners) {
      listener(reason);
    }
  }

  record(trigger: RefillTrigger, outcome: RefillOutcome, startedAt: bigint): void {
    if (this.listeners.length === 0) {
      return;
    }
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    for (const listener of this.listeners) {
      listener(trigger, outcome, seconds);
    }
  }
}
