/** How long something found missing in the database is not tried again (ms). */
export const MISSING_RECHECK_MS = 60_000;

/**
 * Something in the database the service can do without and found missing (a stored procedure, a
 * history table): not tried again for `recheckMs`, but never given up for good: a migration may
 * be replacing it right now (MySQL's DROP then CREATE of a procedure), or may run later.
 */
export class MissingRecheck {
  private missingAt: number | null = null;

  constructor(
    private readonly recheckMs = MISSING_RECHECK_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether to try it now: never found missing, or found missing long enough ago. */
  shouldTry(): boolean {
    return this.missingAt === null || this.now() - this.missingAt >= this.recheckMs;
  }

  /** The last try found it missing; true when it was not known missing before (log it then). */
  markMissing(): boolean {
    const news = this.missingAt === null;
    this.missingAt = this.now();
    return news;
  }

  /** The last try found it; true when it was known missing before (log it then). */
  markPresent(): boolean {
    const news = this.missingAt !== null;
    this.missingAt = null;
    return news;
  }
}
