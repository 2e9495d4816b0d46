import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { isStoreError } from "../../core/ports.js";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { detectionNotFound } from "../errors.js";
import { bearer, bearerErrors, errorJson, jsonResponse, validationJson } from "../schema.js";
import { loadOwnDetection } from "./access.js";
import { DETECTION_ID_422, DeletedDetection, DetectionIdParams } from "./schema.js";

export const deleteDetectionRoute = createRoute({
  method: "delete",
  path: "/v1/detection/{detection_id}",
  tags: ["detections"],
  summary: "Delete a detection and its files",
  description:
    "The detection disappears from reads at once (404 from then on); its stored document, its results and " +
    "the upload it was created from are removed in the background before the record goes. The upload cannot " +
    "start another detection.",
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
    await loadOwnDetection(deps, c.var.principal, detection_id);
    try {
      await deps.detections.delete(detection_id);
    } catch (err) {
      if (isStoreError(err, "NotFound")) throw detectionNotFound();
      throw err;
    }
    return c.json({ id: detection_id, deleted: true as const }, 200);
  });
}
