/**
 * REDIS_WAIT_REPLICAS: whether a WAIT reply confirms the pops made before it. Pure function.
 *
 * A pop is confirmed only by a WAIT answered on the same connection as the pop: the LPOP and the
 * WAIT go out together (one pipeline), and the connection epoch (a counter moved by every close,
 * reconnect or node change of the client) must be the same before the pop was sent and after the
 * WAIT reply came. A WAIT that failed, or that may have been answered by another server (a resend
 * after a reconnect reaching a promoted replica measures that server's replication, not the pop's),
 * confirms nothing.
 */
export interface WaitReply {
  /** The error of the WAIT reply (or of the pipeline), if any. */
  error: Error | null;
  /** Replicas that acknowledged (WAIT's reply). */
  acks: number;
  /** Connection epoch before the pop was sent and after the WAIT reply came. */
  epochBefore: number;
  epochAfter: number;
}

export type WaitVerdict = { confirmed: true } | { confirmed: false; reason: string };

export function waitVerdict(reply: WaitReply, replicas: number, timeoutMs: number): WaitVerdict {
  if (reply.error) {
    return { confirmed: false, reason: `WAIT failed (${reply.error.message})` };
  }
  if (reply.epochAfter !== reply.epochBefore) {
    return { confirmed: false, reason: 'the Redis connection changed between the pop and the WAIT reply' };
  }
  if (reply.acks < replicas) {
    return { confirmed: false, reason: `only ${reply.acks} of ${replicas} Redis replicas confirmed the pop in ${timeoutMs} ms` };
  }
  return { confirmed: true };
}
