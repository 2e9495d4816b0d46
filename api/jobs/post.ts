import { randomUUID } from "node:crypto";
import { type OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { DETECTION_JOB_KIND, type DetectionJob } from "../../core/detection-job.js";
import { normalizeRegion } from "../../core/regions.js";
import { API_GROUP_VERSION, LABELS } from "../../core/resource.js";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import { clientLabel } from "../detections/access.js";
import type { ApiDeps, AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { bearer, bearerErrors, bodyTooLarge, errorJson, jsonResponse, validationJson } from "../schema.js";
import { jsonBody } from "../validation.js";
import {
  IDEMPOTENCY_HEADER,
  idempotencyHeaderSchema,
  idempotencyKeyOf,
  REPLAYED_HEADER,
  REUSED_MESSAGE,
  requestFingerprint,
  startIdempotent,
} from "../idempotency.js";
import { jobStore, jobsUnavailable, projectJob } from "./access.js";
import { CreateJobBody, JobCreated } from "./schema.js";

const MAX_BODY_BYTES = 64 * 1024;

export const createJobRoute = createRoute({
  method: "post",
  path: "/jobs",
  tags: ["jobs"],
  summary: "Create a batch job over a bucket",
  description:
    "Lists the objects under `connector.prefixes` of `connector.bucket_name` and verifies each as a detection " +
    "(batch_id = job_id, listed by GET /v1/detection?batch_id=). When all are finished, writes " +
    "`<output.prefix><job_id>/results.jsonl` (one DetectionDetail per line; objects that are no supported " +
    "document are FAILED lines) and `summary.json` to `output.bucket_name`. Both buckets must be in the client's " +
    "`buckets` list (403 naming the bucket otherwise). `force_error: true` fails the job at once with " +
    "`forced_error`. Poll GET /jobs/{job_id}. Send an `Idempotency-Key` to make the create safe to retry.",
  operationId: "createJob",
  security: bearer(SCOPES.jobsCreate),
  middleware: [requireScopes([SCOPES.jobsCreate]), jsonBody({ maxBytes: MAX_BODY_BYTES })] as const,
  request: {
    headers: z.object({ [IDEMPOTENCY_HEADER]: idempotencyHeaderSchema }),
    body: { content: { "application/json": { schema: CreateJobBody } }, required: true },
  },
  responses: {
    202: {
      ...jsonResponse(JobCreated, "Accepted: the job is QUEUED"),
      headers: {
        Location: { description: "Path of the new job", schema: { type: "string" } },
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
    ...bearerErrors(SCOPES.jobsCreate),
    403: errorJson(
      "The token lacks DocumentVerification:jobs:create, or a bucket is not in the client's buckets list",
      [
        `Missing required scopes: ${SCOPES.jobsCreate}`,
        'This client may not use the input bucket "loan-inbox": it is not in the client\'s buckets list; ask the operator of the service to add it.',
      ],
    ),
    413: bodyTooLarge(MAX_BODY_BYTES),
    422: validationJson("Validation error", [
      {
        loc: ["body", "connector", "bucket_name"],
        msg: "Input should be an S3 bucket name: 3 to 63 lowercase letters, digits, '.' or '-', starting and ending with a letter or digit",
        type: "string_pattern_mismatch",
        input: "Loan_Inbox",
      },
      {
        loc: ["header", "idempotency-key"],
        msg: REUSED_MESSAGE,
        type: "idempotency_key_reused",
        input: "8e03978e-40d5-43e8-bc93-6894a57f9324",
      },
    ]),
    503: jobsUnavailable,
  },
});

/** 403 unless the client's `buckets` list names `bucket` (the service's own bucket is never allowed). */
function requireBucketAccess(deps: ApiDeps, clientId: string, bucket: string, role: string): void {
  if (bucket === deps.bucket) {
    throw new ApiError(
      403,
      "bucket_forbidden",
      `The ${role} bucket "${bucket}" is the service's own storage and cannot be used by a job; name one of your buckets.`,
    );
  }
  const allowed = deps.clients.get(clientId)?.buckets ?? [];
  if (!allowed.includes(bucket)) {
    throw new ApiError(
      403,
      "bucket_forbidden",
      `This client may not use the ${role} bucket "${bucket}": it is not in the client's buckets list; ask the operator of the service to add it.`,
    );
  }
}

export function registerCreateJob(app: OpenAPIHono<AppEnv>): void {
  app.openapi(createJobRoute, async (c) => {
    const deps = c.var.deps;
    const jobs = jobStore(deps);
    const { clientId } = c.var.principal;
    const body = c.req.valid("json");
    requireBucketAccess(deps, clientId, body.connector.bucket_name, "input");
    requireBucketAccess(deps, clientId, body.output.bucket_name, "output");
    const key = idempotencyKeyOf(c);
    const idem =
      key === undefined
        ? undefined
        : await startIdempotent(deps, {
            kind: "job",
            store: jobs,
            clientLabels: { [LABELS.client]: clientLabel(clientId) },
            clientId,
            key,
            fingerprint: requestFingerprint({ body }),
          });
    if (idem && "replay" in idem) {
      c.header("Location", `/jobs/${idem.replay.metadata.name}`);
      c.header(REPLAYED_HEADER, "true");
      const replayed = projectJob(idem.replay);
      return c.json(JobCreated.parse({ job_id: replayed.job_id, status: replayed.status }), 202);
    }
    const metadata = { name: randomUUID(), labels: { [LABELS.client]: clientLabel(clientId) } };
    const job: DetectionJob = {
      apiVersion: API_GROUP_VERSION,
      kind: DETECTION_JOB_KIND,
      metadata: idem ? idem.stamp(metadata) : metadata,
      spec: {
        connector: { type: "s3", bucketName: body.connector.bucket_name, prefixes: body.connector.prefixes },
        output: { type: "s3", bucketName: body.output.bucket_name, prefix: body.output.prefix },
        forceError: body.force_error,
        docType: body.doc_type ?? "other",
        region: normalizeRegion(body.region ?? deps.config.defaultRegion) ?? deps.config.defaultRegion,
        submittedBy: clientId,
        ...(deps.clients.get(clientId)?.tenant !== undefined
          ? { tenant: deps.clients.get(clientId)?.tenant }
          : {}),
        ...(deps.clients.get(clientId)?.policy ? { policy: deps.clients.get(clientId)?.policy } : {}),
      },
    };
    let created: DetectionJob;
    try {
      created = await jobs.create(job);
    } finally {
      await idem?.release();
    }
    c.header("Location", `/jobs/${created.metadata.name}`);
    const detail = projectJob(created);
    return c.json(JobCreated.parse({ job_id: detail.job_id, status: detail.status }), 202);
  });
}
