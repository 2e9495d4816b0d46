import type { DetectionJob } from "../core/detection-job.js";
import { ConfigError } from "../core/config.js";
import type { JobReconcilerSettings } from "../operator/detection-job-reconciler.js";

/** Default bound of unfinished detections per job: enough to keep the workers busy, not a flood. */
export const DEFAULT_JOB_MAX_IN_FLIGHT = 20;

/**
 * Settings of the DetectionJob reconciler from the environment:
 * `DOCVERIFY_JOB_MAX_IN_FLIGHT` (default 20) = most detections of one job unfinished at once.
 */
export function jobSettingsFromEnv(env: Record<string, string | undefined>): JobReconcilerSettings {
  const raw = env.DOCVERIFY_JOB_MAX_IN_FLIGHT;
  if (raw === undefined || raw.trim() === "") return { maxInFlight: DEFAULT_JOB_MAX_IN_FLIGHT };
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    throw new ConfigError(
      `Invalid configuration: DOCVERIFY_JOB_MAX_IN_FLIGHT: expected a whole number ≥ 1, got "${raw}"`,
    );
  }
  return { maxInFlight: n };
}

/** DetectionJobs counted by phase (a job without a phase yet is Queued), for the docverify_detection_jobs gauge. */
export function jobsByPhase(jobs: readonly DetectionJob[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const j of jobs) {
    const phase = j.status?.phase ?? "Queued";
    out[phase] = (out[phase] ?? 0) + 1;
  }
  return out;
}
