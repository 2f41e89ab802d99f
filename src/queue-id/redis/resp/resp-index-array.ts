import { EXACT_DIGITS, MAX_ENTRY_DIGITS } from '../../core/queue-batch';
import { CR, DOLLAR, LF, MAX_HEADER_DIGITS, NINE, PoppedIndexList, RespProtocolError, ZERO } from './resp-bytes';

/**
 * The entries of one `LPOP key n` reply read straight into indexes, under the accept rules of
 * acceptEntries (queue-batch.ts): digits only, 1..16 of them, 16-digit entries compared exactly,
 * entries above the shard's limit dropped and flagged, the rest counted as malformed. An entry
 * whole in one chunk is read in one go (`readWholeEntries`); one cut across chunks byte by byte
 * (`startEntry`, `readPayload`, `endEntry`) while RespPopReader frames it.
 */
export class IndexArrayReader {
  /** Entries of the array still to read. */
  left = 0;
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

  /** An array of `count` entries starts; indexes above maxIndex are dropped. */
  start(count: number, maxIndex: bigint): void {
    this.left = count;
    this.out = [];
    this.overLimit = false;
    this.malformed = 0;
    this.maxIndex = maxIndex;
    this.max = Number(maxIndex);
  }

  /** The array read so far (the reader was failed): dropped. */
  clear(): void {
    this.out = [];
  }

  /** The array's result, once `left` is 0. */
  take(): PoppedIndexList {
    const result: PoppedIndexList = { indexes: this.out, overLimit: this.overLimit, malformed: this.malformed };
    this.out = [];
    return result;
  }

  /** An entry of `length` bytes starts (its header was read). */
  startEntry(length: number): void {
    this.payloadLeft = length;
    this.entryLength = length;
    this.entryOk = length > 0 && length <= MAX_ENTRY_DIGITS;
    this.entryValue = 0;
    this.entryPrev = 0;
    this.entryLast = 0;
  }

  /** Reads the entry's bytes in chunk[p, end); returns the position after those read (`payloadDone` once all were). */
  readPayload(chunk: Uint8Array, p: number, end: number): number {
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
    return stop;
  }

  /** All of the entry's bytes were read. */
  get payloadDone(): boolean {
    return this.payloadLeft === 0;
  }

  /** An entry and its CR LF were read: accept it or drop it as acceptEntries does. */
  endEntry(): void {
    this.accept(this.entryOk, this.entryLength, this.entryValue, this.entryPrev, this.entryLast);
    this.left--;
  }

  /**
   * Reads, from chunk[p, end), every entry that lies whole in it (`$<len>\r\n<bytes>\r\n`), up to
   * the array's last; returns the position after the last one read (p when none was). An entry cut
   * by the chunk's end, or anything odd, is left to the byte-by-byte states (nothing of it consumed).
   */
  readWholeEntries(chunk: Uint8Array, p: number, end: number): number {
    const max = this.max;
    const out = this.out;
    let left = this.left;
    while (left > 0 && p < end && chunk[p] === DOLLAR) {
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
        digits++;
      }
      // Needs: CR LF, the bytes, CR LF; anything odd is left to the byte-by-byte states to refuse.
      if (digits === 0 || digits > MAX_HEADER_DIGITS || q + 1 >= end || chunk[q] !== CR || chunk[q + 1] !== LF) {
        break;
      }
      const start = q + 2;
      const stop = start + length;
      if (stop + 2 > end) {
        break;
      }
      if (chunk[stop] !== CR || chunk[stop + 1] !== LF) {
        this.left = left;
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
      if (ok && length <= EXACT_DIGITS && n <= max) {
        out.push(n);
      } else if (ok && length > EXACT_DIGITS) {
        let prev = 0;
        for (let i = start; i < stop - 1; i++) {
          prev = prev * 10 + (chunk[i] - ZERO);
        }
        this.accept(true, length, n, prev, chunk[stop - 1] - ZERO);
      } else {
        this.accept(ok, length, n, 0, 0);
      }
      left--;
      p = stop + 2;
    }
    this.left = left;
    return p;
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
}
