import { encodeCommand, lpopRequest, rpushRangeRequest } from '../../../src/queue-id/redis/resp/resp-encode';
import { RespPopReader } from '../../../src/queue-id/redis/resp/resp-pop-reader';
import { PoppedIndexList } from '../../../src/queue-id/redis/resp/resp-bytes';
import { readResp } from '../../support/resp-reader';
import { seededRandom } from '../../support/seeded-random';

/** What a client writes for RPUSH with these arguments: each as a bulk string of its UTF-8 bytes (encodeCommand). */
function reference(key: string, from: number, to: number): Buffer {
  const words = ['RPUSH', key];
  for (let i = from; i <= to; i++) {
    words.push(String(i));
  }
  return Buffer.from(encodeCommand(words));
}

describe('the RESP encoder and the batch pop reader agree', () => {
  it('reads an encoded RPUSH back as an array: the indexes, the command and key as malformed entries', () => {
    const reader = new RespPopReader();
    let read: PoppedIndexList | undefined;
    reader.expectPop(1_000 + 2, 10n ** 15n, (err, list) => {
      expect(err).toBeNull();
      read = list;
    });
    const bytes = rpushRangeRequest('list:α', 9_500, 10_499);
    // Fed in uneven chunks: entries cut anywhere.
    for (let p = 0; p < bytes.length; p += 997) {
      reader.feed(bytes.subarray(p, p + 997));
    }
    expect(read?.malformed).toBe(2);
    expect(read?.indexes).toEqual(Array.from({ length: 1_000 }, (_, i) => 9_500 + i));
  });

  it('writes LPOP key n (and LLEN key) as a client would', () => {
    expect(lpopRequest('k', 1000, false)).toBe(encodeCommand(['LPOP', 'k', '1000']));
    expect(lpopRequest('kα', 7, true)).toBe(encodeCommand(['LPOP', 'kα', '7']) + encodeCommand(['LLEN', 'kα']));
  });
});

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
