/**
 * Just enough RESP (the Redis protocol) to split a byte stream into whole values: commands from a
 * client (arrays of bulk strings) and replies from a server. Used by the fault-injecting proxy.
 */

export interface RespValue {
  /** Offset just past the value. */
  end: number;
  /** The first byte of the value: '*' array, '$' bulk, '+' status, '-' error, ':' integer… */
  type: string;
  /** For an array of bulk strings (a command): its elements as text. */
  words?: string[];
}

/** The value starting at `pos`, or null when `buf` does not hold all of it yet. */
export function readResp(buf: Buffer, pos: number): RespValue | null {
  if (pos >= buf.length) {
    return null;
  }
  const type = String.fromCharCode(buf[pos]);
  const lineEnd = buf.indexOf('\r\n', pos, 'latin1');
  if (lineEnd < 0) {
    return null;
  }
  const header = buf.toString('latin1', pos + 1, lineEnd);
  switch (type) {
    case '$': {
      const n = Number(header);
      const end = n < 0 ? lineEnd + 2 : lineEnd + 2 + n + 2;
      return end <= buf.length ? { end, type } : null;
    }
    case '*':
    case '%':
    case '~':
    case '>': {
      const n = Number(header) * (type === '%' ? 2 : 1);
      let p = lineEnd + 2;
      const words: string[] = [];
      for (let i = 0; i < n; i++) {
        const item = readResp(buf, p);
        if (!item) {
          return null;
        }
        if (item.type === '$' && words.length < 4) {
          const headerEnd = buf.indexOf('\r\n', p, 'latin1');
          words.push(buf.toString('latin1', headerEnd + 2, item.end - 2));
        }
        p = item.end;
      }
      return { end: p, type, words };
    }
    default:
      // Status, error, integer and the other one-line RESP3 types.
      return { end: lineEnd + 2, type };
  }
}
