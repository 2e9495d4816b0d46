import { monotonicFactory } from "ulid";

const next = monotonicFactory();

/** Detection id: `det-` + a lowercase ULID (time-ordered; a valid Kubernetes object name). */
export function newDetectionId(now: number = Date.now()): string {
  return `det-${next(now).toLowerCase()}`;
}
