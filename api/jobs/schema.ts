import { z } from "@hono/zod-openapi";
import { normalizeRegion } from "../../core/regions.js";
import { API_STATUSES } from "../../core/phases.js";
import { DocTypeField } from "../detections/schema.js";

/** S3 bucket naming rules (3-63 lowercase letters, digits, '.' and '-', starting and ending alphanumeric). */
export const BUCKET_NAME_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const BUCKET_MESSAGE =
  "Input should be an S3 bucket name: 3 to 63 lowercase letters, digits, '.' or '-', starting and ending with a letter or digit";

/** Why a key prefix is unusable, or undefined when it is fine ('' = the whole bucket). */
export function prefixProblem(prefix: string): string | undefined {
  if (prefix.includes("\0")) return "it contains a NUL character";
  if (prefix.includes("\\")) return "it contains a backslash; separate folders with '/'";
  if (prefix.startsWith("/")) return "it starts with '/'; prefixes are relative to the bucket";
  const segments = prefix.split("/");
  if (segments.slice(0, -1).some((s) => s === "")) return "it has an empty path segment ('//')";
  if (segments.some((s) => s === "." || s === "..")) return "it has a '.' or '..' path segment";
  return undefined;
}

/**
 * prefixProblem as one pattern (no lookaround, so every validator reads it): '/'-separated segments of
 * anything but NUL, '\\' and '/', none '.' or '..', only the last one empty ('' and 'a/' are fine).
 * The validator tests this pattern (so the document and the server agree) and prefixProblem says why.
 */
const SEGMENT = "(?:[^\\x00\\\\/.][^\\x00\\\\/]*|\\.[^\\x00\\\\/.][^\\x00\\\\/]*|\\.\\.[^\\x00\\\\/]+)";
export const PREFIX_RE = new RegExp(`^(?:${SEGMENT}/)*(?:${SEGMENT})?$`);

const Prefix = z
  .string()
  .max(1024)
  .superRefine((p, ctx) => {
    if (PREFIX_RE.test(p)) return;
    const problem = prefixProblem(p) ?? "it does not have the form of a key prefix";
    ctx.addIssue({ code: "custom", message: `Input should be a key prefix, but ${problem}` });
  })
  .openapi({
    pattern: PREFIX_RE.source,
    description:
      "'/'-separated segments relative to the bucket: no NUL or backslash, no leading '/', no '//', no '.' or '..' segment",
  });

const BucketName = z.string().regex(BUCKET_NAME_RE, BUCKET_MESSAGE).openapi({ example: "loan-inbox" });

export const CreateJobBody = z
  .strictObject({
    connector: z
      .strictObject({
        type: z.literal("s3").openapi({ description: "Connector kind; `s3` is the only one" }),
        bucket_name: BucketName,
        prefixes: z
          .array(Prefix)
          .min(1)
          .max(100)
          .openapi({
            example: ["2026-11-02/", "scans/"],
            description:
              'Key prefixes to list; `""` lists the whole bucket. Overlapping prefixes list an object once.',
          }),
      })
      .openapi({
        description: "Where the documents are: every object under the prefixes becomes a detection",
      }),
    output: z
      .strictObject({
        type: z.literal("s3").openapi({ description: "Output kind; `s3` is the only one" }),
        bucket_name: BucketName.openapi({ example: "loan-reports" }),
        prefix: Prefix.openapi({
          example: "reports/",
          description:
            "The report goes to `<prefix><job_id>/results.jsonl` and `<prefix><job_id>/summary.json`",
        }),
      })
      .openapi({ description: "Where the report is written" }),
    force_error: z
      .boolean()
      .default(false)
      .openapi({ description: "true fails the job at once with forced_error (to test error handling)" }),
    doc_type: DocTypeField.optional().openapi({
      description:
        "Declared type of every document of the job (aliases as for POST /v1/detection); default `other`",
    }),
    region: z
      .string()
      .refine((v) => normalizeRegion(v) !== undefined, {
        message: "Input should be an ISO 3166-1 alpha-2 region code such as US, GB or DE",
      })
      .optional()
      .openapi({
        pattern: "^[A-Za-z]{2}$",
        example: "GB",
        description: "ISO 3166-1 alpha-2, any case; default the deployment's DOCVERIFY_DEFAULT_REGION",
      }),
  })
  .openapi("CreateJobRequest", {
    description:
      "A batch over a bucket: one detection per object under the connector's prefixes, and a JSONL report in the " +
      "output bucket once all are finished. Both buckets must be in the client's `buckets` list (else 403). " +
      "Unknown fields are rejected with 422 (extra_forbidden).",
  });
export type CreateJobBody = z.infer<typeof CreateJobBody>;

export const JobCreated = z
  .object({
    job_id: z.uuid().openapi({ example: "3f0b8a52-5a7e-4c1e-9d55-2b1f6c0e7a91" }),
    status: z.enum(API_STATUSES).openapi({ example: "QUEUED" }),
  })
  .openapi("JobCreated");

/**
 * A UUID in either case, written without regex flags: the OpenAPI document carries `pattern` as a plain
 * string, which every JSON Schema validator and generated client reads as ECMA-262 (and most other dialects).
 */
const UUID_RE = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

export const JobIdParams = z.object({
  job_id: z
    .string()
    .regex(UUID_RE, "Input should be a job id (a UUID) as returned by POST /jobs")
    .openapi({ param: { name: "job_id", in: "path" }, example: "3f0b8a52-5a7e-4c1e-9d55-2b1f6c0e7a91" }),
});

export const JobCounts = z
  .object({
    total: z.number().int(),
    queued: z.number().int(),
    running: z.number().int(),
    completed: z.number().int(),
    failed: z.number().int(),
  })
  .openapi("JobCounts", {
    description: "The job's detections by status; `total` grows while the bucket is being listed",
  });

export const JobReportLocation = z
  .object({ bucket: z.string(), results_key: z.string(), summary_key: z.string() })
  .openapi("JobReportLocation");

const nullableString = z.string().nullable();

export const JobDetail = z
  .object({
    job_id: z.string().openapi({ example: "3f0b8a52-5a7e-4c1e-9d55-2b1f6c0e7a91" }),
    status: z.enum(API_STATUSES),
    failure_code: nullableString.openapi({
      description: "Reason for FAILED (`forced_error`); null otherwise",
    }),
    failure_message: nullableString,
    created_at: z.string().openapi({ format: "date-time" }),
    completed_at: nullableString.openapi({ format: "date-time" }),
    counts: JobCounts,
    report: JobReportLocation.nullable().openapi({ description: "Set once the job is COMPLETED" }),
  })
  .openapi("JobDetail");
export type JobDetail = z.infer<typeof JobDetail>;
