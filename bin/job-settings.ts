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
