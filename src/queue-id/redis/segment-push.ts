import { createHash } from 'node:crypto';
import { MARKER_INDEX_LUA } from '../core/push-marker';
import { preEncodedCommand, sendPreEncoded } from '../../infra/redis/pre-encoded-command';
import { rpushRangeRequest } from './resp/resp-encode';
import { RedisClient } from '../../infra/redis/redis.tokens';

/**
 * The refill push in two steps: a claim, then plain RPUSHes.
 *
 * 1. The claim (CLAIM_LUA, a script of two key lookups): if the list's "pushed up to" marker is
 *    below `from`, raise it to `to` and answer "claimed"; otherwise answer "refused" and change
 *    nothing. The segments of one shard come from one id_alloc row whose max_id only grows, so a
 *    marker at or past `from` means this segment was claimed before (a second run of the same
 *    push) or is older than one already claimed: never push it.
 * 2. Only after the reply "claimed": `RPUSH list from … to` in chunks of PUSH_CHUNK, whose request
 *    bytes are written here (resp/resp-encode.ts) and sent through ioredis as one pre-encoded command
 *    each (pre-encoded-command.ts). Redis spends ~1,075 instructions per entry on a plain RPUSH
 *    against ~3,600 when a Lua script makes each index a Redis string, and ioredis does not handle
 *    each index as an argument.
 *
 * Why every index still reaches the list at most once:
 * - A claim is atomic, and only one claim of a segment (or of anything older) can succeed. Only
 *   the caller holding that successful claim's reply sends the RPUSH, and only then.
 * - Nothing is ever sent twice by the client: `autoResendUnfulfilledCommands: false`, a Cluster
 *   does not retry "Connection is closed." (`retryDelayOnFailover: 0`), and a command unanswered
 *   when its connection closes is rejected at once and never written again (unanswered-commands.ts).
 *   A Cluster resends a command only on MOVED/ASK/TRYAGAIN/CLUSTERDOWN, which Redis answers
 *   without executing it. A chunk still in the client's offline queue (never written) goes out
 *   once after the reconnect.
 * - A claim whose reply is lost (it may have run) is treated as refused: no RPUSH, the segment is
 *   a gap. An RPUSH whose reply is lost is not retried: those indexes are queued once, or a gap.
 * - Two instances never hold the same segment (id_alloc's row update); their claims of different
 *   segments are ordered by the marker, and the older segment's claim is refused (a gap).
 * - Redis Cluster: the list and its marker share a slot (QueueKeys.pushMark), so the claim is one
 *   script on one node, and the RPUSH goes to the node of the same slot.
 *
 * What is weaker than a single script: between a claim and its RPUSH (one round trip) another
 * client can act on the list.
 * - An admin delete (retireLists: DEL the list, raise the marker to the tombstone) in that window
 *   deletes the list; the RPUSH then queues the old segment once in a new list of the same name.
 *   No index twice: the segment was allocated before the delete (it is at most the tombstone), was
 *   never queued before, and a re-created app allocates only above the tombstone. If the app stays
 *   deleted, the next reload's cleanup deletes that list again; if it was re-created, the new app
 *   serves those never-served old indexes once (IDs below its resume point).
 * - A lowered max_limit_id (the PATCH stores the limit and deletes the list, markers untouched)
 *   in that window: each chunk's RPUSH runs in a transaction with LIMIT_GUARD_LUA (below), which
 *   takes the chunk off again when it reaches above the stored limit, so the list never holds it.
 * - Redis itself would not refuse the RPUSH if a client sent it twice: that rests on the client
 *   never resending (above), which refill-resend*.spec.ts checks by losing the reply of
 *   a claim and of an RPUSH separately.
 *
 * KEYS[1] the list (routes the script to its slot), KEYS[2] its marker; ARGV from, to as decimal
 * strings below 2^53 (exact in Lua's doubles). Returns {1, to} when claimed, {0, marker} when refused,
 * {2, marker} when the marker is not an index this service pushes (core/push-marker.ts: not a
 * decimal integer, or above MAX_INDEX): refused too, and the caller refuses the shard. With
 * KEYS[3], the shard's stored limit (QueueKeys.limitMark, written when max_limit_id is lowered):
 * a segment reaching above it is refused, {3, limit}, whatever the claiming instance believes the
 * limit is.
 */
export const CLAIM_LUA = `${MARKER_INDEX_LUA}
local raw = redis.call('GET', KEYS[2])
if raw then
  local mark = markerIndex(raw)
  if not mark then
    return {2, raw}
  end
  if mark >= tonumber(ARGV[1]) then
    return {0, raw}
  end
end
if KEYS[3] then
  local limit = tonumber(redis.call('GET', KEYS[3]) or 'x')
  if limit and tonumber(ARGV[2]) > limit then
    return {3, tostring(limit)}
  end
end
redis.call('SET', KEYS[2], ARGV[2])
return {1, ARGV[2]}
`;

const CLAIM_SHA = createHash('sha1').update(CLAIM_LUA).digest('hex');

/**
 * Indexes per RPUSH. Redis runs one command at a time: an RPUSH of 10,000 takes well under a
 * millisecond, and pops of other clients are served between the chunks of a large refill.
 */
export const PUSH_CHUNK = 10_000;

/** Largest index pushed (indexes travel as JS numbers here; accepted ones are below 2^49). */
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

export interface PushOutcome {
  /** Indexes pushed. */
  pushed: number;
  /** Set when the claim was refused (the marker already at or past `from`): the segment is a gap. */
  refusedAt?: { from: bigint; mark: bigint };
  /** Set when refused by a marker that is not an index (corrupt, or not ours): a gap. */
  invalidMark?: string;
  /** Set when refused by the shard's stored limit (max_limit_id lowered meanwhile): a gap. */
  limitedAt?: bigint;
}

/**
 * The claim's answer: `claimed`, refused with the marker found, refused by a marker that is not
 * an index, or refused by the shard's stored limit (the segment reaches above it).
 */
export type Claim =
  | { claimed: true }
  | { claimed: false; mark: bigint }
  | { claimed: false; invalid: string }
  | { claimed: false; limit: bigint };

/**
 * Step 1: raises the marker from below `from` to `to` (CLAIM_LUA). EVALSHA, with EVAL when the
 * server does not know the script (NOSCRIPT: it did not run). Throws when Redis fails or the
 * reply is lost: the caller must then treat the segment as a gap.
 */
export async function claimRange(
  redis: RedisClient,
  listKey: string,
  markKey: string,
  from: bigint,
  to: bigint,
  limitKey?: string,
): Promise<Claim> {
  if (from < 0n || to < from || to > MAX_EXACT) {
    throw new RangeError(`cannot push ${from}..${to}`);
  }
  const keys = limitKey === undefined ? [listKey, markKey] : [listKey, markKey, limitKey];
  const args = [...keys, from.toString(), to.toString()];
  let reply: unknown;
  try {
    reply = await redis.evalsha(CLAIM_SHA, keys.length, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) {
      throw err;
    }
    reply = await redis.eval(CLAIM_LUA, keys.length, ...args);
  }
  const [claimed, mark] = reply as [number, string];
  if (claimed === 2) {
    return { claimed: false, invalid: String(mark) };
  }
  if (claimed === 3) {
    return { claimed: false, limit: BigInt(mark) };
  }
  return claimed === 1 ? { claimed: true } : { claimed: false, mark: BigInt(mark) };
}

/**
 * KEYS[1] the list, KEYS[2] the shard's stored limit; ARGV[1] the highest index of the chunk just
 * pushed, ARGV[2] its size. Run in the same transaction (MULTI) as the chunk's RPUSH: when the
 * limit stands below the chunk (max_limit_id lowered between the claim and this push), the chunk
 * is taken off the list's tail again (a gap). Returns 1 when kept, 0 when taken off.
 */
export const LIMIT_GUARD_LUA = `
local limit = tonumber(redis.call('GET', KEYS[2]) or 'x')
if limit and tonumber(ARGV[1]) > limit then
  redis.call('LTRIM', KEYS[1], 0, -(tonumber(ARGV[2]) + 1))
  return 0
end
return 1
`;

/**
 * Step 2, only after `claimRange` answered `claimed` for exactly from..to: RPUSH of the indexes
 * in chunks of PUSH_CHUNK, all written at once (they run in order on the connection). With
 * `limitKey`, each chunk goes in a transaction with LIMIT_GUARD_LUA: a limit lowered after the
 * claim (the PATCH stores it and deletes the list in one script) takes the chunk off again, so no
 * list ever holds an index above a lowered limit, on any instance. Resolves with the number kept;
 * when a chunk fails, rejects with its error after every chunk settled (the chunks that failed are
 * gaps: they ran once or not at all).
 */
export async function pushClaimed(redis: RedisClient, listKey: string, from: bigint, to: bigint, limitKey?: string): Promise<number> {
  const first = Number(from);
  const last = Number(to);
  const chunks: Array<Promise<number>> = [];
  for (let lo = first; lo <= last; lo += PUSH_CHUNK) {
    const hi = Math.min(lo + PUSH_CHUNK - 1, last);
    const bytes = rpushRangeRequest(listKey, lo, hi);
    chunks.push(
      limitKey === undefined
        ? sendPreEncoded(redis, 'rpush', listKey, bytes).then(() => hi - lo + 1)
        : guardedChunk(redis, listKey, limitKey, bytes, hi, hi - lo + 1),
    );
  }
  const settled = await Promise.allSettled(chunks);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    throw failed.reason;
  }
  return settled.reduce((sum, s) => sum + (s.status === 'fulfilled' ? s.value : 0), 0);
}

/** One chunk's RPUSH and its limit guard in one MULTI/EXEC: the indexes kept (n or 0). */
async function guardedChunk(redis: RedisClient, listKey: string, limitKey: string, bytes: Buffer, hi: number, n: number): Promise<number> {
  const tx = redis.multi();
  // A Pipeline takes a Command as any command (ioredis does not type it on the chainable interface).
  (tx as unknown as { sendCommand(command: unknown): void }).sendCommand(preEncodedCommand('rpush', listKey, bytes));
  const replies = await tx.eval(LIMIT_GUARD_LUA, 2, listKey, limitKey, String(hi), String(n)).exec();
  const [pushError] = replies?.[0] ?? [new Error('no reply to RPUSH')];
  const [guardError, kept] = replies?.[1] ?? [new Error('no reply to the limit guard')];
  const failed = pushError ?? guardError;
  if (failed) {
    throw failed;
  }
  return Number(kept) === 1 ? n : 0;
}

/**
 * RPUSH of pushFrom..to to `listKey`, at most once: the claim of the whole from..to, then (if
 * claimed) the chunks. from..pushFrom−1 are claimed and not pushed: the caller hands them out
 * itself (an on-demand refill's request), and only after this resolved. Refused when the marker is
 * already at or past `from` (then nothing is pushed and nothing may be handed out).
 */
export async function pushRange(
  redis: RedisClient,
  listKey: string,
  markKey: string,
  from: bigint,
  to: bigint,
  pushFrom: bigint = from,
  limitKey?: string,
): Promise<PushOutcome> {
  const claim = await claimRange(redis, listKey, markKey, from, to, limitKey);
  if (!claim.claimed) {
    if ('invalid' in claim) {
      return { pushed: 0, invalidMark: claim.invalid };
    }
    return 'limit' in claim ? { pushed: 0, limitedAt: claim.limit } : { pushed: 0, refusedAt: { from, mark: claim.mark } };
  }
  const first = pushFrom > from ? pushFrom : from;
  return { pushed: first <= to ? await pushClaimed(redis, listKey, first, to, limitKey) : 0 };
}
