import type { DetectionJob } from "../../core/detection-job.js";
import { failure } from "../../core/failure-codes.js";
import { phaseToApiStatus } from "../../core/phases.js";
import type { ResourceStore } from "../../core/ports.js";
import { LABELS } from "../../core/resource.js";
import { clientLabel } from "../detections/access.js";
import type { ApiDeps, Principal } from "../deps.js";
import { ApiError } from "../errors.js";
import { errorJson } from "../schema.js";
import type { JobDetail } from "./schema.js";

const JOBS_UNAVAILABLE =
  "Batch jobs are not enabled in this deployment; run the service with its job controller (docverify standalone does) or create detections one by one.";

/** The 503 of the job operations, for the documentation. */
export const jobsUnavailable = errorJson(
  "Batch jobs are not enabled in this deployment, or the service's storage is unavailable",
  [JOBS_UNAVAILABLE, "The service's storage is unavailable; retry in a few seconds."],
);

/** The job store, or 503 when this deployment runs without jobs. */
export function jobStore(deps: ApiDeps): ResourceStore<DetectionJob> {
  if (!deps.jobs) throw new ApiError(503, "jobs_unavailable", JOBS_UNAVAILABLE);
  return deps.jobs;
}

/** True when the caller may see `job`: its own, and not being deleted. */
export const jobVisibleTo = (job: DetectionJob, p: Principal) =>
  job.spec.submittedBy === p.clientId &&
  job.metadata.labels?.[LABELS.client] === clientLabel(p.clientId) &&
  !job.metadata.deletionTimestamp;

/** The caller's job `id`; 404 when unknown or another client's. */
export async function loadOwnJob(deps: ApiDeps, p: Principal, id: string): Promise<DetectionJob> {
  const job = await jobStore(deps).get(id.toLowerCase());
  if (!job || !jobVisibleTo(job, p)) throw new ApiError(404, "not_found", "Job not found");
  return job;
}

/** DetectionJob resource → the API's JobDetail (ARCHITECTURE.md, Decisions: Jobs). */
export function projectJob(job: DetectionJob): JobDetail {
  const s = job.status ?? {};
  const failed = s.phase === "Failed";
  const fail = failed ? (s.failure ?? failure("internal_error")) : null;
  return {
    job_id: job.metadata.name,
    status: phaseToApiStatus(s.phase),
    failure_code: fail?.code ?? null,
    failure_message: fail?.message ?? null,
    created_at: job.metadata.creationTimestamp ?? new Date(0).toISOString(),
    completed_at: s.completedAt ?? null,
    counts: s.counts ?? { total: 0, queued: 0, running: 0, completed: 0, failed: 0 },
    report:
      s.phase === "Completed" && s.report
        ? { bucket: s.report.bucket, results_key: s.report.resultsKey, summary_key: s.report.summaryKey }
        : null,
  };
}
