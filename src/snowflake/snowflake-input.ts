import { badInput } from '../common/id-gen.error';
import { truncate } from '../common/input';
import { MAX_ID } from './core/snowflake-layout';

const KEY = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Leaf's `{key}`: validated (1..128 of letters, digits, `_ . : -`) though, as in Leaf, unused. */
export function parseSnowflakeKey(raw: unknown): string {
  if (typeof raw !== 'string' || !KEY.test(raw)) {
    throw badInput(
      `key must be 1..128 letters, digits, '_', '.', ':' or '-', got '${typeof raw === 'string' ? truncate(raw) : ''}'`,
    );
  }
  return raw;
}

/** A snowflake ID in decimal: 0..`maxId` (the layout's largest, 2^63-1 by default), parsed straight to bigint. */
export function parseSnowflakeId(raw: unknown, maxId: bigint = MAX_ID): bigint {
  if (typeof raw !== 'string' || !/^[0-9]{1,19}$/.test(raw)) {
    throw badInput(`id must be a decimal integer 0..${maxId}, got '${typeof raw === 'string' ? truncate(raw) : ''}'`);
  }
  const id = BigInt(raw);
  if (id > maxId) {
    throw badInput(`id must be at most ${maxId} in this service's SNOWFLAKE_LAYOUT, got ${raw}`);
  }
  return id;
}
