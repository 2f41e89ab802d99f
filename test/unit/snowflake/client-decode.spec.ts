import { decodeQueueId, decodeSnowflakeId } from '../../../packages/client/src';
import { DEFAULT_TWEPOCH } from '../../../src/config/snowflake-config';
import { composeQueueId, decomposeQueueId } from '../../../src/queue-id/core/queue-id-layout';
import { JS_SAFE_LAYOUT, LEAF_LAYOUT, composeId, decodeId } from '../../../src/snowflake/core/snowflake-layout';
import { seededRandom } from '../../support/seeded-random';

/** The client's decode (its own code, no server import) agrees with the server's on the same IDs. */
describe('client decode against the server decode', () => {
  const random = seededRandom(28);
  const int = (n: number): number => Math.floor(random() * n);

  it.each([
    ['leaf', LEAF_LAYOUT],
    ['js-safe', JS_SAFE_LAYOUT],
  ] as const)('snowflake %s: 10,000 IDs, edges included', (name, layout) => {
    const ids = [0n, layout.maxId, composeId(layout.maxTimeDelta, 0, 0, layout), composeId(0, layout.maxWorkerId, 0, layout)];
    for (let i = 0; i < 10_000; i++) {
      ids.push(composeId(int(layout.maxTimeDelta), int(layout.maxWorkerId + 1), int(layout.maxSequence + 1), layout));
    }
    for (const id of ids) {
      expect(decodeSnowflakeId(id, { layout: name, twepoch: DEFAULT_TWEPOCH })).toEqual(decodeId(id, DEFAULT_TWEPOCH, layout));
    }
  });

  it('queue: 10,000 IDs, edges included', () => {
    const ids = [0n, (1n << 63n) - 1n];
    for (let i = 0; i < 10_000; i++) {
      ids.push(composeQueueId(BigInt(int(2 ** 30)) * BigInt(int(2 ** 19)), int(64), int(256)));
    }
    for (const id of ids) {
      const server = decomposeQueueId(id);
      expect(decodeQueueId(id)).toEqual({ index: server.index, shard: server.shardId, appId: server.appId });
    }
  });
});
