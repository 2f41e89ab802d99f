/** The RESP bytes the batch pop's reader looks at, and its limits. */
export const CR = 0x0d;
export const LF = 0x0a;
export const ZERO = 0x30;
export const NINE = 0x39;
export const DOLLAR = 0x24;
export const STAR = 0x2a;
export const COLON = 0x3a;
export const PLUS = 0x2b;
export const MINUS = 0x2d;

/** Digits of a header number (an array count, a bulk length, an integer reply). */
export const MAX_HEADER_DIGITS = 15;

/**
 * Not a byte: the line type of a top-level bulk reply to a pop. Redis 6.2 answers `LPOP key n` on
 * a missing key with a null bulk (`$-1`), 7.0 with a null array (`*-1`); any other bulk is refused.
 */
export const POP_BULK = 0x100;

/** Longest error or status line kept (longer ones are cut, not refused). */
export const MAX_TEXT = 1024;

/** Accepted indexes of one `LPOP key n` reply (as acceptEntries gives them). */
export interface PoppedIndexList {
  indexes: number[];
  /** An entry above the limit was dropped. */
  overLimit: boolean;
  /** Entries that were not decimal indexes (dropped). */
  malformed: number;
}

/** Called once with a command's reply (or the error that ended it). */
export type Done<T> = (err: Error | null, value?: T) => void;

/** What a command waits for. */
export type Expected =
  | { kind: 'status'; status: string; done: Done<void> }
  | { kind: 'int'; done: Done<number> }
  | { kind: 'pop'; count: number; maxIndex: bigint; done: Done<PoppedIndexList> };

/** A reply that does not frame as the command expects: the connection cannot be trusted any more. */
export class RespProtocolError extends Error {
  constructor(message: string) {
    super(`pop connection: ${message}`);
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
