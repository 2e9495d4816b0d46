/**
 * The one exponential backoff of the service: after `failures` failures in a row, wait
 * `firstMs`, then twice that, four times that, ... never more than `maxMs`. Every retry loop (step
 * attempts, reconcile errors, watch reconnects, worker respawns) takes its delay from here, each with
 * its own named policy.
 */
export interface BackoffPolicy {
  /** The delay after the first failure. */
  firstMs: number;
  /** The longest delay. */
  maxMs: number;
}

export function backoffMs(failures: number, policy: BackoffPolicy): number {
  const n = Math.max(1, Math.floor(failures));
  // Past 2^30 every sensible policy is at its cap; the bound keeps the arithmetic finite.
  return Math.min(policy.maxMs, policy.firstMs * 2 ** Math.min(n - 1, 30));
}
