import { ShardleafError } from './errors';
import { Lease, LeaseFetcher } from './id-buffer';
import { Transport } from './transport';

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

/**
 * Leases of a queue app's shard (POST /api/id/{appId}/lease): the IDs `index << 14 | shard << 8 |
 * appId` of the leased indexes, composed here once per lease. Any gatePass of the shard selects it
 * on the server; the first one seen is kept.
 */
export function queueLeases(transport: Transport, appId: number, shard: number, gatePass: string): LeaseFetcher {
  const low = BigInt((shard << 8) | appId);
  const path = `/api/id/${appId}/lease?gatePass=${encodeURIComponent(gatePass)}&count=`;
  return async (size): Promise<Lease> => {
    const body = await transport.request<QueueLeaseBody>('POST', path + String(size));
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
  };
}

/** Exhausted: max_limit_id may have been lowered below what a queue buffer holds; it hands out none of it. */
export function queueLeaseRevoked(err: Error): boolean {
  return err instanceof ShardleafError && err.error === 'QUEUE_EXHAUSTED';
}

/** Leases of a segment tag (POST /api/segment/lease/{key}). */
export function segmentLeases(transport: Transport, tag: string): LeaseFetcher {
  const path = `/api/segment/lease/${encodeURIComponent(tag)}?count=`;
  return async (size): Promise<Lease> => {
    const body = await transport.request<SegmentLeaseBody>('POST', path + String(size));
    const from = BigInt(body.from);
    return { first: from, stride: 1n, count: rangeCount(from, BigInt(body.to)) };
  };
}

/** Snowflake batches the server issued (GET /api/snowflake/get/{key}?count=N): no lease, a list. */
export function snowflakeBatches(transport: Transport, key: string): LeaseFetcher {
  const path = `/api/snowflake/get/${encodeURIComponent(key)}?count=`;
  return async (size): Promise<Lease> => {
    const body = await transport.request<{ ids: string[] }>('GET', path + String(size));
    return { ids: body.ids.map((id) => BigInt(id)) };
  };
}

function rangeCount(from: bigint, to: bigint): number {
  if (to < from) {
    throw new Error(`the server answered an empty range ${from}..${to}`);
  }
  // A lease is at most 10,000,000 IDs plus a step: far below 2^53.
  return Number(to - from + 1n);
}
