import { randomUUID } from "node:crypto";
import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
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
    "`forced_error`. Poll GET /jobs/{job_id}.",
  operationId: "createJob",
  security: bearer(SCOPES.jobsCreate),
  middleware: [requireScopes([SCOPES.jobsCreate]), jsonBody({ maxBytes: MAX_BODY_BYTES })] as const,
  request: { body: { content: { "application/json": { schema: CreateJobBody } }, required: true } },
  responses: {
    202: {
      ...jsonResponse(JobCreated, "Accepted: the job is QUEUED"),
      headers: { Location: { description: "Path of the new job", schema: { type: "string" } } },
    },
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
    const job: DetectionJob = {
      apiVersion: API_GROUP_VERSION,
      kind: DETECTION_JOB_KIND,
      metadata: { name: randomUUID(), labels: { [LABELS.client]: clientLabel(clientId) } },
      spec: {
        connector: { type: "s3", bucketName: body.connector.bucket_name, prefixes: body.connector.prefixes },
        output: { type: "s3", bucketName: body.output.bucket_name, prefix: body.output.prefix },
        forceError: body.force_error,
        docType: body.doc_type ?? "other",
        region: normalizeRegion(body.region ?? deps.config.defaultRegion) ?? deps.config.defaultRegion,
        submittedBy: clientId,
      },
    };
    const created = await jobs.create(job);
    c.header("Location", `/jobs/${created.metadata.name}`);
    const detail = projectJob(created);
    return c.json(JobCreated.parse({ job_id: detail.job_id, status: detail.status }), 202);
  });
}
