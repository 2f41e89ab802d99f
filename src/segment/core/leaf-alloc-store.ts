/** A `leaf_alloc` row as the generator needs it after a fetch. */
export interface LeafAlloc {
  key: string;
  /** The row's `max_id` after the fetch's UPDATE. */
  maxId: bigint;
  /** The row's `step` column (the DB step). */
  step: number;
}

/**
 * The generator's narrow port to `leaf_alloc` (Leaf's IDAllocDao). Each fetch advances `max_id`
 * and reads the row back in one transaction, so two fetches, from any instance, never overlap.
 */
export interface LeafAllocStore {
  getAllTags(): Promise<string[]>;
  /** `max_id = max_id + step`; null when the tag has no row. */
  updateMaxIdAndGetLeafAlloc(tag: string): Promise<LeafAlloc | null>;
  /**
   * `max_id = max_id + GREATEST(step, customStep)`: the dynamic step, never below the DB step
   * as it stands at the fetch. Null when the tag has no row.
   */
  updateMaxIdByCustomStepAndGetLeafAlloc(tag: string, customStep: number): Promise<LeafAlloc | null>;
}
