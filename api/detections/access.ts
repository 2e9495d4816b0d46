import { createHash } from "node:crypto";
import { readArchived } from "../../core/archive.js";
import type { Detection } from "../../core/detection.js";
import { LABELS, labelValue } from "../../core/resource.js";
import type { ApiDeps, Principal } from "../deps.js";
import { ApiError, detectionNotFound } from "../errors.js";

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

/** Where a visible detection was found: the resource store, or the archive (core/archive.ts). */
export interface FoundDetection {
  detection: Detection;
  archived: boolean;
}

/**
 * The answer for an archived detection whose record is stored but damaged (core/stored.ts: not JSON, or
 * not a record of this detection): a fault of the service's storage that no retry of the request mends, so
 * a 500 that says so, names the detection and what still works (DELETE), never a 404 (it exists) and never
 * a stack. The operators get the object key and the problem in the log.
 */
export const damagedRecord = (id: string, requestId: string | undefined) =>
  new ApiError(
    500,
    "record_damaged",
    `The stored record of detection ${id} is damaged and cannot be read; the service's operators have been told${requestId ? ` (request ${requestId})` : ""}. DELETE /v1/detection/${id} still removes it and its files.`,
  );

/** Thrown by locateClientDetection for a damaged archived record (tolerated by DELETE). */
export class DamagedArchivedRecord extends Error {
  override name = "DamagedArchivedRecord";
  constructor(
    readonly id: string,
    readonly key: string,
    readonly reason: string,
  ) {
    super(`The archived record of ${id} (${key}) ${reason}.`);
  }
}

/**
 * Client `clientId`'s detection `id`, wherever it is: the resource first, then the archive (a finished
 * detection's record in the object store, once its resource is deleted). 404 when unknown, another
 * client's or being deleted: a resource that exists but is not the client's, or is being deleted, is 404
 * without looking further. The one access lookup of every route that reads one detection (the reviewer
 * page included, which knows the client from its signed link). An archived detection whose record is
 * damaged throws DamagedArchivedRecord (logged here); one whose verdict object alone is damaged is found,
 * with its verdict null (logged here): its status, score and durable fields are intact.
 */
export async function locateClientDetection(
  deps: ApiDeps,
  clientId: string,
  id: string,
): Promise<FoundDetection> {
  const live = await deps.detections.get(id);
  if (live) {
    if (!visibleToClient(live, clientId)) throw detectionNotFound();
    return { detection: live, archived: false };
  }
  const read = await readArchived(deps.objects, deps.bucket, clientId, id);
  if (read.kind === "invalid") {
    deps.log.error(
      { detection: id, key: read.key, problem: read.reason },
      "an archived record is damaged; the detection cannot be read",
    );
    throw new DamagedArchivedRecord(id, read.key, read.reason);
  }
  if (read.kind === "missing" || !visibleToClient(read.value, clientId)) throw detectionNotFound();
  if (read.unreadableVerdict) {
    deps.log.error(
      { detection: id, key: read.unreadableVerdict.key, problem: read.unreadableVerdict.reason },
      "an archived verdict is damaged; the detection reads with verdict null",
    );
  }
  return { detection: read.value, archived: true };
}

/** The caller's detection `id` (resource first, then the archive); 404 as locateClientDetection. */
export const locateVisibleDetection = (deps: ApiDeps, p: Principal, id: string) =>
  locateClientDetection(deps, p.clientId, id);

/** The caller's detection `id` (resource first, then the archive); 404 when unknown, another client's or being deleted. */
export async function findVisibleDetection(deps: ApiDeps, p: Principal, id: string): Promise<Detection> {
  return (await locateVisibleDetection(deps, p, id)).detection;
}
