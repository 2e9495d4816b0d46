import { createHash } from "node:crypto";
import type { Detection } from "../../core/detection.js";
import { LABELS, labelValue } from "../../core/resource.js";
import type { ApiDeps, Principal } from "../deps.js";
import { detectionNotFound } from "../errors.js";

export const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

/** The `docverify.io/client` label value of a client id. */
export const clientLabel = (clientId: string) => labelValue(clientId, sha256Hex);

/** True when client `clientId` may see `d`: its own, and not being deleted. */
export const visibleToClient = (d: Detection, clientId: string) =>
  d.spec.submittedBy === clientId &&
  d.metadata.labels?.[LABELS.client] === clientLabel(clientId) &&
  !d.metadata.deletionTimestamp;

/** True when the caller may see `d`: its own, and not being deleted. */
export const visibleTo = (d: Detection, p: Principal) => visibleToClient(d, p.clientId);

/**
 * The one lookup of a detection by id for reads (GET, its evidence and page images, the reviewer page):
 * undefined when there is none. Every read goes through here, so where a detection's record lives is
 * decided in one place.
 */
export async function findDetection(deps: ApiDeps, id: string): Promise<Detection | undefined> {
  return deps.detections.get(id);
}

/** Client `clientId`'s detection `id`; 404 when unknown, another client's or being deleted. */
export async function loadClientDetection(deps: ApiDeps, clientId: string, id: string): Promise<Detection> {
  const d = await findDetection(deps, id);
  if (!d || !visibleToClient(d, clientId)) throw detectionNotFound();
  return d;
}

/** The caller's detection `id`; 404 when unknown, another client's or being deleted. */
export async function loadOwnDetection(deps: ApiDeps, p: Principal, id: string): Promise<Detection> {
  return loadClientDetection(deps, p.clientId, id);
}
