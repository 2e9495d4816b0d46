import { createHash } from "node:crypto";
import { z } from "zod";
import { WebhookOutboxMark } from "./webhook-mark.js";
import { Condition, FailureInfo } from "./detection.js";
import { PHASES } from "./phases.js";
import { API_GROUP_VERSION, ObjectMeta } from "./resource.js";
import { DOC_TYPES } from "./verdict.js";

/**
 * DetectionJob: a batch over an object-store bucket (POST /jobs). It fans out one Detection per listed
 * object (source `object`, label `docverify.io/batch` = job id, priority `batch`) and, once every one is
 * terminal, writes a JSONL report and a summary to the output bucket. metadata.name is the job id (a UUID,
 * which is a valid object name). Deleting a job leaves its detections: they are ordinary detections
 * carrying batch_id, deleted like any other.
 */
export const DETECTION_JOB_KIND = "DetectionJob";
export const DETECTION_JOB_PLURAL = "detectionjobs";
export const DETECTION_JOB_SHORT_NAME = "djob";

export const JobConnector = z.object({
  type: z.literal("s3"),
  bucketName: z.string().min(1),
  /** Key prefixes to list; `""` lists the whole bucket. */
  prefixes: z.array(z.string()).min(1),
});
export type JobConnector = z.infer<typeof JobConnector>;

export const JobOutput = z.object({
  type: z.literal("s3"),
  bucketName: z.string().min(1),
  /** The report goes to `<prefix><job id>/results.jsonl` and `.../summary.json`. */
  prefix: z.string(),
});
export type JobOutput = z.infer<typeof JobOutput>;

export const DetectionJobSpec = z.object({
  connector: JobConnector,
  output: JobOutput,
  forceError: z.boolean().default(false),
  docType: z.enum(DOC_TYPES),
  region: z.string().regex(/^[A-Z]{2}$/),
  /** The client that created the job; its detections are submitted by the same client. */
  submittedBy: z.string(),
  /** The tenant of the client's entry (the Detections it creates join that tenant's memory). */
  tenant: z.string().optional(),
  /** The client's detection policy (its `policy` in the clients file), passed on to every detection. */
  policy: z.string().max(63).optional(),
});
export type DetectionJobSpec = z.infer<typeof DetectionJobSpec>;

export const JobCounts = z.object({
  total: z.number().int().nonnegative(),
  queued: z.number().int().nonnegative(),
  running: z.number().int().nonnegative(),
  completed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
});
export type JobCounts = z.infer<typeof JobCounts>;

export const JobListing = z.object({
  /** True once every prefix has been listed to its end and every object has its Detection. */
  done: z.boolean(),
  /**
   * The last object key fanned out. Keys are fanned out in key order across the (normalised) prefixes,
   * so a restart resumes after it. Absent before the first object.
   */
  continueAfter: z.string().optional(),
});
export type JobListing = z.infer<typeof JobListing>;

export const JobReport = z.object({
  bucket: z.string(),
  resultsKey: z.string(),
  summaryKey: z.string(),
});
export type JobReport = z.infer<typeof JobReport>;

export const DetectionJobStatus = z.object({
  phase: z.enum(PHASES).optional(),
  observedGeneration: z.number().int().optional(),
  conditions: z.array(Condition).optional(),
  counts: JobCounts.optional(),
  listing: JobListing.optional(),
  report: JobReport.optional(),
  failure: FailureInfo.optional(),
  startedAt: z.string().optional(),
  completedAt: z.string().optional(),
  /** The webhook outbox mark (core/webhook-mark.ts): an event owed to the client's endpoints. */
  webhooks: WebhookOutboxMark.optional(),
});
export type DetectionJobStatus = z.infer<typeof DetectionJobStatus>;

export const DetectionJob = z.object({
  apiVersion: z.literal(API_GROUP_VERSION),
  kind: z.literal(DETECTION_JOB_KIND),
  metadata: ObjectMeta,
  spec: DetectionJobSpec,
  status: DetectionJobStatus.optional(),
});
export type DetectionJob = z.infer<typeof DetectionJob>;

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

/**
 * Name of the Detection a job creates for the object `key`: `det-` + a lowercase ULID whose time part is
 * the job's creation time and whose 16 random characters come from sha256(jobId + "\0" + key).
 * Deterministic, so a restart in the middle of fan-out meets AlreadyExists instead of creating a
 * duplicate; and of the same form as every other detection id, so a job's detections sort (and list,
 * newest first) at the time the job was created.
 */
export function batchDetectionName(jobId: string, jobCreatedAt: string | Date, key: string): string {
  const ms = typeof jobCreatedAt === "string" ? Date.parse(jobCreatedAt) : jobCreatedAt.getTime();
  if (!Number.isFinite(ms) || ms < 0)
    throw new RangeError(`Not a job creation time: ${String(jobCreatedAt)}`);
  let time = "";
  for (let t = Math.floor(ms), i = 0; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32] + time;
  const digest = createHash("sha256").update(`${jobId}\0${key}`).digest();
  let random = "";
  for (let i = 0; i < 16; i++) random += CROCKFORD[digest[i]! & 31];
  return `det-${time}${random}`;
}

/** Object keys of a job's report in the output bucket. */
export function jobReportKeys(jobId: string, output: JobOutput): { resultsKey: string; summaryKey: string } {
  return {
    resultsKey: `${output.prefix}${jobId}/results.jsonl`,
    summaryKey: `${output.prefix}${jobId}/summary.json`,
  };
}
