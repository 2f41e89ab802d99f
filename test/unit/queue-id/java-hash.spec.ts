import { javaIntAbs, javaStringHashCode } from '../../../src/queue-id/core/java-hash';
import { shardOf } from '../../../src/queue-id/core/queue-id-layout';

/**
 * Expected values were printed by a real JVM (OpenJDK 17) with
 *   int h = s.hashCode(); System.out.println(h + "\t" + (Math.abs(h) % 64));
 * and are not computed by the code under test.
 */
const JAVA: Array<[string, number, number]> = [
  ['', 0, 0],
  ['a', 97, 33],
  ['alice', 92903040, 0],
  ['bob', 97717, 53],
  ['polygenelubricants', -2147483648, 0],
  ['13800138000', 1430905456, 48],
  ['user@example.com', 1084137992, 8],
  ['张三', 774889, 41],
  ['é', 233, 41],
  ['😀', 1772899, 35],
  ['a😀b', 57849694, 30],
  ['GatePass-123', 158675073, 1],
  ['Aa', 2112, 0],
  ['BB', 2112, 0],
  ['zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz', -641857862, 6],
];

describe('javaStringHashCode', () => {
  it.each(JAVA)('hash of %j is %d as in Java', (s, hash) => {
    expect(javaStringHashCode(s)).toBe(hash);
  });

  it('counts a non-BMP character as two UTF-16 code units, as Java does', () => {
    // U+1F600 is the surrogate pair D83D DE00: 0xD83D * 31 + 0xDE00.
    expect(javaStringHashCode('😀')).toBe(0xd83d * 31 + 0xde00);
  });
});

describe('shardOf', () => {
  it.each(JAVA)('shard of %j matches Math.abs(hashCode) %% 64 in Java', (s, _hash, shard) => {
    expect(shardOf(s)).toBe(shard);
  });

  it('keeps Java semantics for Integer.MIN_VALUE: Math.abs stays negative, the shard is 0 not -0', () => {
    expect(javaIntAbs(-2147483648)).toBe(-2147483648);
    expect(Object.is(shardOf('polygenelubricants'), 0)).toBe(true);
  });

  it('always lands in 0..63', () => {
    for (let i = 0; i < 5000; i++) {
      const s = `user-${i}-${String.fromCharCode(i % 0xffff)}`;
      const shard = shardOf(s);
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(64);
    }
  });
});
