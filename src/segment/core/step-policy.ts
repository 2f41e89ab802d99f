/**
 * Leaf's dynamic step: aim at one DB fetch per SEGMENT_DURATION per tag and instance. Pure.
 */

/** Leaf's SEGMENT_DURATION: the target life of one segment. */
export const SEGMENT_DURATION_MS = 15 * 60 * 1000;
/** Leaf's MAX_STEP. */
export const MAX_STEP = 1_000_000;

/**
 * The step of the next fetch, given the current step, the DB step (`minStep`) and how long ago
 * the previous fetch was:
 * - under 15 min: double, unless that would exceed `maxStep` (then keep);
 * - under 30 min: keep;
 * - otherwise: halve, but never below the DB step.
 * The fetch itself also raises the result to the DB step as it stands then (see LeafAllocStore).
 */
export function nextStep(currentStep: number, minStep: number, durationMs: number, maxStep = MAX_STEP): number {
  if (durationMs < SEGMENT_DURATION_MS) {
    return currentStep * 2 > maxStep ? currentStep : currentStep * 2;
  }
  if (durationMs < SEGMENT_DURATION_MS * 2) {
    return currentStep;
  }
  return Math.max(Math.floor(currentStep / 2), minStep);
}
