import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type Detection, DETECTION_KIND } from "../../core/detection.js";
import { newDetectionId } from "../../core/ids.js";
import { normalizeRegion } from "../../core/regions.js";
import { API_GROUP_VERSION, CLEANUP_FINALIZER, LABELS } from "../../core/resource.js";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { BEARER, ErrorResponse, errorResponses, jsonResponse } from "../schema.js";
import { requireUsableUpload } from "../uploads/reservation.js";
import { jsonBody } from "../validation.js";
import { clientLabel } from "./access.js";
import { project } from "./project.js";
import {
  CreateDetectionBody,
  CreateDetectionHeaders,
  DetectionDetail,
  SAMPLE_HEADER,
  parseSampleHeader,
} from "./schema.js";

export const SAMPLE_USAGE_KIND = "sample";

/** A sample run needs detections:create_sample instead of detections:create. */
const scopesForCreate = (c: Context) =>
  parseSampleHeader(c.req.header(SAMPLE_HEADER)) === true ? [SCOPES.createSample] : [SCOPES.create];

export const createDetectionRoute = createRoute({
  method: "post",
  path: "/v1/detection",
  tags: ["detections"],
  summary: "Start a detection",
  description:
    "Body: exactly one of `source_url` (http or https) or `upload_id` (from POST /v1/uploads), plus `doc_type` " +
    "and `region` (ISO 3166-1 alpha-2, any case). Unknown fields are rejected with 422 (`extra_forbidden`) so a " +
    "misspelt field never passes silently. Answers 202 at once with status QUEUED; poll the `Location`. " +
    "`X-Sample-Run: true` starts a non-billable sample run within the client's allowance (429 beyond it).",
  security: BEARER,
  middleware: [requireScopes(scopesForCreate), jsonBody({ maxBytes: 64 * 1024 })] as const,
  request: {
    headers: CreateDetectionHeaders,
    body: { content: { "application/json": { schema: CreateDetectionBody } }, required: true },
  },
  responses: {
    202: {
      ...jsonResponse(DetectionDetail, "Accepted: the detection is QUEUED"),
      headers: { Location: { description: "Path of the new detection", schema: { type: "string" } } },
    },
    ...errorResponses,
    413: jsonResponse(ErrorResponse, "The JSON body is larger than 64 KiB"),
    429: jsonResponse(ErrorResponse, "Sample allowance used up, or the per-client rate limit exceeded"),
  },
});

export function registerCreateDetection(app: OpenAPIHono<AppEnv>): void {
  app.openapi(createDetectionRoute, async (c) => {
    const deps = c.var.deps;
    const { clientId } = c.var.principal;
    const body = c.req.valid("json");
    const sample = parseSampleHeader(c.req.valid("header")[SAMPLE_HEADER]) === true;
    const now = deps.clock.now();
    if (body.upload_id !== undefined) {
      await requireUsableUpload(deps.objects, deps.bucket, body.upload_id, clientId, now);
    }
    if (sample) {
      const allowance = deps.clients.get(clientId)?.sample_allowance ?? 0;
      if (!(await deps.usage.tryConsume(clientId, SAMPLE_USAGE_KIND, allowance))) {
        throw new ApiError(
          429,
          "sample_allowance_exhausted",
          `This client's sample run allowance of ${allowance} is used up; submit without X-Sample-Run (a billable run) or ask the operator for a larger sample_allowance.`,
        );
      }
    }
    const detection: Detection = {
      apiVersion: API_GROUP_VERSION,
      kind: DETECTION_KIND,
      metadata: {
        name: newDetectionId(now.getTime()),
        labels: { [LABELS.client]: clientLabel(clientId) },
        finalizers: [CLEANUP_FINALIZER],
      },
      spec: {
        source: body.source_url !== undefined ? { url: body.source_url } : { uploadId: body.upload_id! },
        docType: body.doc_type,
        region: normalizeRegion(body.region)!,
        submittedBy: clientId,
        sample,
        priority: sample ? "sample" : "interactive",
      },
    };
    let created: Detection;
    try {
      created = await deps.detections.create(detection);
    } catch (err) {
      if (sample) await deps.usage.refund(clientId, SAMPLE_USAGE_KIND).catch(() => undefined);
      throw err;
    }
    c.header("Location", `/v1/detection/${created.metadata.name}`);
    return c.json(DetectionDetail.parse(project(created)), 202);
  });
}
