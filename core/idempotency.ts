import { LABELS, type Resource } from "./resource.js";

/**
 * How long an Idempotency-Key is remembered (the IETF draft's suggested 24 hours; api/idempotency.ts).
 * The key's record is the label on the resource it created, so a keyed Detection stays in the resource
 * store at least this long after it was created before it is archived (operator/detection-lifecycle.ts).
 */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

/** Until when `r` answers for its Idempotency-Key (ms since the epoch), or undefined without a key. */
export function idempotencyHeldUntil(r: Resource): number | undefined {
  if (!r.metadata.labels?.[LABELS.idempotencyKey]) return undefined;
  const created = Date.parse(r.metadata.creationTimestamp ?? "");
  return Number.isNaN(created) ? undefined : created + IDEMPOTENCY_WINDOW_MS;
}
