import { badInput } from '../common/id-gen.error';
import { parseIntParam } from '../common/input';

/**
 * Largest `count` of one lease (queue and segment). A lease is one row update whatever its size;
 * the bound keeps a typo from burning a shard's index space (2^49 indexes) in a few calls.
 */
export const MAX_LEASE_COUNT = 10_000_000;

/** The required `count` of a lease: an integer 1..MAX_LEASE_COUNT. */
export function parseLeaseCount(raw: unknown): number {
  if (raw === undefined) {
    throw badInput(`count is required and must be an integer 1..${MAX_LEASE_COUNT}`);
  }
  return parseIntParam('count', raw, 1, MAX_LEASE_COUNT);
}
