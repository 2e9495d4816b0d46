/**
 * Window counter port: short-lived counters shared by every API replica, for throttling (failed `/token`
 * attempts, lockouts, the per-client `/v1` rate limit).
 *
 * Each key counts in fixed windows: the first `hit` on a key opens a window of `windowMs`; further hits
 * in that window add to the same count; when the window has passed, the key is gone and the next hit
 * opens a new one. Every call is atomic with respect to every other holder of the port (all replicas).
 *
 * Adapters: platform/redis/window-counter.ts (cluster: one Redis key with a TTL per counter, changed by a
 * Lua script) and platform/local/window-counter.ts (standalone: in memory, one process).
 * Adapters may throw when their backend is unavailable; callers decide whether to fail open.
 */
export interface WindowCount {
  /** Hits in the key's current window (0 when no window is open). */
  count: number;
  /** Milliseconds until the key's window closes (0 when no window is open). */
  resetInMs: number;
}

export interface WindowCounter {
  /** Adds one to `key`; opens a window of `windowMs` when none is open. Answers the count after the hit. */
  hit(key: string, windowMs: number): Promise<WindowCount>;
  /** The key's count and the time its window has left, without counting. */
  peek(key: string): Promise<WindowCount>;
  /** Closes the key's window at once (the next hit starts from 1). */
  clear(key: string): Promise<void>;
}

export const NO_WINDOW: WindowCount = Object.freeze({ count: 0, resetInMs: 0 });
