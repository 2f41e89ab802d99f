import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './error.filter';

/** Work before a route runs: an error answers the request with it instead. */
export type RequestCheck = (request: FastifyRequest, reply: FastifyReply) => Error | undefined;

/** Work on every reply just before it is sent, error replies included (no change to the body). */
export type ReplyNote = (request: FastifyRequest, reply: FastifyReply) => void;

/** Set on a reply once its notes ran (a property, as error.filter.ts's error kind: next to nothing per reply). */
const NOTED = Symbol('shardleaf.noted');

/**
 * The app's own per-request work (the request id echo, the shutdown gate, the HTTP metrics), in one
 * Fastify `onRequest` hook and one `onSend` hook for the whole app.
 *
 * Fastify runs each hook list through a runner that allocates three closures per list per request
 * and calls every hook through one shared call site: one hook running the app's checks, and one
 * running its notes, where there were one onRequest and two onSend hooks. The direct routes
 * (direct-routes/direct-lifecycle.ts) go further: they call `check` and `note` themselves and run
 * no Fastify hook at all.
 */
export class AppHooks {
  private readonly checks: RequestCheck[] = [];
  private readonly notes: ReplyNote[] = [];

  /** The app's Fastify hooks, as given to addHook (the direct routes recognise them by identity). */
  readonly onRequestHook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    const refusal = this.check(request, reply);
    if (refusal === undefined) {
      done();
      return;
    }
    void sendError(reply, refusal, request.id);
  };

  readonly onSendHook = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void): void => {
    this.note(request, reply);
    done(null, payload);
  };

  /** Checks run in the order they were added; the first error stops them. */
  addCheck(check: RequestCheck): void {
    this.checks.push(check);
  }

  addNote(note: ReplyNote): void {
    this.notes.push(note);
  }

  /** Runs the checks: undefined when the request goes on, else the error to answer it with. */
  check(request: FastifyRequest, reply: FastifyReply): Error | undefined {
    const checks = this.checks;
    for (let i = 0; i < checks.length; i++) {
      const refusal = checks[i](request, reply);
      if (refusal !== undefined) {
        return refusal;
      }
    }
    return undefined;
  }

  /**
   * Runs the notes, once per reply, just before it is sent: a reply noted already (its send failed
   * and an error reply follows, or a direct route noted it itself) is not noted again.
   */
  note(request: FastifyRequest, reply: FastifyReply): void {
    if (isNoted(reply)) {
      return;
    }
    markNoted(reply);
    this.runNotes(request, reply);
  }

  /**
   * The notes of a reply not marked noted, without marking it: for a direct route, whose own flow
   * notes each reply once, and which marks a noted reply (`markNoted`) only when it hands it to
   * Fastify, whose error handling may bring it back. A mark on every reply changed every reply's
   * hidden class just before Fastify sends it (docs/performance.md, "Direct routes without a
   * request logger").
   */
  noteUnmarked(request: FastifyRequest, reply: FastifyReply): void {
    if (!isNoted(reply)) {
      this.runNotes(request, reply);
    }
  }

  private runNotes(request: FastifyRequest, reply: FastifyReply): void {
    const notes = this.notes;
    for (let i = 0; i < notes.length; i++) {
      notes[i](request, reply);
    }
  }
}

/** Whether the reply's notes ran. */
function isNoted(reply: FastifyReply): boolean {
  return (reply as unknown as Record<symbol, boolean | undefined>)[NOTED] === true;
}

/** Marks the reply as noted: its notes are not run again (the error reply of a send that failed). */
export function markNoted(reply: FastifyReply): void {
  (reply as unknown as Record<symbol, boolean>)[NOTED] = true;
}

const byInstance = new WeakMap<object, AppHooks>();

/**
 * The AppHooks of a Fastify instance, its two hooks added on the first call. Call before the app
 * is ready (Fastify gives a route the hooks its instance has then).
 */
export function appHooksOf(fastify: FastifyInstance): AppHooks {
  let hooks = byInstance.get(fastify);
  if (hooks === undefined) {
    hooks = new AppHooks();
    byInstance.set(fastify, hooks);
    fastify.addHook('onRequest', hooks.onRequestHook);
    fastify.addHook('onSend', hooks.onSendHook);
  }
  return hooks;
}
