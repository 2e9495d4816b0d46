import { type OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { bearer, bearerErrors, errorJson, validationJson } from "../schema.js";
import { findVisibleDetection } from "./access.js";
import { readPageImage } from "./evidence-read.js";
import { DETECTION_ID_422, EvidencePageParams, PAGE_FILE_422, PAGE_FILE_RE } from "./schema.js";

export const NO_PAGE_IMAGE =
  "No image of this page: the detection is not COMPLETED, its evidence was removed after the retention period, or the page carries no findings (or was beyond the rendering bounds).";

export const getEvidencePageRoute = createRoute({
  method: "get",
  path: "/v1/detection/{detection_id}/evidence/pages/{file}",
  tags: ["detections"],
  summary: "Read a rendered page of a detection's evidence (PNG)",
  description:
    "`<page>.png` is the page as submitted with every group's boxes drawn and numbered; `<page>-first-saved.png` " +
    "is the page as first saved, for a page an incremental update changed, with the changed regions marked. " +
    "The URLs come from GET /v1/detection/{detection_id}/evidence. Only pages that carry findings are rendered.",
  operationId: "getDetectionEvidencePage",
  security: bearer(SCOPES.get),
  middleware: [requireScopes([SCOPES.get])] as const,
  request: { params: EvidencePageParams },
  responses: {
    200: {
      description: "The page image",
      content: { "image/png": { schema: z.string().openapi({ type: "string", format: "binary" }) } },
    },
    ...bearerErrors(SCOPES.get),
    404: errorJson("No such detection, or no image of that page", ["Detection not found", NO_PAGE_IMAGE]),
    422: validationJson("The detection id or the image name is malformed", [DETECTION_ID_422, PAGE_FILE_422]),
  },
});

export function registerGetEvidencePage(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getEvidencePageRoute, async (c) => {
    const { detection_id, file } = c.req.valid("param");
    const deps = c.var.deps;
    const d = await findVisibleDetection(deps, c.var.principal, detection_id);
    const m = PAGE_FILE_RE.exec(file) as RegExpExecArray;
    const png = await readPageImage(deps, d, Number(m[1]), m[2] ? "first-saved" : "submitted");
    if (!png) throw new ApiError(404, "not_found", NO_PAGE_IMAGE);
    return c.body(new Uint8Array(png), 200, {
      "Content-Type": "image/png",
      "Cache-Control": "private, max-age=300",
      "X-Content-Type-Options": "nosniff",
    }) as never;
  });
}
