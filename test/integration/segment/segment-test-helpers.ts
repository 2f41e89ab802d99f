import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SegmentBufferView } from '../../../src/segment/core/segment-buffer';
import { request } from '../../support/test-env';

/** Meituan Leaf's `leaf_alloc.sql`, verbatim. */
export const LEAF_DDL = `CREATE TABLE \`leaf_alloc\` (
  \`biz_tag\` varchar(128)  NOT NULL DEFAULT '',
  \`max_id\` bigint(20) NOT NULL DEFAULT '1',
  \`step\` int(11) NOT NULL,
  \`description\` varchar(256)  DEFAULT NULL,
  \`update_time\` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (\`biz_tag\`)
) ENGINE=InnoDB;`;

/** The row of Leaf's README. */
export const LEAF_README_ROW =
  "insert into leaf_alloc(biz_tag, max_id, step, description) values('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')";

/** Segment settings of the integration suites: no background sync unless a test asks. */
export const SEGMENT_TEST_ENV = { SEGMENT_SYNC_CRON: 'off' };

export async function bufferView(app: NestFastifyApplication, tag: string): Promise<SegmentBufferView | undefined> {
  const res = await request(app, 'GET', '/admin/segment/cache');
  if (res.status !== 200) {
    throw new Error(`cache view failed: ${res.status} ${res.body}`);
  }
  return res.json<{ buffers: SegmentBufferView[] }>().buffers.find((b) => b.key === tag);
}

/** Asserts that the list is strictly increasing. */
export function expectIncreasing(ids: readonly bigint[]): void {
  for (let i = 1; i < ids.length; i++) {
    if (ids[i] <= ids[i - 1]) {
      throw new Error(`not strictly increasing at ${i}: ${ids[i - 1]} then ${ids[i]}`);
    }
  }
}

/** Asserts that no ID occurs twice; returns how many there are. */
export function expectUnique(ids: readonly bigint[]): number {
  const sorted = BigInt64Array.from(ids).sort();
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i] === sorted[i - 1]) {
      throw new Error(`duplicate ID ${sorted[i]}`);
    }
  }
  return sorted.length;
}
