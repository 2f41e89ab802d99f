import { acceptEntries } from '../../../src/queue-id/core/queue-batch';
import { MAX_INDEX } from '../../../src/queue-id/core/queue-id-layout';
import { RespPopReader } from '../../../src/queue-id/redis/resp/resp-pop-reader';
import { PoppedIndexList, RespErrorReply, RespProtocolError } from '../../../src/queue-id/redis/resp/resp-bytes';
import { seededRandom as rng } from '../../support/seeded-random';

/**
 * The batch pop's reply reader (core/resp-pop-reader.ts): the indexes it reads from the raw RESP
 * bytes must be exactly acceptEntries' on the same entries, wherever the chunks split; anything
 * that does not frame fails every waiting command; error replies fail their command only.
 */

const bulk = (entry: Buffer): Buffer => Buffer.concat([Buffer.from(`$${entry.length}\r\n`), entry, Buffer.from('\r\n')]);
const arrayReply = (entries: Buffer[]): Buffer => Buffer.concat([Buffer.from(`*${entries.length}\r\n`), ...entries.map(bulk)]);

/** What acceptEntries gives for these entries. */
function expected(entries: Buffer[], maxIndex: bigint): PoppedIndexList {
  const indexes: number[] = [];
  const { overLimit, malformed } = acceptEntries(entries, maxIndex, indexes);
  return { indexes, overLimit, malformed };
}

type Outcome = { err: Error | null; value?: unknown };

/** Feeds `bytes` in the chunks cut at `cuts` (sorted positions); returns the outcomes in order, or the thrown error. */
function feedChunks(reader: RespPopReader, bytes: Buffer, cuts: number[]): RespProtocolError | null {
  let from = 0;
  try {
    for (const cut of [...cuts, bytes.length]) {
      if (cut > from) {
        // A copy, so that the reader cannot rely on the bytes of a chunk it was given earlier.
        reader.feed(Buffer.from(bytes.subarray(from, cut)));
      }
      from = cut;
    }
  } catch (err) {
    if (err instanceof RespProtocolError) {
      return err;
    }
    throw err;
  }
  return null;
}

function collector(): { outcomes: Outcome[]; done: (err: Error | null, value?: unknown) => void } {
  const outcomes: Outcome[] = [];
  return { outcomes, done: (err, value) => outcomes.push({ err, value }) };
}

const MALFORMED = ['', ' 1', '1 ', '-1', '+1', '1.0', '1e3', '0x10', 'abc', '12345678901234567', '١٢', '1,2', '"7"', '12\r\n34', '$3\r\n', '\r\n'];

/** A list of mixed entries: indexes of 1..16 digits (leading zeros), edges of the limits, malformed ones. */
function mixedEntries(random: () => number, count: number): Buffer[] {
  const edges = [0n, 1n, 16383n, 2n ** 39n - 1n, 2n ** 39n, 2n ** 41n, 2n ** 41n + 1n, 5000n * 16384n, MAX_INDEX - 1n, MAX_INDEX, MAX_INDEX + 1n, 10n ** 15n - 1n, 10n ** 15n, 9_999_999_999_999_999n, 9_007_199_254_740_993n];
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const roll = random();
    let s: string;
    if (roll < 0.5) {
      const digits = 1 + Math.floor(random() * 16);
      s = '';
      for (let d = 0; d < digits; d++) {
        s += String(Math.floor(random() * 10));
      }
    } else if (roll < 0.75) {
      s = edges[Math.floor(random() * edges.length)].toString();
    } else if (roll < 0.85) {
      s = `0${Math.floor(random() * 1e6)}`;
    } else {
      s = MALFORMED[Math.floor(random() * MALFORMED.length)];
    }
    out.push(Buffer.from(s, 'utf8'));
  }
  return out;
}

const LIMITS = [-1n, 0n, 1n, 2n ** 41n, 5000n * 16384n, 10n ** 15n, MAX_INDEX];

describe('RespPopReader (queue-id/redis/resp/resp-pop-reader.ts)', () => {
  it('reads generated pop replies exactly as acceptEntries reads their entries, in one chunk and in random chunks', () => {
    const random = rng(20261124);
    for (let round = 0; round < 300; round++) {
      const count = 1 + Math.floor(random() * 200);
      const entries = mixedEntries(random, count);
      const maxIndex = LIMITS[Math.floor(random() * LIMITS.length)];
      const bytes = arrayReply(entries);
      const cutsSets: number[][] = [[]];
      const cuts: number[] = [];
      for (let p = 1; p < bytes.length; p++) {
        if (random() < 0.05) {
          cuts.push(p);
        }
      }
      cutsSets.push(cuts);
      // One byte at a time.
      if (round % 10 === 0) {
        cutsSets.push(Array.from({ length: bytes.length - 1 }, (_, i) => i + 1));
      }
      for (const c of cutsSets) {
        const reader = new RespPopReader();
        const { outcomes, done } = collector();
        reader.expectPop(count + Math.floor(random() * 3), maxIndex, done);
        expect(feedChunks(reader, bytes, c)).toBeNull();
        expect(outcomes).toEqual([{ err: null, value: expected(entries, maxIndex) }]);
        expect(reader.pending).toBe(0);
      }
    }
  });

  it('reads a pipeline (AUTH, SELECT, pop + LLEN, an error, nil, empty, pop + LLEN) split at every byte position', () => {
    const random = rng(7);
    const first = mixedEntries(random, 40);
    const second = mixedEntries(random, 25);
    const maxIndex = 2n ** 41n;
    const bytes = Buffer.concat([
      Buffer.from('+OK\r\n+OK\r\n'),
      arrayReply(first),
      Buffer.from(':12345\r\n'),
      Buffer.from('-WRONGTYPE Operation against a key holding the wrong kind of value\r\n'),
      Buffer.from(':0\r\n*-1\r\n*0\r\n'),
      arrayReply(second),
      Buffer.from('-LOADING Redis is loading the dataset in memory\r\n'),
    ]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      for (const cuts of [[cut], [cut, Math.min(bytes.length, cut + 3)]]) {
        const reader = new RespPopReader();
        const { outcomes, done } = collector();
        reader.expectOk(done);
        reader.expectOk(done);
        reader.expectPop(40, maxIndex, done);
        reader.expectInteger(done);
        reader.expectPop(10, maxIndex, done);
        reader.expectInteger(done);
        reader.expectPop(10, maxIndex, done);
        reader.expectPop(10, maxIndex, done);
        reader.expectPop(25, maxIndex, done);
        reader.expectInteger(done);
        expect(feedChunks(reader, bytes, cuts)).toBeNull();
        expect(outcomes.map((o) => (o.err ? `${o.err.name}: ${o.err.message}` : o.value))).toEqual([
          undefined,
          undefined,
          expected(first, maxIndex),
          12345,
          'RespErrorReply: WRONGTYPE Operation against a key holding the wrong kind of value',
          0,
          { indexes: [], overLimit: false, malformed: 0 },
          { indexes: [], overLimit: false, malformed: 0 },
          expected(second, maxIndex),
          'RespErrorReply: LOADING Redis is loading the dataset in memory',
        ]);
        expect(reader.pending).toBe(0);
      }
    }
  });

  it("reads Redis 6.2's null bulk ($-1) for a pop of a missing list as no entries, split at every byte", () => {
    const bytes = Buffer.concat([Buffer.from('$-1\r\n:0\r\n'), arrayReply([Buffer.from('42')]), Buffer.from(':7\r\n')]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const reader = new RespPopReader();
      const { outcomes, done } = collector();
      reader.expectPop(1000, 100n, done);
      reader.expectInteger(done);
      reader.expectPop(1000, 100n, done);
      reader.expectInteger(done);
      expect(feedChunks(reader, bytes, [cut])).toBeNull();
      expect(outcomes).toEqual([
        { err: null, value: { indexes: [], overLimit: false, malformed: 0 } },
        { err: null, value: 0 },
        { err: null, value: { indexes: [42], overLimit: false, malformed: 0 } },
        { err: null, value: 7 },
      ]);
    }
  });

  it.each([
    ['-MOVED 3999 127.0.0.1:6381\r\n', 'MOVED 3999 127.0.0.1:6381'],
    ['-NOAUTH Authentication required.\r\n', 'NOAUTH Authentication required.'],
    ['-ERR\r\n', 'ERR'],
  ])('fails only its own command on an error reply %j', (reply, message) => {
    const reader = new RespPopReader();
    const { outcomes, done } = collector();
    reader.expectPop(5, 100n, done);
    reader.expectPop(5, 100n, done);
    reader.feed(Buffer.concat([Buffer.from(reply), arrayReply([Buffer.from('7')])]));
    expect(outcomes[0].err).toBeInstanceOf(RespErrorReply);
    expect(outcomes[0].err?.message).toBe(message);
    expect(outcomes[1]).toEqual({ err: null, value: { indexes: [7], overLimit: false, malformed: 0 } });
  });

  it.each([
    ['a status for a pop', 'pop', '+OK\r\n'],
    ['an integer for a pop', 'pop', ':3\r\n'],
    ['a bulk string for a pop', 'pop', '$1\r\n5\r\n'],
    ['an empty bulk string for a pop', 'pop', '$0\r\n\r\n'],
    ['a null bulk of another length for a pop', 'pop', '$-2\r\n'],
    ['a null bulk for LLEN', 'int', '$-1\r\n'],
    ['an array for LLEN', 'int', '*0\r\n'],
    ['an array for AUTH', 'ok', '*0\r\n'],
    ['a status other than OK', 'ok', '+QUEUED\r\n'],
    ['more entries than asked', 'pop', '*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n'],
    ['a nested array', 'pop', '*1\r\n*1\r\n$1\r\n1\r\n'],
    ['a null entry', 'pop', '*2\r\n$1\r\n1\r\n$-1\r\n'],
    ['an integer entry', 'pop', '*1\r\n:1\r\n'],
    ['an entry longer than its length', 'pop', '*2\r\n$2\r\n123\r\n$1\r\n4\r\n'],
    ['an entry shorter than its length', 'pop', '*1\r\n$3\r\n12\r\n'],
    ['a count with a letter', 'pop', '*1a\r\n$1\r\n1\r\n'],
    ['an empty count', 'pop', '*\r\n'],
    ['a negative count other than -1', 'pop', '*-2\r\n'],
    ['a count without CR', 'pop', '*1\n$1\r\n1\r\n'],
    ['CR without LF', 'pop', '*1\r$1\r\n1\r\n'],
    ['an LF inside an error line', 'pop', '-ERR x\ny\r\n'],
    ['a header number too long', 'pop', '*1\r\n$1234567890123456\r\n'],
    ['an unknown type byte', 'int', '?1\r\n'],
    ['a RESP3 type', 'pop', '%1\r\n'],
    ['binary garbage', 'pop', '\u0000\u00ff\u0013'],
  ])('refuses %s and fails every waiting command', (_name, kind, reply) => {
    const bytes = Buffer.from(reply, 'latin1');
    for (let cut = 0; cut <= bytes.length; cut++) {
      const reader = new RespPopReader();
      const { outcomes, done } = collector();
      if (kind === 'pop') {
        reader.expectPop(3, 100n, done);
      } else if (kind === 'int') {
        reader.expectInteger(done);
      } else {
        reader.expectOk(done);
      }
      reader.expectPop(1000, 100n, done);
      const err = feedChunks(reader, bytes, [cut]);
      expect(err).toBeInstanceOf(RespProtocolError);
      // Nothing was delivered from a reply that did not frame; failAll fails every waiting command.
      expect(outcomes).toEqual([]);
      reader.failAll(err as Error);
      expect(outcomes.map((o) => o.err)).toEqual([err, err]);
      expect(reader.pending).toBe(0);
    }
  });

  it('refuses bytes that arrive with no command waiting, after the last reply', () => {
    const reader = new RespPopReader();
    const { outcomes, done } = collector();
    reader.expectInteger(done);
    expect(() => reader.feed(Buffer.from(':1\r\n:2\r\n'))).toThrow(RespProtocolError);
    expect(outcomes).toEqual([{ err: null, value: 1 }]);
    expect(() => new RespPopReader().feed(Buffer.from('*-1\r\n'))).toThrow(RespProtocolError);
  });

  it("reads a PING's +PONG as its status; another status (+OK) for it does not frame", () => {
    const reader = new RespPopReader();
    const { outcomes, done } = collector();
    reader.expectStatus('PONG', done);
    reader.expectOk(done);
    reader.feed(Buffer.from('+PO'));
    reader.feed(Buffer.from('NG\r\n+OK\r\n'));
    expect(outcomes).toEqual([{ err: null, value: undefined }, { err: null, value: undefined }]);
    const wrong = new RespPopReader();
    wrong.expectStatus('PONG', done);
    expect(() => wrong.feed(Buffer.from('+OK\r\n'))).toThrow(RespProtocolError);
    const typed = new RespPopReader();
    typed.expectStatus('PONG', done);
    expect(() => typed.feed(Buffer.from(':1\r\n'))).toThrow(RespProtocolError);
  });

  it('compares 16-digit entries exactly (around 2^53 and the 49-bit maximum)', () => {
    const cases: Array<[string, bigint]> = [
      ['9007199254740993', 9_007_199_254_740_993n],
      ['9007199254740993', 9_007_199_254_740_992n],
      ['0562949953421311', MAX_INDEX],
      ['0562949953421312', MAX_INDEX],
      ['0562949953421311', MAX_INDEX - 1n],
      ['9999999999999999', MAX_INDEX],
    ];
    for (const [entry, limit] of cases) {
      const entries = [Buffer.from(entry)];
      const bytes = arrayReply(entries);
      for (let cut = 0; cut <= bytes.length; cut++) {
        const reader = new RespPopReader();
        const { outcomes, done } = collector();
        reader.expectPop(1, limit, done);
        expect(feedChunks(reader, bytes, [cut])).toBeNull();
        expect(outcomes).toEqual([{ err: null, value: expected(entries, limit) }]);
      }
    }
  });
});
