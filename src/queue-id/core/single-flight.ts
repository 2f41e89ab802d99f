/**
 * At most one run per key at a time. A caller that finds one running does not start its own: it
 * waits for that run (its failure is the caller's failure too) and then does `joined` instead.
 * Framework-free.
 */
export class SingleFlight {
  private readonly running = new Map<string, Promise<unknown>>();

  async run<T>(key: string, run: () => Promise<T>, joined: () => Promise<T>): Promise<T> {
    const current = this.running.get(key);
    if (current) {
      await current;
      return joined();
    }
    const started = run();
    this.running.set(key, started);
    try {
      return await started;
    } finally {
      if (this.running.get(key) === started) {
        this.running.delete(key);
      }
    }
  }
}
