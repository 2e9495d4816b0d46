import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { bearer, bearerErrors, errorJson, jsonResponse, validationJson } from "../schema.js";
import { DETECTION_ID_422 } from "./schema.js";
import { findVisibleDetection } from "./access.js";
import { project } from "./project.js";
import { DetectionDetail, DetectionIdParams } from "./schema.js";

export const getDetectionRoute = createRoute({
  method: "get",
  path: "/v1/detection/{detection_id}",
  tags: ["detections"],
  summary: "Read a detection and its result",
  description:
    "Poll about every 5 seconds until `status` is COMPLETED or FAILED. Another client's detection, and one " +
    "being deleted, answer 404. A finished detection reads the same after it was archived out of the " +
    "cluster (DOCVERIFY_ARCHIVE_AFTER_SECONDS).",
  operationId: "getDetection",
  security: bearer(SCOPES.get),
  middleware: [requireScopes([SCOPES.get])] as const,
  request: { params: DetectionIdParams },
  responses: {
    200: jsonResponse(DetectionDetail, "The detection"),
    ...bearerErrors(SCOPES.get),
    404: errorJson("No such detection (or another client's, or one being deleted)", ["Detection not found"]),
    422: validationJson("The detection id is malformed", [DETECTION_ID_422]),
  },
});

export function registerGetDetection(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getDetectionRoute, async (c) => {
    const { detection_id } = c.req.valid("param");
    const d = await findVisibleDetection(c.var.deps, c.var.principal, detection_id);
    return c.json(DetectionDetail.parse(project(d)), 200);
  });
}
