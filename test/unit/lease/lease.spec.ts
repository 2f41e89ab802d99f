import * as client from '../../../packages/client/src';
import { IdGenError } from '../../../src/common/id-gen.error';
import { LeaseMonitor } from '../../../src/lease/lease-monitor';
import { MAX_LEASE_COUNT, parseLeaseCount } from '../../../src/lease/lease-input';
import { javaStringHashCode } from '../../../src/queue-id/core/java-hash';
import { SHARD_COUNT, shardOf } from '../../../src/queue-id/core/queue-id-layout';

describe('lease input and monitor', () => {
  it('parses count 1..MAX_LEASE_COUNT and refuses anything else as BAD_INPUT', () => {
    expect(parseLeaseCount('1')).toBe(1);
    expect(parseLeaseCount(String(MAX_LEASE_COUNT))).toBe(MAX_LEASE_COUNT);
    for (const bad of [undefined, '', '0', '-1', '1.5', '1e3', String(MAX_LEASE_COUNT + 1), ['1', '2'], '０１']) {
      expect(() => parseLeaseCount(bad)).toThrow(IdGenError);
    }
  });

  it('tells every listener about every lease until it unsubscribes', () => {
    const monitor = new LeaseMonitor();
    const seen: string[] = [];
    const off = monitor.subscribe((g, o, ids) => seen.push(`${g}/${o}/${ids}`));
    monitor.record('queue', 'granted', 1000n);
    monitor.record('segment', 'refused');
    off();
    monitor.record('segment', 'failed');
    expect(seen).toEqual(['queue/granted/1000', 'segment/refused/0']);
  });
});

describe('the gatePass hash shared by server and client', () => {
  it('is one implementation: the server re-exports the client package functions', () => {
    expect(shardOf).toBe(client.shardOf);
    expect(javaStringHashCode).toBe(client.javaStringHashCode);
    expect(SHARD_COUNT).toBe(client.QUEUE_SHARD_COUNT);
  });
});
