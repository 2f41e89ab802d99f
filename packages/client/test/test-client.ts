import { ShardleafClient, ShardleafClientOptions } from '../src/client';
import { FakeClock, FakeServers } from './fakes';

/** Three fake server URLs (one FakeServers answers for all of them). */
export const A = 'http://a:1';
export const B = 'http://b:1';
export const C = 'http://c:1';

/** A client of the fake servers with small leases (10..1000) and short backoffs (100..800 ms). */
export function testClient(servers: FakeServers, clock: FakeClock, over: Partial<ShardleafClientOptions> = {}): ShardleafClient {
  return new ShardleafClient({
    servers: [A, B, C],
    fetch: servers.fetch,
    clock,
    timeoutMs: 1000,
    initialLease: 10,
    minLease: 10,
    maxLease: 1000,
    backoffBaseMs: 100,
    backoffMaxMs: 800,
    ...over,
  });
}
