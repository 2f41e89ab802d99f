import { Logger } from '@nestjs/common';
import { composeQueueId } from '../../../src/queue-id/core/queue-id-layout';
import { errorKindOf, flush, gatePassFor, queueFixture } from './queue-fixture';

const APP = 3;
const SHARD = 9;
const gatePass = gatePassFor(SHARD);
const limitAt = (maxIndex: bigint): bigint => composeQueueId(maxIndex, SHARD, APP);

/** What one single get answers: its ID, or the error kind it was refused with. */
type Answer = string | { error: string | undefined };

/** `gets` single gets through `getOneText` (the route's path) or through `get` (the general path). */
async function answers(env: Record<string, string>, entries: string[], maxLimitId: bigint, gets: number, viaText: boolean) {
  const f = queueFixture(env);
  await f.addApp(APP, 4, maxLimitId);
  f.lists.append(APP, SHARD, ...entries);
  // Gets the route's path serves without the general one (`get`), which shares the pops.
  const general = jest.spyOn(f.service, 'get');
  const out: Answer[] = [];
  for (let i = 0; i < gets; i++) {
    const p = viaText ? f.service.getOneText(APP, gatePass) : f.service.get(APP, gatePass, 1).then((ids) => ids[0].toString());
    try {
      out.push(await p);
    } catch {
      out.push({ error: await errorKindOf(p) });
    }
    // A background refill the get started runs on its own: settled before the next get, whichever
    // path (the route's takes fewer promise turns than get's).
    await flush();
  }
  return { out, left: f.lists.entries(APP, SHARD), allocations: f.repo.allocations.length, fastGets: gets - general.mock.calls.length };
}

describe('QueueIdService.getOneText (the single get route): the same answers as get(…, 1)', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  const cases: Array<[string, string[], bigint, number]> = [
    ['valid entries, then on-demand refills of an empty list', ['5', '6', '7'], 0n, 12],
    ['malformed entries among valid ones', ['5', 'x1', '', '-3', '6', '0007', '12a'], 0n, 10],
    ['entries above max_limit_id: QUEUE_EXHAUSTED, nothing above handed out', ['18', '19', '20', '21', '22'], limitAt(20n), 6],
    ['16-digit entries (one with leading zeros, kept), the largest index', ['0000000000000007', '562949953421311', '8'], 0n, 4],
    ['a 16-digit entry above every limit', ['5', '1000000000000000', '6'], 0n, 3],
    ['an index above 2^39 (bigint arithmetic)', ['600000000000', '600000000001'], 0n, 2],
    ['a long list (refill-ahead: plain pops from the length-read budget)', Array.from({ length: 600 }, (_, i) => String(1000 + i)), 0n, 400],
    [
      'odd entries after a long list (refill-ahead: met by plain pops)',
      [...Array.from({ length: 300 }, (_, i) => String(1000 + i)), 'x', '0000000000000007', '1000000000000000', '1300', '', '1301'],
      0n,
      320,
    ],
    [
      'entries above max_limit_id after a long list',
      [...Array.from({ length: 300 }, (_, i) => String(1000 + i)), '1300', '5000', '1301'],
      limitAt(4000n),
      305,
    ],
  ];

  for (const ahead of ['false', 'true']) {
    for (const [name, entries, limit, gets] of cases) {
      it(`${name} (refill-ahead ${ahead})`, async () => {
        const env = { QUEUE_REFILL_AHEAD: ahead };
        const general = await answers(env, entries, limit, gets, false);
        const route = await answers(env, entries, limit, gets, true);
        expect({ out: route.out, left: route.left, allocations: route.allocations }).toEqual({
          out: general.out,
          left: general.left,
          allocations: general.allocations,
        });
        expect(route.out.some((a) => typeof a === 'string')).toBe(true);
        // The route's own path serves gets: always without refill-ahead, with it once the
        // length-read budget allows (a list long enough).
        if (ahead === 'false' || entries.length > 100) {
          expect(route.fastGets).toBeGreaterThan(0);
        }
      });
    }
  }

  it('forgets the length-read budget when a plain pop finds the list empty: the next pop reads the length', async () => {
    const f = queueFixture({ QUEUE_REFILL_AHEAD: 'true' });
    await f.addApp(APP, 4);
    f.lists.append(APP, SHARD, ...Array.from({ length: 600 }, (_, i) => String(1000 + i)));
    const pops = jest.spyOn(f.lists, 'popIndexes');
    // [pops that read the length, plain pops], all single pops on the same connection.
    const counts = (): number[] => [pops.mock.calls.filter((c) => c[4]).length, pops.mock.calls.filter((c) => !c[4]).length];
    await f.service.getOneText(APP, gatePass); // reads the length: a budget is earned
    await f.service.getOneText(APP, gatePass); // plain
    expect(counts()).toEqual([1, 1]);
    expect(pops.mock.calls.every((c) => c[2] === 1)).toBe(true);
    // The list is emptied behind this instance's back (another instance, an admin delete).
    await f.lists.pop(APP, SHARD, 1000);
    const general = jest.spyOn(f.service, 'get');
    await f.service.getOneText(APP, gatePass); // plain, finds nothing: on-demand refill
    expect(counts()).toEqual([1, 2]);
    expect(general).not.toHaveBeenCalled();
    await f.service.getOneText(APP, gatePass); // the length is read again
    expect(counts()).toEqual([2, 2]);
  });

  it('keeps the length-read budget when a plain pop drops an entry (malformed: logged), forgets it only on an empty pop', async () => {
    const f = queueFixture({ QUEUE_REFILL_AHEAD: 'true' });
    await f.addApp(APP, 4);
    f.lists.append(APP, SHARD, '1000', '1001', 'x', ...Array.from({ length: 600 }, (_, i) => String(1002 + i)));
    const pops = jest.spyOn(f.lists, 'popIndexes');
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const poppedNothing = jest.spyOn(f.pops, 'poppedNothing');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await f.service.getOneText(APP, gatePass)); // a length read, then plain pops (one finds 'x')
    }
    expect(ids).toEqual([1000, 1001, 1002, 1003].map((index) => composeQueueId(BigInt(index), SHARD, APP).toString()));
    expect(pops.mock.calls.filter((c) => c[4]).length).toBe(1);
    expect(poppedNothing).not.toHaveBeenCalled();
    expect(warn.mock.calls.map((c) => String(c[0]))).toEqual([`dropped a malformed entry from the list of app ${APP} shard ${SHARD}`]);
    warn.mockRestore();
  });

  it('answers 503 BACKEND_UNAVAILABLE when the client throws instead of rejecting', async () => {
    const f = queueFixture();
    await f.addApp(APP, 4);
    jest.spyOn(f.lists, 'popIndexes').mockImplementation(() => {
      throw new TypeError("Cannot read properties of undefined (reading 'join')");
    });
    expect(await errorKindOf(f.service.getOneText(APP, gatePass))).toBe('BACKEND_UNAVAILABLE');
  });

  it('answers QUEUE_APP_NOT_FOUND for an unknown app, as get does', async () => {
    const f = queueFixture();
    await f.addApp(APP, 4);
    expect(await errorKindOf(f.service.getOneText(APP + 1, gatePass))).toBe(await errorKindOf(f.service.get(APP + 1, gatePass, 1)));
  });

  it('answers 503 BACKEND_UNAVAILABLE when the pop fails, as get does', async () => {
    const f = queueFixture();
    await f.addApp(APP, 4);
    f.lists.append(APP, SHARD, '1', '2');
    f.lists.fail = new Error('connection lost');
    const viaText = await errorKindOf(f.service.getOneText(APP, gatePass));
    expect(viaText).toBe(await errorKindOf(f.service.get(APP, gatePass, 1)));
    expect(viaText).toBe('BACKEND_UNAVAILABLE');
  });
});
