import { type Clock, systemClock } from "../../core/ports.js";
import { NO_WINDOW, type WindowCount, type WindowCounter } from "../../core/window-counter.js";

export interface LocalWindowCounterOptions {
  clock?: Clock;
  /**
   * Most keys kept at once (default 100 000, about 10 MB). Past it, closed windows are swept and then the
   * oldest keys forgotten, so an attacker rotating addresses cannot grow the map without bound.
   */
  maxKeys?: number;
}

/**
 * WindowCounter in memory, for the standalone service (one process owns every counter). JavaScript runs
 * one call at a time, so each call is atomic. Counters do not survive a restart.
 */
export function createLocalWindowCounter(opts: LocalWindowCounterOptions = {}): WindowCounter {
  const clock = opts.clock ?? systemClock;
  const maxKeys = opts.maxKeys ?? 100_000;
  const windows = new Map<string, { count: number; endsAt: number }>();

  const open = (key: string, now: number) => {
    const w = windows.get(key);
    if (w && w.endsAt <= now) {
      windows.delete(key);
      return undefined;
    }
    return w;
  };
  const answer = (w: { count: number; endsAt: number } | undefined, now: number): WindowCount =>
    w ? { count: w.count, resetInMs: w.endsAt - now } : { ...NO_WINDOW };

  function makeRoom(now: number): void {
    if (windows.size < maxKeys) return;
    for (const [key, w] of windows) if (w.endsAt <= now) windows.delete(key);
    // Map iteration is insertion order: the first keys are the oldest windows.
    for (const key of windows.keys()) {
      if (windows.size < maxKeys) break;
      windows.delete(key);
    }
  }

  return {
    async hit(key, windowMs) {
      const now = clock.now().getTime();
      let w = open(key, now);
      if (!w) {
        makeRoom(now);
        w = { count: 0, endsAt: now + Math.max(1, windowMs) };
        windows.set(key, w);
      }
      w.count++;
      return answer(w, now);
    },
    async peek(key) {
      const now = clock.now().getTime();
      return answer(open(key, now), now);
    },
    async clear(key) {
      windows.delete(key);
    },
  };
}
