import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { removeArchivedDetection } from "../../core/archive.js";
import { removeDetectionFiles } from "../../core/detection-files.js";
import { isStoreError } from "../../core/ports.js";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { detectionNotFound } from "../errors.js";
import { bearer, bearerErrors, errorJson, jsonResponse, validationJson } from "../schema.js";
import { DamagedArchivedRecord, type FoundDetection, locateVisibleDetection } from "./access.js";
import { DETECTION_ID_422, DeletedDetection, DetectionIdParams } from "./schema.js";

export const deleteDetectionRoute = createRoute({
  method: "delete",
  path: "/v1/detection/{detection_id}",
  tags: ["detections"],
  summary: "Delete a detection and its files",
  description:
    "The detection disappears from reads at once (404 from then on); its stored document, its results and " +
    "the upload it was created from are removed in the background before the record goes (at once for a " +
    "detection already archived out of the cluster). The upload cannot start another detection.",
  operationId: "deleteDetection",
  security: bearer(SCOPES.delete),
  middleware: [requireScopes([SCOPES.delete])] as const,
  request: { params: DetectionIdParams },
  responses: {
    200: jsonResponse(DeletedDetection, "Deleted"),
    ...bearerErrors(SCOPES.delete),
    404: errorJson("No such detection (or another client's, or one already being deleted)", [
      "Detection not found",
    ]),
    422: validationJson("The detection id is malformed", [DETECTION_ID_422]),
  },
});

export function registerDeleteDetection(app: OpenAPIHono<AppEnv>): void {
  app.openapi(deleteDetectionRoute, async (c) => {
    const { detection_id } = c.req.valid("param");
    const deps = c.var.deps;
    const { clientId } = c.var.principal;
    let found: FoundDetection | undefined;
    try {
      found = await locateVisibleDetection(deps, c.var.principal, detection_id);
    } catch (err) {
      // A damaged archived record is still the caller's (it is under the caller's folder): it goes,
      // with the files its id locates (removeArchivedDetection below).
      if (!(err instanceof DamagedArchivedRecord)) throw err;
    }
    if (found && !found.archived) {
      try {
        await deps.detections.delete(detection_id);
      } catch (err) {
        if (isStoreError(err, "NotFound")) throw detectionNotFound();
        throw err;
      }
      // The tenant memory's entry of a live detection goes in its finalizer, never here: the operator may be
      // remembering it at this moment (it does once the detection is terminal), and only the operator's
      // one-reconcile-per-detection order keeps a forget from running between remember's writes (a forget
      // here did, and left markers behind). A resource gone at once had no finalizer left: an archive pass
      // removed it, after remembering, so the entry goes here.
      if (!(await deps.detections.get(detection_id))) await deps.memory?.forget(detection_id);
    } else if (found) {
      // Archived: no resource and no finalizer any more; the files and the memory entry go here.
      await removeDetectionFiles(deps.objects, deps.bucket, found.detection);
      await deps.memory?.forget(detection_id);
    }
    // The record (if any) goes last: archived, or written by an archive pass that this DELETE overtook
    // (the operator's finalizer removes it too, but a resource whose finalizer the archiver had already
    // removed is gone at once). A DELETE cut short leaves the record, so a repeated DELETE finishes it.
    await removeArchivedDetection(deps.objects, deps.bucket, clientId, detection_id);
    return c.json({ id: detection_id, deleted: true as const }, 200);
  });
}
