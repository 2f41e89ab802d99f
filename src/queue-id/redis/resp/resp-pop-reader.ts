/**
 * A strict reader of the replies on the batch-pop connection (raw-batch-pop.ts): RESP2 bytes in,
 * accepted queue indexes out, without one Buffer or string per popped entry. ioredis (redis-parser)
 * spends ~200 ns per entry of an `LPOP key 1000` reply making a Buffer of it; here the digits of
 * each entry are read straight from the socket's chunk into a number, under the accept rules of
 * acceptEntries (queue-batch.ts): digits only, 1..16 of them, 16-digit entries compared exactly,
 * entries above the shard's limit dropped and flagged, the rest counted as malformed.
 *
 * Every reply is matched, in order, with the command that expects it (`expect`). Anything that is
 * not the reply expected — a type byte that command cannot get, a line that is not a number, an
 * array longer than the count asked, a nested array, a null entry, bytes with no command waiting,
 * a missing CR LF — throws a RespProtocolError: the caller must then drop the connection and fail
 * every command still waiting (`failAll`). Nothing is guessed or resynchronised: an index handed to
 * the wrong request would be a duplicate ID. An error reply (`-…`) is well framed: it fails its
 * own command only. Framework-free; chunk boundaries may fall on any byte.
 */
import { EXACT_DIGITS, MAX_ENTRY_DIGITS } from '../../core/queue-batch';

/** Accepted indexes of one `LPOP key n` reply (as acceptEntries gives them). */
export interface PoppedIndexList {
  indexes: number[];
  /** An entry above the limit was dropped. */
  overLimit: boolean;
  /** Entries that were not decimal indexes (dropped). */
  malformed: number;
}

/** A reply that does not frame as the command expects: the connection cannot be trusted any more. */
export class RespProtocolError extends Error {
  constructor(message: string) {
    super(`batch-pop connection: ${message}`);
    this.name = 'RespProtocolError';
  }
}

/** An error reply of Redis (`-ERR …`, `-MOVED …`, `-NOAUTH …`): fails its command only. */
export class RespErrorReply extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RespErrorReply';
  }
}

type Done<T> = (err: Error | null, value?: T) => void;

/** What a command waits for. */
type Expected =
  | { kind: 'ok'; done: Done<void> }
  | { kind: 'int'; done: Done<number> }
  | { kind: 'pop'; count: number; maxIndex: bigint; done: Done<PoppedIndexList> };

const CR = 0x0d;
const LF = 0x0a;
const ZERO = 0x30;
const NINE = 0x39;
const DOLLAR = 0x24;
const STAR = 0x2a;
const COLON = 0x3a;
const PLUS = 0x2b;
const MINUS = 0x2d;
/**
 * Not a byte: the line type of a top-level bulk reply to a pop. Redis 6.2 answers `LPOP key n` on
 * a missing key with a null bulk (`$-1`), 7.0 with a null array (`*-1`); any other bulk is refused.
 */
const POP_BULK = 0x100;

/** Digits of a header number (an array count, a bulk length, an integer reply). */
const MAX_HEADER_DIGITS = 15;
/** Longest error or status line kept (longer ones are cut, not refused). */
const MAX_TEXT = 1024;

const enum State {
  /** The type byte of a top-level reply. */
  Type,
  /** The `$` of an entry of the array being read. */
  EntryType,
  /** The digits (and sign) of a header line. */
  Number,
  /** The text of a `+` or `-` line. */
  Text,
  /** The LF after a line's CR. */
  LineEnd,
  /** An entry's bytes. */
  Payload,
  /** The CR after an entry's bytes. */
  PayloadCR,
  /** The LF after it. */
  PayloadLF,
}

export class RespPopReader {
  private readonly queue: Expected[] = [];
  private head = 0;

  private state = State.Type;
  /** The line being read: its type byte, sign, value and digit count (numbers) or text. */
  private lineType = 0;
  private lineNegative = false;
  private lineValue = 0;
  private lineDigits = 0;
  private lineText = '';

  /** The array being read (a pop's reply). */
  private left = 0;
  private out: number[] = [];
  private overLimit = false;
  private malformed = 0;
  private max = 0;
  private maxIndex = 0n;

  /** The entry being read across chunks: bytes left, its length, digits so far. */
  private payloadLeft = 0;
  private entryLength = 0;
  private entryOk = true;
  private entryValue = 0;
  private entryPrev = 0;
  private entryLast = 0;

  /** Commands waiting for a reply. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /** The next reply is `+OK` (AUTH, SELECT) or an error. */
  expectOk(done: Done<void>): void {
    this.queue.push({ kind: 'ok', done });
  }

  /** The next reply is an integer (LLEN) or an error. */
  expectInteger(done: Done<number>): void {
    this.queue.push({ kind: 'int', done });
  }

  /** The next reply is the array of an `LPOP key count` (or nil) or an error; indexes above maxIndex are dropped. */
  expectPop(count: number, maxIndex: bigint, done: Done<PoppedIndexList>): void {
    this.queue.push({ kind: 'pop', count, maxIndex, done });
  }

  /** Fails every waiting command (after a protocol error or a lost connection); the reader is then empty. */
  failAll(err: Error): void {
    const waiting = this.queue.slice(this.head);
    this.queue.length = 0;
    this.head = 0;
    this.state = State.Type;
    this.out = [];
    for (const e of waiting) {
      e.done(err);
    }
  }

  /** Reads a chunk of the connection; throws RespProtocolError on anything unexpected. */
  feed(chunk: Uint8Array): void {
    const end = chunk.length;
    let p = 0;
    while (p < end) {
      switch (this.state) {
        case State.Type:
          p = this.readType(chunk, p);
          break;
        case State.EntryType: {
          // The common case: a whole entry in this chunk, read in one go.
          const next = this.readWholeEntry(chunk, p, end);
          if (next >= 0) {
            p = next;
            break;
          }
          if (chunk[p] !== DOLLAR) {
            throw new RespProtocolError(`expected an entry ('$'), got byte ${chunk[p]}`);
          }
          this.startLine(DOLLAR);
          p++;
          break;
        }
        case State.Number:
          p = this.readNumber(chunk, p, end);
          break;
        case State.Text:
          p = this.readText(chunk, p, end);
          break;
        case State.LineEnd:
          if (chunk[p] !== LF) {
            throw new RespProtocolError('expected LF after CR');
          }
          p++;
          this.endLine();
          break;
        case State.Payload:
          p = this.readPayload(chunk, p, end);
          break;
        case State.PayloadCR:
          if (chunk[p] !== CR) {
            throw new RespProtocolError('an entry is longer than its length');
          }
          p++;
          this.state = State.PayloadLF;
          break;
        case State.PayloadLF:
          if (chunk[p] !== LF) {
            throw new RespProtocolError('expected LF after an entry');
          }
          p++;
          this.endEntry();
          break;
      }
    }
  }

  private current(): Expected {
    if (this.head >= this.queue.length) {
      throw new RespProtocolError('a reply arrived with no command waiting for it');
    }
    return this.queue[this.head];
  }

  private readType(chunk: Uint8Array, p: number): number {
    const type = chunk[p];
    const kind = this.current().kind;
    const fits =
      type === MINUS ||
      (type === PLUS && kind === 'ok') ||
      (type === COLON && kind === 'int') ||
      (type === STAR && kind === 'pop') ||
      (type === DOLLAR && kind === 'pop');
    if (!fits) {
      throw new RespProtocolError(`unexpected reply type byte ${type} for a ${kind} reply`);
    }
    this.startLine(type === DOLLAR ? POP_BULK : type);
    return p + 1;
  }

  private startLine(type: number): void {
    this.lineType = type;
    this.lineNegative = false;
    this.lineValue = 0;
    this.lineDigits = 0;
    this.lineText = '';
    this.state = type === PLUS || type === MINUS ? State.Text : State.Number;
  }

  private readNumber(chunk: Uint8Array, p: number, end: number): number {
    while (p < end) {
      const c = chunk[p];
      if (c >= ZERO && c <= NINE) {
        if (++this.lineDigits > MAX_HEADER_DIGITS) {
          throw new RespProtocolError('a header number is too long');
        }
        this.lineValue = this.lineValue * 10 + (c - ZERO);
      } else if (c === MINUS && this.lineDigits === 0 && !this.lineNegative) {
        this.lineNegative = true;
      } else if (c === CR && this.lineDigits > 0) {
        this.state = State.LineEnd;
        return p + 1;
      } else {
        throw new RespProtocolError(`unexpected byte ${c} in a header number`);
      }
      p++;
    }
    return p;
  }

  private readText(chunk: Uint8Array, p: number, end: number): number {
    const start = p;
    while (p < end) {
      const c = chunk[p];
      if (c === CR) {
        this.appendText(chunk, start, p);
        this.state = State.LineEnd;
        return p + 1;
      }
      if (c === LF) {
        throw new RespProtocolError('LF inside a status or error line');
      }
      p++;
    }
    this.appendText(chunk, start, p);
    return p;
  }

  private appendText(chunk: Uint8Array, from: number, to: number): void {
    if (this.lineText.length < MAX_TEXT && to > from) {
      this.lineText += Buffer.from(chunk.buffer, chunk.byteOffset + from, Math.min(to - from, MAX_TEXT)).toString('latin1');
    }
  }

  /** A whole line was read (its CR LF included). */
  private endLine(): void {
    const value = this.lineNegative ? -this.lineValue : this.lineValue;
    switch (this.lineType) {
      case MINUS:
        this.finish(new RespErrorReply(this.lineText));
        return;
      case PLUS: {
        if (this.lineText !== 'OK') {
          throw new RespProtocolError(`unexpected status '${this.lineText}'`);
        }
        this.finish(null);
        return;
      }
      case COLON:
        this.finish(null, value);
        return;
      case STAR: {
        const e = this.current() as Extract<Expected, { kind: 'pop' }>;
        if (value === -1 || value === 0) {
          // nil (no list) or empty: no entries.
          this.finish(null, { indexes: [], overLimit: false, malformed: 0 });
          return;
        }
        if (value < 0 || value > e.count) {
          throw new RespProtocolError(`an array of ${value} entries for a pop of ${e.count}`);
        }
        this.left = value;
        this.out = [];
        this.overLimit = false;
        this.malformed = 0;
        this.maxIndex = e.maxIndex;
        this.max = Number(e.maxIndex);
        this.state = State.EntryType;
        return;
      }
      case POP_BULK: {
        if (value !== -1) {
          throw new RespProtocolError(`a bulk reply of length ${value} to a pop (only the null bulk $-1 of Redis 6.2 is a reply)`);
        }
        this.finish(null, { indexes: [], overLimit: false, malformed: 0 });
        return;
      }
      case DOLLAR: {
        if (this.lineNegative) {
          throw new RespProtocolError('a null entry in a pop reply');
        }
        this.startEntry(value);
        return;
      }
    }
    throw new RespProtocolError('unreachable line type');
  }

  private startEntry(length: number): void {
    this.payloadLeft = length;
    this.entryLength = length;
    this.entryOk = length > 0 && length <= MAX_ENTRY_DIGITS;
    this.entryValue = 0;
    this.entryPrev = 0;
    this.entryLast = 0;
    this.state = length === 0 ? State.PayloadCR : State.Payload;
  }

  private readPayload(chunk: Uint8Array, p: number, end: number): number {
    const stop = Math.min(end, p + this.payloadLeft);
    this.payloadLeft -= stop - p;
    if (this.entryOk) {
      let n = this.entryValue;
      let prev = this.entryPrev;
      let last = this.entryLast;
      for (let i = p; i < stop; i++) {
        const c = chunk[i];
        if (c < ZERO || c > NINE) {
          this.entryOk = false;
          break;
        }
        prev = n;
        last = c - ZERO;
        n = n * 10 + last;
      }
      this.entryValue = n;
      this.entryPrev = prev;
      this.entryLast = last;
    }
    // A malformed entry's bytes are skipped: its length frames it.
    if (this.payloadLeft === 0) {
      this.state = State.PayloadCR;
    }
    return stop;
  }

  /** An entry and its CR LF were read: accept it or drop it as acceptEntries does. */
  private endEntry(): void {
    this.accept(this.entryOk, this.entryLength, this.entryValue, this.entryPrev, this.entryLast);
    if (--this.left === 0) {
      this.endArray();
    } else {
      this.state = State.EntryType;
    }
  }

  /** prev and last are read only for 16-digit entries: the value of the first 15 digits, the last digit. */
  private accept(ok: boolean, length: number, n: number, prev: number, last: number): void {
    if (!ok) {
      this.malformed++;
      return;
    }
    if (length > EXACT_DIGITS) {
      // 16 digits: n may be rounded; prev (the first 15 digits) is exact, and so is the last digit.
      const exact = BigInt(prev) * 10n + BigInt(last);
      if (exact > this.maxIndex) {
        this.overLimit = true;
        return;
      }
      this.out.push(Number(exact));
      return;
    }
    if (n > this.max) {
      this.overLimit = true;
      return;
    }
    this.out.push(n);
  }

  private endArray(): void {
    const result: PoppedIndexList = { indexes: this.out, overLimit: this.overLimit, malformed: this.malformed };
    this.out = [];
    this.finish(null, result);
  }

  /**
   * `$<len>\r\n<bytes>\r\n` entirely within chunk[p, end): read and accepted, returns the position
   * after it; -1 when it does not fit (the byte-by-byte states take over, nothing consumed).
   */
  private readWholeEntry(chunk: Uint8Array, p: number, end: number): number {
    if (chunk[p] !== DOLLAR) {
      return -1;
    }
    let q = p + 1;
    let length = 0;
    let digits = 0;
    while (q < end) {
      const c = chunk[q];
      if (c < ZERO || c > NINE) {
        break;
      }
      length = length * 10 + (c - ZERO);
      q++;
      if (++digits > MAX_HEADER_DIGITS) {
        return -1;
      }
    }
    // Needs: CR LF, the bytes, CR LF; anything odd is left to the byte-by-byte states to refuse.
    if (digits === 0 || q + 1 >= end || chunk[q] !== CR || chunk[q + 1] !== LF) {
      return -1;
    }
    const start = q + 2;
    const stop = start + length;
    if (stop + 2 > end) {
      return -1;
    }
    if (chunk[stop] !== CR || chunk[stop + 1] !== LF) {
      throw new RespProtocolError('an entry is not followed by CR LF');
    }
    let ok = length > 0 && length <= MAX_ENTRY_DIGITS;
    let n = 0;
    if (ok) {
      for (let i = start; i < stop; i++) {
        const c = chunk[i];
        if (c < ZERO || c > NINE) {
          ok = false;
          break;
        }
        n = n * 10 + (c - ZERO);
      }
    }
    if (ok && length > EXACT_DIGITS) {
      let prev = 0;
      for (let i = start; i < stop - 1; i++) {
        prev = prev * 10 + (chunk[i] - ZERO);
      }
      this.accept(true, length, n, prev, chunk[stop - 1] - ZERO);
    } else {
      this.accept(ok, length, n, 0, 0);
    }
    if (--this.left === 0) {
      this.endArray();
    }
    return stop + 2;
  }

  /** The current command's reply is complete. */
  private finish(err: Error | null, value?: unknown): void {
    const e = this.queue[this.head];
    this.queue[this.head] = undefined as unknown as Expected;
    this.head++;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.state = State.Type;
    (e.done as Done<unknown>)(err, value);
  }
}
