import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { isStoreError } from "../../core/ports.js";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { detectionNotFound } from "../errors.js";
import { BEARER, ErrorResponse, errorResponses, jsonResponse } from "../schema.js";
import { loadOwnDetection } from "./access.js";
import { DeletedDetection, DetectionIdParams } from "./schema.js";

export const deleteDetectionRoute = createRoute({
  method: "delete",
  path: "/v1/detection/{detection_id}",
  tags: ["detections"],
  summary: "Delete a detection and its files",
  description:
    "The detection disappears from reads at once (404 from then on); its stored document and results are " +
    "removed in the background before the record goes.",
  security: BEARER,
  middleware: [requireScopes([SCOPES.delete])] as const,
  request: { params: DetectionIdParams },
  responses: {
    200: jsonResponse(DeletedDetection, "Deleted"),
    ...errorResponses,
    404: jsonResponse(ErrorResponse, "No such detection"),
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
