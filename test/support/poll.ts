export interface PollOptions {
  /** Gives up once this much time has passed since the first probe (default 20 s). */
  timeoutMs?: number;
  /** Pause between two probes (default 50 ms). */
  intervalMs?: number;
  /**
   * A probe that throws counts as "not yet" (a server still starting); the timeout's message names
   * the last error. Without it the first error fails the wait.
   */
  tolerateErrors?: boolean;
}

/**
 * The tests' one way to wait for a state: probes until `probe` returns something other than
 * `undefined` or `false`, and resolves that value. Fails when `timeoutMs` passes first, with
 * `what` (a function is called then, to name the last state seen).
 */
export async function pollUntil<T>(
  what: string | (() => string),
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: PollOptions = {},
): Promise<T> {
  const { timeoutMs = 20_000, intervalMs = 50, tolerateErrors = false } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) {
        return value;
      }
    } catch (err) {
      if (!tolerateErrors) {
        throw err;
      }
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const name = typeof what === 'string' ? what : what();
      const cause = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${name}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
