import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { BEARER, ErrorResponse, errorResponses, jsonResponse } from "../schema.js";
import { loadOwnDetection } from "./access.js";
import { project } from "./project.js";
import { DetectionDetail, DetectionIdParams } from "./schema.js";

export const getDetectionRoute = createRoute({
  method: "get",
  path: "/v1/detection/{detection_id}",
  tags: ["detections"],
  summary: "Read a detection and its result",
  description:
    "Poll about every 5 seconds until `status` is COMPLETED or FAILED. Another client's detection, and one " +
    "being deleted, answer 404.",
  security: BEARER,
  middleware: [requireScopes([SCOPES.get])] as const,
  request: { params: DetectionIdParams },
  responses: {
    200: jsonResponse(DetectionDetail, "The detection"),
    ...errorResponses,
    404: jsonResponse(ErrorResponse, "No such detection"),
  },
});

export function registerGetDetection(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getDetectionRoute, async (c) => {
    const { detection_id } = c.req.valid("param");
    const d = await loadOwnDetection(c.var.deps, c.var.principal, detection_id);
    return c.json(DetectionDetail.parse(project(d)), 200);
  });
}
