/**
 * The queue's RESP requests (the Redis wire format), written by hand where the client's own
 * encoding costs too much or where no client is used (the pop connection).
 *
 * The bytes of `RPUSH key from from+1 … to`, written here instead
 * of by the client: ioredis spends about 1 µs per argument on a command (flattening, type checks,
 * one string concatenation per argument), 100 ms for the 100,000 indexes of a large refill. The
 * indexes are consecutive, so their decimal digits are produced by counting up in place (an
 * odometer over ASCII digits) and copied into one preallocated Buffer: a few ns per index.
 * Framework-free; the command that sends these bytes is in infra/redis/pre-encoded-command.ts.
 */

const CR = 0x0d;
const LF = 0x0a;
const ZERO = 0x30;
const NINE = 0x39;

/** Decimal digits of a non-negative safe integer. */
function digitCount(n: number): number {
  let d = 1;
  for (let p = 10; p <= n; p *= 10) {
    d++;
  }
  return d;
}

/** Bytes of the bulk strings of the indexes from..to: `$<d>\r\n<d digits>\r\n` each. */
function bulkBytes(from: number, to: number): number {
  let total = 0;
  let lo = from;
  for (let d = digitCount(from); lo <= to; d++) {
    const hi = Math.min(to, 10 ** d - 1);
    total += (hi - lo + 1) * (1 + String(d).length + 2 + d + 2);
    lo = hi + 1;
  }
  return total;
}

/**
 * The RESP request `RPUSH key from … to` (from ≤ to, both safe non-negative integers): what a
 * client would write for the command with those arguments, byte for byte.
 */
export function rpushRangeRequest(key: string, from: number, to: number): Buffer {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) {
    throw new RangeError(`cannot encode RPUSH of ${from}..${to}`);
  }
  const keyLength = Buffer.byteLength(key);
  const head = `*${to - from + 3}\r\n$5\r\nRPUSH\r\n$${keyLength}\r\n`;
  const size = head.length + keyLength + 2 + bulkBytes(from, to);
  const out = Buffer.allocUnsafe(size);
  let p = out.write(head, 0, 'latin1');
  p += out.write(key, p, 'utf8');
  out[p++] = CR;
  out[p++] = LF;

  // The current index as ASCII digits, most significant first, and its `$<d>\r\n` prefix.
  let digits = Buffer.from(String(from), 'latin1');
  let prefix = Buffer.from(`$${digits.length}\r\n`, 'latin1');
  for (let left = to - from + 1; left > 0; left--) {
    for (let i = 0; i < prefix.length; i++) {
      out[p++] = prefix[i];
    }
    for (let i = 0; i < digits.length; i++) {
      out[p++] = digits[i];
    }
    out[p++] = CR;
    out[p++] = LF;
    // Count up by one: the last digit that is not a 9 goes up, the 9s after it become 0s.
    let i = digits.length - 1;
    while (i >= 0 && digits[i] === NINE) {
      digits[i--] = ZERO;
    }
    if (i >= 0) {
      digits[i]++;
    } else {
      // 9…9 + 1: one digit more.
      digits = Buffer.concat([Buffer.from([ZERO + 1]), digits]);
      prefix = Buffer.from(`$${digits.length}\r\n`, 'latin1');
    }
  }
  if (p !== size) {
    throw new Error(`RESP encoder wrote ${p} bytes, expected ${size}`);
  }
  return out;
}

/** A command as RESP, arguments as UTF-8 (the pop connection's AUTH and SELECT). */
export function encodeCommand(args: readonly string[]): string {
  let out = `*${args.length}\r\n`;
  for (const a of args) {
    out += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
  }
  return out;
}

/** `LPOP key n`, followed by `LLEN key` when withLength: one write of the pop connection. */
export function lpopRequest(key: string, n: number, withLength: boolean): string {
  const keyBytes = Buffer.byteLength(key);
  const count = String(n);
  let request = `*3\r\n$4\r\nLPOP\r\n$${keyBytes}\r\n${key}\r\n$${count.length}\r\n${count}\r\n`;
  if (withLength) {
    request += `*2\r\n$4\r\nLLEN\r\n$${keyBytes}\r\n${key}\r\n`;
  }
  return request;
}
