import { MAX_INDEX } from './queue-id-layout';

/**
 * What a list's "pushed up to" marker (QueueKeys.pushMark) says. Framework-free.
 * - `none`: no marker: nothing went through the list (or the Redis that held it was lost);
 * - `index`: the highest index ever handed out through the list (pushed, or claimed and served
 *   by an on-demand refill): no index at or below it may be handed out again;
 * - `invalid`: not a decimal index, or above every index this service can push (MAX_INDEX): a
 *   corrupt value, or another deployment's. Following it would move id_alloc to the shard's limit
 *   (a shard used up for good) or refuse every segment, so the shard allocates nothing while it
 *   stands and an operator is told which key to fix or delete.
 */
export type PushMarker = { kind: 'none' } | { kind: 'index'; mark: bigint } | { kind: 'invalid'; raw: string };

/** Most digits of a marker (an index has at most 15; a sign only for a hand-made negative). */
const MAX_DIGITS = 16;

/** A decimal integer as a refill or a retire writes it. */
const DECIMAL = new RegExp(`^-?[0-9]{1,${MAX_DIGITS}}$`);

export function readPushMarker(raw: string | null): PushMarker {
  if (raw === null) {
    return { kind: 'none' };
  }
  if (!DECIMAL.test(raw)) {
    return { kind: 'invalid', raw };
  }
  const mark = BigInt(raw);
  return mark > MAX_INDEX ? { kind: 'invalid', raw } : { kind: 'index', mark };
}

/**
 * readPushMarker's rule for the Redis scripts that read a marker (segment-push.ts), so that both
 * sides agree on every string: `markerIndex(raw)` is the index as a Lua number, or nil when the
 * marker is not an index. Lua numbers are doubles: exact for every index (below 2^49).
 */
export const MARKER_INDEX_LUA = `
local function markerIndex(raw)
  local digits = string.match(raw, '^%-?(%d+)$')
  if not digits or #digits > ${MAX_DIGITS} or tonumber(raw) > ${MAX_INDEX} then
    return nil
  end
  return tonumber(raw)
end
`;

/**
 * Whether a segment from..to may be handed out given the marker read after it was allocated:
 * `clear` — nothing at or above `from` went through the list; `behind` — the marker is above the
 * whole segment, so id_alloc is behind the list (a restored database, a shared key prefix): the
 * segment is a gap and the row must move past `advanceTo` (the marker, cut at the shard's limit);
 * `overlap` — the marker is within the segment (a segment overtaken by a newer one): a gap.
 */
export type SegmentVerdict =
  | { kind: 'clear' }
  | { kind: 'behind'; advanceTo: bigint }
  | { kind: 'overlap' }
  | { kind: 'invalid'; raw: string };

export function segmentVerdict(marker: PushMarker, from: bigint, to: bigint, maxIndex: bigint): SegmentVerdict {
  if (marker.kind === 'invalid') {
    return marker;
  }
  if (marker.kind === 'none' || marker.mark < from) {
    return { kind: 'clear' };
  }
  const advanceTo = marker.mark < maxIndex ? marker.mark : maxIndex;
  return marker.mark > to && advanceTo > to ? { kind: 'behind', advanceTo } : { kind: 'overlap' };
}
