/**
 * A client process of the client failover test (client-failover.spec.ts): one ShardleafClient
 * against the service instances in CLIENT_SERVERS. Commands on stdin, one per line:
 *   `go N`  take N more IDs of each generator (queue over several gatePasses, segment, snowflake),
 *           mostly in batches, some one by one; answers `done {json}` with the totals and errors;
 *   `end`   writes every ID taken, per generator, to CLIENT_OUT/<name>-<generator>.bin (raw
 *           little-endian uint64), closes the client, answers `written` and exits.
 * Run with `node -r ts-node/register/transpile-only`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ShardleafClient } from '../../../packages/client/src';

const servers = (process.env.CLIENT_SERVERS ?? '').split(',');
const name = process.env.CLIENT_NAME ?? 'client';
const out = process.env.CLIENT_OUT ?? '.';
const appId = Number(process.env.CLIENT_APP_ID ?? '1');
const tag = process.env.CLIENT_TAG ?? 'orders';
const GATE_PASSES = ['alice', 'bob', 'carol', 'dave'];
const BATCH = 1000;

const client = new ShardleafClient({ servers, timeoutMs: 5000, maxLease: 50_000, backoffBaseMs: 50, backoffMaxMs: 1000 });

class Ids {
  private data = new BigUint64Array(1 << 20);
  length = 0;

  push(ids: readonly bigint[]): void {
    if (this.length + ids.length > this.data.length) {
      const bigger = new BigUint64Array(Math.max(this.data.length * 2, this.length + ids.length));
      bigger.set(this.data.subarray(0, this.length));
      this.data = bigger;
    }
    for (const id of ids) {
      this.data[this.length++] = id;
    }
  }

  bytes(): Buffer {
    return Buffer.from(this.data.buffer, 0, this.length * 8);
  }
}

const taken = { queue: new Ids(), segment: new Ids(), snowflake: new Ids() };
const errors: string[] = [];

async function take(generator: keyof typeof taken, n: number): Promise<void> {
  const ids = taken[generator];
  let left = n;
  let round = 0;
  while (left > 0) {
    const k = Math.min(BATCH, left);
    try {
      if (round % 50 === 49) {
        // Now and then one by one, through the single-ID path.
        const one =
          generator === 'queue'
            ? await client.queueId(appId, GATE_PASSES[round % GATE_PASSES.length])
            : generator === 'segment'
              ? await client.segmentId(tag)
              : await client.snowflakeId('chaos');
        ids.push([one]);
        left -= 1;
      } else {
        const batch =
          generator === 'queue'
            ? await client.queueIdBatch(appId, GATE_PASSES[round % GATE_PASSES.length], k)
            : generator === 'segment'
              ? await client.segmentIdBatch(tag, k)
              : await client.snowflakeIdBatch('chaos', k);
        ids.push(batch);
        left -= batch.length;
      }
    } catch (err) {
      errors.push(`${generator}: ${(err as Error).name}: ${(err as Error).message}`.slice(0, 500));
      if (errors.length > 100) {
        throw err;
      }
    }
    round++;
  }
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [command, arg] = line.trim().split(' ');
  if (command === 'go') {
    const n = Number(arg);
    void Promise.all([take('queue', n), take('segment', n), take('snowflake', n)]).then(
      () => {
        const totals = { queue: taken.queue.length, segment: taken.segment.length, snowflake: taken.snowflake.length };
        process.stdout.write(`done ${JSON.stringify({ totals, errors })}\n`);
      },
      (err: unknown) => process.stdout.write(`failed ${JSON.stringify({ error: String(err), errors })}\n`),
    );
  } else if (command === 'end') {
    for (const [generator, ids] of Object.entries(taken)) {
      writeFileSync(join(out, `${name}-${generator}.bin`), ids.bytes());
    }
    void client.close().then(() => {
      process.stdout.write('written\n');
      process.exit(0);
    });
  }
});
