import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import type { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type Detection, DETECTION_KIND } from "../../core/detection.js";
import { newDetectionId } from "../../core/ids.js";
import { normalizeRegion } from "../../core/regions.js";
import { API_GROUP_VERSION, CLEANUP_FINALIZER, LABELS, type ObjectMeta } from "../../core/resource.js";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { ApiDeps, AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { bearer, bearerErrors, bodyTooLarge, errorJson, jsonResponse, validationJson } from "../schema.js";
import { claimUpload, type UploadLocks } from "../uploads/reservation.js";
import { jsonBody } from "../validation.js";
import {
  idempotencyKeyOf,
  REPLAYED_HEADER,
  REUSED_MESSAGE,
  requestFingerprint,
  startIdempotent,
} from "../idempotency.js";
import { clientLabel } from "./access.js";
import { project } from "./project.js";
import {
  CreateDetectionBody,
  CreateDetectionHeaders,
  DetectionDetail,
  SAMPLE_HEADER,
  parseSampleHeader,
} from "./schema.js";

/** The tenant of the client's entry, when it names one (issue 23: the tenant memory). */
const tenantSpec = (tenant: string | undefined) => (tenant !== undefined ? { tenant } : {});

export const SAMPLE_USAGE_KIND = "sample";
const MAX_BODY_BYTES = 64 * 1024;

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
    "`X-Sample-Run: true` starts a non-billable sample run within the client's allowance (429 beyond it). " +
    "An upload starts one detection only: a second create with the same `upload_id` is 422, also after the " +
    "first detection was deleted. Send an `Idempotency-Key` to make the create safe to retry (see the header).",
  operationId: "createDetection",
  security: bearer(SCOPES.create, SCOPES.createSample),
  middleware: [requireScopes(scopesForCreate), jsonBody({ maxBytes: MAX_BODY_BYTES })] as const,
  request: {
    headers: CreateDetectionHeaders,
    body: { content: { "application/json": { schema: CreateDetectionBody } }, required: true },
  },
  responses: {
    202: {
      ...jsonResponse(DetectionDetail, "Accepted: the detection is QUEUED"),
      headers: {
        Location: { description: "Path of the new detection", schema: { type: "string" } },
        [REPLAYED_HEADER]: {
          description: "`true` when the answer repeats an earlier create with the same Idempotency-Key",
          schema: { type: "string", enum: ["true"] },
        },
      },
    },
    400: errorJson("The Idempotency-Key header is malformed", [
      "The Idempotency-Key header is empty; send 1-255 characters such as a UUID (e.g. Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324), a new one for each create.",
    ]),
    409: errorJson(
      "A request with the same Idempotency-Key is still being answered",
      [
        "A request with this Idempotency-Key is still being answered; retry the same request after 60 seconds to get its answer.",
      ],
      { "Retry-After": { description: "Seconds to wait", schema: { type: "integer" } } },
    ),
    ...bearerErrors(SCOPES.create),
    403: errorJson("The token lacks detections:create (or detections:create_sample for a sample run)", [
      `Missing required scopes: ${SCOPES.create}`,
      `Missing required scopes: ${SCOPES.createSample}`,
    ]),
    413: bodyTooLarge(MAX_BODY_BYTES),
    422: validationJson("Validation error", [
      {
        loc: ["body"],
        msg: "Provide exactly one of source_url or upload_id, not both",
        type: "value_error",
        input: { source_url: "https://example.com/a.pdf", upload_id: "upl-01jd5x9q3m8w2v7k4c6b0n1r2t" },
      },
      {
        loc: ["body", "upload_id"],
        msg: "This upload already started detection det-01jd5x9q3m8w2v7k4c6b0n1r2t; an upload starts one detection only, so create a new upload with POST /v1/uploads.",
        type: "upload_used",
        input: "upl-01jd5x9q3m8w2v7k4c6b0n1r2t",
      },
      {
        loc: ["header", "idempotency-key"],
        msg: REUSED_MESSAGE,
        type: "idempotency_key_reused",
        input: "8e03978e-40d5-43e8-bc93-6894a57f9324",
      },
    ]),
    429: errorJson(
      "The client's sample allowance is used up, or the per-client rate limit is exceeded",
      [
        "This client's sample run allowance of 2 is used up; submit without X-Sample-Run (a billable run) or ask the operator for a larger sample_allowance.",
        "Rate limit of 600 requests per minute exceeded for this client; retry after 12 seconds.",
      ],
      { "Retry-After": { description: "Seconds to wait (rate limit only)", schema: { type: "integer" } } },
    ),
  },
});

/** Claims the upload for the new detection (one detection per upload), then creates it; undoes the claim on failure. */
async function createFromUpload(
  locks: UploadLocks,
  deps: ApiDeps,
  detection: Detection,
  uploadId: string,
  clientId: string,
  now: Date,
): Promise<Detection> {
  return locks(uploadId, async () => {
    const claim = await claimUpload({
      objects: deps.objects,
      bucket: deps.bucket,
      detections: deps.detections,
      uploadId,
      clientId,
      detection: detection.metadata.name,
      now,
      maxBytes: deps.config.maxDocumentBytes,
    });
    try {
      return await deps.detections.create(detection);
    } catch (err) {
      await claim.release().catch(() => undefined);
      throw err;
    }
  });
}

export function registerCreateDetection(app: OpenAPIHono<AppEnv>): void {
  app.openapi(createDetectionRoute, async (c) => {
    const deps = c.var.deps;
    const { clientId } = c.var.principal;
    const body = c.req.valid("json");
    const sample = parseSampleHeader(c.req.valid("header")[SAMPLE_HEADER]) === true;
    const now = deps.clock.now();
    const key = idempotencyKeyOf(c);
    const idem =
      key === undefined
        ? undefined
        : await startIdempotent(deps, {
            kind: "detection",
            store: deps.detections,
            clientLabels: { [LABELS.client]: clientLabel(clientId) },
            clientId,
            key,
            fingerprint: requestFingerprint({ body, sample }),
          });
    if (idem && "replay" in idem) {
      c.header("Location", `/v1/detection/${idem.replay.metadata.name}`);
      c.header(REPLAYED_HEADER, "true");
      return c.json(DetectionDetail.parse(project(idem.replay)), 202);
    }
    try {
      return await createDetection(c, deps, body, clientId, sample, now, idem?.stamp);
    } finally {
      await idem?.release();
    }
  });
}

/** The client's detection policy, by name (its `policy` in the clients file), for the Detection's spec. */
const policyOf = (deps: ApiDeps, clientId: string) => {
  const policy = deps.clients.get(clientId)?.policy;
  return policy === undefined ? {} : { policy };
};

async function createDetection(
  c: Context<AppEnv>,
  deps: ApiDeps,
  body: z.infer<typeof CreateDetectionBody>,
  clientId: string,
  sample: boolean,
  now: Date,
  stamp: ((meta: ObjectMeta) => ObjectMeta) | undefined,
) {
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
  const name = newDetectionId(now.getTime());
  const detection: Detection = {
    apiVersion: API_GROUP_VERSION,
    kind: DETECTION_KIND,
    metadata: (stamp ?? ((m: ObjectMeta) => m))({
      name,
      labels: { [LABELS.client]: clientLabel(clientId) },
      finalizers: [CLEANUP_FINALIZER],
    }),
    spec: {
      source: body.source_url !== undefined ? { url: body.source_url } : { uploadId: body.upload_id! },
      docType: body.doc_type,
      region: normalizeRegion(body.region)!,
      submittedBy: clientId,
      ...tenantSpec(deps.clients.get(clientId)?.tenant),
      sample,
      priority: sample ? "sample" : "interactive",
      ...policyOf(deps, clientId),
    },
  };
  const refund = async () => {
    if (sample) await deps.usage.refund(clientId, SAMPLE_USAGE_KIND).catch(() => undefined);
  };
  let created: Detection;
  try {
    created =
      body.upload_id === undefined
        ? await deps.detections.create(detection)
        : await createFromUpload(c.var.uploadLocks, deps, detection, body.upload_id, clientId, now);
  } catch (err) {
    await refund();
    throw err;
  }
  c.header("Location", `/v1/detection/${created.metadata.name}`);
  return c.json(DetectionDetail.parse(project(created)), 202);
}
