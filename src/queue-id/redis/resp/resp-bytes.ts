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
