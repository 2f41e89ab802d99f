/** The time source of the snowflake generator and registries; tests inject a fake. */
export interface Clock {
  /** Milliseconds since 1970 (Date.now()). */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
