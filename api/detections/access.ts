import { createHash } from "node:crypto";
import type { Detection } from "../../core/detection.js";
import { LABELS, labelValue } from "../../core/resource.js";
import type { ApiDeps, Principal } from "../deps.js";
import { detectionNotFound } from "../errors.js";

export const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

/** The `docverify.io/client` label value of a client id. */
export const clientLabel = (clientId: string) => labelValue(clientId, sha256Hex);

/** True when the caller may see `d`: its own, and not being deleted. */
export const visibleTo = (d: Detection, p: Principal) =>
  d.spec.submittedBy === p.clientId &&
  d.metadata.labels?.[LABELS.client] === clientLabel(p.clientId) &&
  !d.metadata.deletionTimestamp;

/** The caller's detection `id`; 404 when unknown, another client's or being deleted. */
export async function loadOwnDetection(deps: ApiDeps, p: Principal, id: string): Promise<Detection> {
  const d = await deps.detections.get(id);
  if (!d || !visibleTo(d, p)) throw detectionNotFound();
  return d;
}
