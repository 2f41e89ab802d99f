import { MAX_INDEX, parseQueueEntry } from '../../../src/queue-id/core/queue-id-layout';

const bytes = (s: string): Uint8Array => Buffer.from(s, 'latin1');

describe('parseQueueEntry', () => {
  it.each(['0', '1', '42', '16385', '999999999999999', MAX_INDEX.toString(), '9007199254740993', '9999999999999999'])(
    'reads %s from a string and from bytes exactly',
    (s) => {
      expect(parseQueueEntry(s)).toBe(BigInt(s));
      expect(parseQueueEntry(bytes(s))).toBe(BigInt(s));
    },
  );

  it.each(['', ' 1', '1 ', '-1', '+1', '1.0', '1e3', '0x10', 'abc', '12345678901234567', '١٢'])(
    'refuses %j',
    (s) => {
      expect(parseQueueEntry(s)).toBeUndefined();
      expect(parseQueueEntry(Buffer.from(s, 'utf8'))).toBeUndefined();
    },
  );

  it('agrees with BigInt on every length up to 16 digits', () => {
    for (let len = 1; len <= 16; len++) {
      const s = '9'.repeat(len);
      expect(parseQueueEntry(bytes(s))).toBe(BigInt(s));
      const t = `1${'0'.repeat(len - 1)}`;
      expect(parseQueueEntry(t)).toBe(BigInt(t));
    }
  });
});
