/**
 * A strict reader of the replies on the pop connection (pop-connection.ts): RESP2 bytes in,
 * accepted queue indexes out, without one Buffer or string per popped entry (ioredis spends ~200 ns
 * per entry of an `LPOP key 1000` reply making a Buffer of it). This file frames the replies; a
 * pop's entries are read into indexes by resp-index-array.ts.
 *
 * Every reply is matched, in order, with the command that expects it (`expect`). Anything that is
 * not the reply expected — a type byte that command cannot get, a line that is not a number, an
 * array longer than the count asked, a nested array, a null entry, bytes with no command waiting,
 * a missing CR LF — throws a RespProtocolError: the caller must then drop the connection and fail
 * every command still waiting (`failAll`). Nothing is guessed or resynchronised: an index handed to
 * the wrong request would be a duplicate ID. An error reply (`-…`) is well framed: it fails its
 * own command only. Framework-free; chunk boundaries may fall on any byte.
 */
import { IndexArrayReader } from './resp-index-array';
import { COLON, CR, DOLLAR, Done, Expected, LF, MAX_HEADER_DIGITS, MAX_TEXT, MINUS, NINE, PLUS, POP_BULK, PoppedIndexList, RespErrorReply, RespProtocolError, STAR, ZERO } from './resp-bytes';


/**
 * Where the reader is: the type byte of a top-level reply; the `$` of an array entry; a header
 * line's digits (and sign); a `+`/`-` line's text; the LF after a line's CR; an entry's bytes;
 * the CR after them; the LF after it.
 */
/** The position after chunk[p] when it is `byte`; a RespProtocolError saying `message` otherwise. */
function expectByte(chunk: Uint8Array, p: number, byte: number, message: string): number {
  if (chunk[p] !== byte) {
    throw new RespProtocolError(message);
  }
  return p + 1;
}

const enum State {
  Type,
  EntryType,
  Number,
  Text,
  LineEnd,
  Payload,
  PayloadCR,
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

  /** The entries of the array being read (a pop's reply). */
  private readonly entries = new IndexArrayReader();

  /** Commands waiting for a reply. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /** The next reply is `+OK` (AUTH, SELECT) or an error. */
  expectOk(done: Done<void>): void {
    this.expectStatus('OK', done);
  }

  /** The next reply is the status line `+<status>` (`PONG` to a PING) or an error; any other status does not frame. */
  expectStatus(status: string, done: Done<void>): void {
    this.queue.push({ kind: 'status', status, done });
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
    this.entries.clear();
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
          // The common case: the entries whole in this chunk, read in one go.
          const next = this.entries.readWholeEntries(chunk, p, end);
          if (next > p) {
            p = next;
            this.afterEntry();
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
          p = expectByte(chunk, p, LF, 'expected LF after CR');
          this.endLine();
          break;
        case State.Payload:
          p = this.entries.readPayload(chunk, p, end);
          if (this.entries.payloadDone) {
            this.state = State.PayloadCR;
          }
          break;
        case State.PayloadCR:
          p = expectByte(chunk, p, CR, 'an entry is longer than its length');
          this.state = State.PayloadLF;
          break;
        case State.PayloadLF:
          p = expectByte(chunk, p, LF, 'expected LF after an entry');
          this.entries.endEntry();
          this.afterEntry();
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
      (type === PLUS && kind === 'status') ||
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
        if (this.lineText !== (this.current() as Extract<Expected, { kind: 'status' }>).status) {
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
        this.entries.start(value, e.maxIndex);
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
        this.entries.startEntry(value);
        this.state = value === 0 ? State.PayloadCR : State.Payload;
        return;
      }
    }
    throw new RespProtocolError('unreachable line type');
  }


  /** An entry was read: the array's reply is complete after its last one. */
  private afterEntry(): void {
    if (this.entries.left === 0) {
      this.finish(null, this.entries.take());
    } else {
      this.state = State.EntryType;
    }
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
