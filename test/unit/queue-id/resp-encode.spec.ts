import { rpushRangeRequest } from '../../../src/queue-id/redis/resp/resp-encode';
import { readResp } from '../../support/resp-reader';
import { seededRandom } from '../../support/seeded-random';

/** What a client writes for RPUSH with these arguments: each as a bulk string of its UTF-8 bytes. */
function reference(key: string, from: number, to: number): Buffer {
  const words = ['RPUSH', key];
  for (let i = from; i <= to; i++) {
    words.push(String(i));
  }
  return Buffer.from(`*${words.length}\r\n${words.map((w) => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join('')}`);
}

describe('rpushRangeRequest (the RESP bytes of RPUSH key from..to)', () => {
  it.each([
    [0, 0],
    [0, 12],
    [1, 1],
    [9, 10],
    [95, 1_005],
    [99_999, 100_001],
    [1, 100_000],
    [2 ** 49 - 3, 2 ** 49 - 1],
    [Number.MAX_SAFE_INTEGER - 2, Number.MAX_SAFE_INTEGER],
  ])('%d..%d: byte for byte what a client writes', (from, to) => {
    expect(rpushRangeRequest('id.gen.idList_1_0', from, to).equals(reference('id.gen.idList_1_0', from, to))).toBe(true);
  });

  it('counts the key in bytes, not characters (a non-ASCII prefix)', () => {
    expect(rpushRangeRequest('{ü}€idList_3_7', 8, 11).equals(reference('{ü}€idList_3_7', 8, 11))).toBe(true);
  });

  it('matches the reference on random ranges around powers of ten', () => {
    const random = seededRandom(11);
    for (let i = 0; i < 200; i++) {
      const from = Math.max(0, 10 ** Math.floor(random() * 15) - Math.floor(random() * 50));
      const to = from + Math.floor(random() * 120);
      expect(rpushRangeRequest('k', from, to).equals(reference('k', from, to))).toBe(true);
    }
  });

  it('is exactly one complete RESP request (RPUSH, the key, the indexes), nothing after it', () => {
    const bytes = rpushRangeRequest('list', 998, 1_002);
    const value = readResp(bytes, 0);
    expect(value?.end).toBe(bytes.length);
    expect(value?.words).toEqual(['RPUSH', 'list', '998', '999']);
    expect(readResp(bytes.subarray(0, bytes.length - 1), 0)).toBeNull();
  });

  it.each([
    [5, 4],
    [-1, 3],
    [1.5, 3],
    [0, 2 ** 53],
  ])('refuses %d..%d', (from, to) => {
    expect(() => rpushRangeRequest('k', from, to)).toThrow(RangeError);
  });
});
