/**
 * The webhook deliverer's settings (DOCVERIFY_WEBHOOK_*), read apart from core/config.ts like the job
 * settings. The retry schedule is a list of delays in seconds, one per retry after the first attempt:
 * the default's first retry comes after 5 s and the last after about 27.6 hours in all; tests shorten it.
 */
export interface WebhookSettings {
  /** Delays before retry 1, 2, … in ms; after the last the delivery has failed (a replay sends it again). */
  retryDelaysMs: number[];
  /** Whole attempt deadline (connect, answer, body). */
  timeoutMs: number;
  /** The most of an answer's body that is read (the rest is not waited for). */
  maxResponseBytes: number;
  /** Attempts in flight per endpoint. */
  endpointConcurrency: number;
  /** Attempts in flight in all. */
  totalConcurrency: number;
  /** Consecutive failed attempts that pause an endpoint (the circuit opens). */
  circuitFailures: number;
  /** How long an open circuit pauses the endpoint before one trial attempt. */
  circuitPauseMs: number;
  /** How often replay requests filed by the API are looked for. */
  replayPollMs: number;
}

export const DEFAULT_RETRY_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];

const seconds = (v: string | undefined, name: string, fallback: number, min = 0): number => {
  if (v === undefined || v.trim() === "") return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min)
    throw new WebhookSettingsError(`${name}: expected seconds ≥ ${min}, got "${v}"`);
  return n;
};
const whole = (v: string | undefined, name: string, fallback: number, min = 1): number => {
  const n = seconds(v, name, fallback, min);
  if (!Number.isInteger(n)) throw new WebhookSettingsError(`${name}: expected a whole number, got "${v}"`);
  return n;
};

export class WebhookSettingsError extends Error {
  override name = "ConfigError";
}

export function webhookSettingsFrom(env: Record<string, string | undefined>): WebhookSettings {
  const raw = env.DOCVERIFY_WEBHOOK_RETRY_SECONDS;
  const retry =
    raw === undefined || raw.trim() === ""
      ? DEFAULT_RETRY_SECONDS
      : raw.split(",").map((p) => seconds(p.trim(), "DOCVERIFY_WEBHOOK_RETRY_SECONDS", 0));
  return {
    retryDelaysMs: retry.map((s) => Math.round(s * 1000)),
    timeoutMs:
      seconds(env.DOCVERIFY_WEBHOOK_TIMEOUT_SECONDS, "DOCVERIFY_WEBHOOK_TIMEOUT_SECONDS", 15, 0.1) * 1000,
    maxResponseBytes: 64 * 1024,
    endpointConcurrency: whole(
      env.DOCVERIFY_WEBHOOK_ENDPOINT_CONCURRENCY,
      "DOCVERIFY_WEBHOOK_ENDPOINT_CONCURRENCY",
      4,
    ),
    totalConcurrency: whole(env.DOCVERIFY_WEBHOOK_CONCURRENCY, "DOCVERIFY_WEBHOOK_CONCURRENCY", 32),
    circuitFailures: whole(env.DOCVERIFY_WEBHOOK_CIRCUIT_FAILURES, "DOCVERIFY_WEBHOOK_CIRCUIT_FAILURES", 10),
    circuitPauseMs:
      seconds(env.DOCVERIFY_WEBHOOK_CIRCUIT_PAUSE_SECONDS, "DOCVERIFY_WEBHOOK_CIRCUIT_PAUSE_SECONDS", 300) *
      1000,
    replayPollMs:
      seconds(env.DOCVERIFY_WEBHOOK_POLL_SECONDS, "DOCVERIFY_WEBHOOK_POLL_SECONDS", 2, 0.05) * 1000,
  };
}
