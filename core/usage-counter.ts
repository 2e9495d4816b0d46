/**
 * Usage counter port: durable per-client counters (e.g. the lifetime sample-run allowance).
 * Standalone adapter: platform/local/usage-counter.ts (a JSON file per client).
 */
export interface UsageCounter {
  /**
   * Adds one to the client's `kind` counter when it is below `limit`, atomically with respect to
   * every other call; true when a unit was consumed, false when the limit was already reached.
   */
  tryConsume(clientId: string, kind: string, limit: number): Promise<boolean>;
  /** Gives one unit back (after a consumed unit's operation failed); never goes below 0. */
  refund(clientId: string, kind: string): Promise<void>;
  /** Units the client has consumed of `kind` so far. */
  used(clientId: string, kind: string): Promise<number>;
}
