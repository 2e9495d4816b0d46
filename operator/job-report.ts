import { Readable } from "node:stream";
import type { Detection } from "../core/detection.js";
import { type DetectionDetailData, projectDetection } from "../core/detection-detail.js";
import { type DetectionJob, type JobReport, jobReportKeys } from "../core/detection-job.js";
import type { ObjectStore } from "../core/ports.js";
import { compareKeys } from "./job-listing.js";

/** summary.json of a finished job. */
export interface JobSummary {
  job_id: string;
  status: "COMPLETED";
  input: { bucket: string; prefixes: string[] };
  report: { bucket: string; results_key: string; summary_key: string };
  created_at: string | null;
  started_at: string | null;
  completed_at: string;
  counts: { total: number; completed: number; failed: number };
  /** FAILED detections by failure_code. */
  failure_codes: Record<string, number>;
  /** Mean fraud score of the detections that have one (null when none has). */
  mean_score: number | null;
  /** How many detections the mean is over (authoritative results carry no score). */
  scored: number;
  /** Which object each line of results.jsonl came from, in the same order. */
  objects: { key: string; detection_id: string; status: string }[];
}

const sourceKey = (d: Detection) => d.spec.source.object?.key ?? "";

/** A job's detections in report order: by source object key, then by id. */
export function reportOrder(detections: readonly Detection[]): Detection[] {
  return [...detections].sort(
    (a, b) =>
      compareKeys(sourceKey(a), sourceKey(b)) ||
      (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0),
  );
}

/** Builds the summary of a job whose detections are all terminal (pure). */
export function buildJobSummary(
  job: DetectionJob,
  details: readonly { key: string; detail: DetectionDetailData }[],
  completedAt: Date,
): JobSummary {
  const { resultsKey, summaryKey } = jobReportKeys(job.metadata.name, job.spec.output);
  const failureCodes: Record<string, number> = {};
  let completed = 0;
  let failed = 0;
  const scores: number[] = [];
  for (const { detail } of details) {
    if (detail.status === "COMPLETED") completed++;
    if (detail.status === "FAILED") {
      failed++;
      const code = detail.failure_code ?? "internal_error";
      failureCodes[code] = (failureCodes[code] ?? 0) + 1;
    }
    if (detail.score !== null) scores.push(detail.score);
  }
  const mean = scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null;
  return {
    job_id: job.metadata.name,
    status: "COMPLETED",
    input: { bucket: job.spec.connector.bucketName, prefixes: [...job.spec.connector.prefixes] },
    report: { bucket: job.spec.output.bucketName, results_key: resultsKey, summary_key: summaryKey },
    created_at: job.metadata.creationTimestamp ?? null,
    started_at: job.status?.startedAt ?? null,
    completed_at: completedAt.toISOString(),
    counts: { total: details.length, completed, failed },
    failure_codes: failureCodes,
    mean_score: mean === null ? null : Math.round(mean * 100) / 100,
    scored: scores.length,
    objects: details.map(({ key, detail }) => ({ key, detection_id: detail.id, status: detail.status })),
  };
}

/**
 * Writes `<prefix><job id>/results.jsonl` (one DetectionDetail per line, in report order) and
 * `.../summary.json` to the job's output bucket. Idempotent: a second run rewrites the same lines.
 */
export async function writeJobReport(
  objects: ObjectStore,
  job: DetectionJob,
  detections: readonly Detection[],
  completedAt: Date,
): Promise<JobReport> {
  const bucket = job.spec.output.bucketName;
  const { resultsKey, summaryKey } = jobReportKeys(job.metadata.name, job.spec.output);
  const details = reportOrder(detections).map((d) => ({ key: sourceKey(d), detail: projectDetection(d) }));
  await objects.ensureBucket(bucket);
  await objects.put(
    bucket,
    resultsKey,
    Readable.from(details.map(({ detail }) => `${JSON.stringify(detail)}\n`)),
    { contentType: "application/x-ndjson" },
  );
  const summary = buildJobSummary(job, details, completedAt);
  await objects.put(bucket, summaryKey, `${JSON.stringify(summary, null, 2)}\n`, {
    contentType: "application/json",
  });
  return { bucket, resultsKey, summaryKey };
}
