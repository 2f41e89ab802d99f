import { ShardleafClient } from '../src/client';
import { FakeClock, FakeServers } from './fakes';
import { A, testClient } from './test-client';

function client(servers: FakeServers): ShardleafClient {
  return testClient(servers, new FakeClock(), { servers: A });
}

describe('ShardleafClient number forms', () => {
  it('hands out queue and segment IDs as exact numbers, the same IDs as the bigint forms would', async () => {
    const servers = new FakeServers();
    const c = client(servers);
    const q = await c.queueIdNumber(1, 'alice');
    const qs = await c.queueIdBatchNumbers(1, 'alice', 3);
    expect(typeof q).toBe('number');
    expect([q, ...qs].map(BigInt)).toEqual([1n, 2n, 3n, 4n].map((i) => (i << 14n) | (BigInt(q) & 0x3fffn)));
    expect(await c.segmentIdNumber('orders')).toBe(1);
    expect(await c.segmentIdBatchNumbers('orders', 2)).toEqual([2, 3]);
    await c.close();
  });

  it('rejects with a RangeError instead of rounding an ID above 2^53 - 1', async () => {
    // The fake server's snowflake IDs start at 2^60 (as a Leaf-layout ID would).
    const servers = new FakeServers();
    const c = client(servers);
    await expect(c.snowflakeIdNumber('k')).rejects.toThrow(RangeError);
    await expect(c.snowflakeIdBatchNumbers('k', 3)).rejects.toThrow(/lose its precision/);
    // Bad input still rejects as in the bigint forms.
    await expect(c.queueIdNumber(256, 'x')).rejects.toThrow(RangeError);
    await c.close();
  });
});
