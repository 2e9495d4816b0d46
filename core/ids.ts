import { monotonicFactory, ulid } from "ulid";

const next = monotonicFactory();
let newest = 0;

/**
 * Detection id: `det-` + a lowercase ULID (time-ordered; a valid Kubernetes object name) of `now`.
 * Monotonic among ids of the newest millisecond so far; an earlier `now` (records written for the past:
 * seeds, tests) keeps its own time instead of being moved up to the newest one, as ulid's monotonic
 * factory alone would do.
 */
export function newDetectionId(now: number = Date.now()): string {
  const id = now >= newest ? next(now) : ulid(now);
  newest = Math.max(newest, now);
  return `det-${id.toLowerCase()}`;
}
