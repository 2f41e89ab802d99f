import { LuaScript } from '../../infra/redis/lua-script';
import { RedisClient } from '../../infra/redis/redis.tokens';
import { MARKER_INDEX_LUA } from '../core/push-marker';

/**
 * KEYS[1] a list's "pushed up to" marker; ARGV[1] the last index of a range handed out without the
 * list (a lease). The marker becomes the larger of itself and ARGV[1] (a marker that is not an
 * index is left as it is), so that it covers leases too: a database restored to before the lease
 * is caught by it like one restored to before a push. Raising it can only refuse a push of a
 * segment at or below ARGV[1] (a gap), never let one through. Returns the marker as it was: {}
 * when there was none, {raw} otherwise.
 */
export const RAISE_MARKER_LUA = `${MARKER_INDEX_LUA}
local raw = redis.call('GET', KEYS[1])
if raw then
  local mark = markerIndex(raw)
  if not mark or mark >= tonumber(ARGV[1]) then
    return {raw}
  end
end
redis.call('SET', KEYS[1], ARGV[1])
if raw then
  return {raw}
end
return {}`;

const RAISE_MARKER = new LuaScript(RAISE_MARKER_LUA, 1);

/** Raises the marker to at least `to` (see RAISE_MARKER_LUA); the marker as it was, null when there was none. */
export async function raiseMarker(redis: RedisClient, markKey: string, to: bigint): Promise<string | null> {
  const [before] = (await RAISE_MARKER.run(redis, markKey, to.toString())) as string[];
  return before ?? null;
}
