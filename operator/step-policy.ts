import { type BackoffPolicy, backoffMs } from "../core/backoff.js";
import type { StepName, StepStatus } from "../core/detection.js";
import type { FailureCode } from "../core/failure-codes.js";
import type { WorkloadStatus } from "../core/ports.js";

/** Pure decisions about steps, kept apart from I/O so they can be tested exhaustively. */

/** The failure code a detection ends with when a step's process keeps crashing (or is lost). */
export function crashFailureCode(step: StepName): FailureCode {
  switch (step) {
    case "prepare":
      return "internal_error";
    case "check":
      return "check_failed";
    case "agent":
      return "agent_failed";
  }
}

/**
 * Why an attempt failed, as far as retrying goes. Running out of time (DeadlineExceeded) or memory
 * (OOMKilled) is, as a rule, a property of the document: the same bytes on the same step take the same
 * time and memory again. It may also be a slow or crowded machine, so such a failure gets one more attempt,
 * never more. Everything else — a crash (Error), a workload that disappeared (Lost, Deleted, Evicted), a
 * step that exited without its result (ResultMissing) — is the infrastructure's and is retried with
 * backoff until the attempts run out.
 */
export const RESOURCE_REASONS: ReadonlySet<string> = new Set(["DeadlineExceeded", "OOMKilled"]);

/** Retries after a step ran out of time or memory. */
export const RESOURCE_RETRIES = 1;

/** The failure code a detection ends with when a step keeps running out of time or memory. */
export function resourceFailureCode(step: StepName): FailureCode {
  switch (step) {
    case "prepare":
      return "internal_error";
    case "check":
      return "document_too_complex";
    case "agent":
      return "agent_failed";
  }
}

/** Between attempts of a step: 1 s, 2 s, 4 s, ... capped at 30 s. */
export const STEP_RETRY_BACKOFF: BackoffPolicy = { firstMs: 1_000, maxMs: 30_000 };

/** Delay before attempt `attempt + 1` after attempt `attempt` failed. */
export function retryDelayMs(attempt: number): number {
  return backoffMs(attempt, STEP_RETRY_BACKOFF);
}

/** An attempt of a step that did not deliver its result. */
export interface FailedAttempt {
  step: StepName;
  /** 1-based. */
  attempt: number;
  /**
   * Why, as the workload reported it (WorkloadObservation reasons: Error, DeadlineExceeded, OOMKilled,
   * Lost) or as the reconciler found it (ResultMissing: exited 0 without a readable result).
   */
  reason: string;
}

export type RetryDecision =
  | { retry: true; delayMs: number }
  /** Final: the detection fails with `code`; `why` says whether attempts ran out or retrying cannot help. */
  | { retry: false; code: FailureCode; why: "attempts" | "resources" };

/**
 * The retry policy, in one place: whether a failed attempt of a step is tried again, after how long, and
 * otherwise which failure code the detection ends with.
 * - out of time or memory (RESOURCE_REASONS): retried once (attempt 1 → 2), then final with
 *   resourceFailureCode (the check step: document_too_complex);
 * - anything else: retried with backoff until `maxAttempts` attempts have run, then final with
 *   crashFailureCode (the check step: check_failed).
 * A step that reports a failure in its result (a budget breach, an unreadable or encrypted document, a
 * refused source) has succeeded as a process and never comes here: it is never retried.
 */
export function decideRetry(failed: FailedAttempt, maxAttempts: number): RetryDecision {
  const resources = RESOURCE_REASONS.has(failed.reason);
  const code = resources ? resourceFailureCode(failed.step) : crashFailureCode(failed.step);
  if (resources && failed.attempt > RESOURCE_RETRIES) return { retry: false, code, why: "resources" };
  if (failed.attempt >= maxAttempts) return { retry: false, code, why: "attempts" };
  return { retry: true, delayMs: retryDelayMs(failed.attempt) };
}

export type WorkloadObservation =
  | { kind: "waiting"; state: "Pending" | "Running" }
  | { kind: "succeeded" }
  | { kind: "failed"; reason: string; message: string };

/** Maps what the runner reports for a step's workload (undefined = gone) to what the reconciler does. */
export function observeWorkload(w: WorkloadStatus | undefined): WorkloadObservation {
  if (!w) {
    return {
      kind: "failed",
      reason: "Lost",
      message: "The step's workload disappeared before it finished (the service or node restarted).",
    };
  }
  switch (w.state) {
    case "Pending":
    case "Running":
      return { kind: "waiting", state: w.state };
    case "Succeeded":
      return { kind: "succeeded" };
    case "Failed": {
      const reason = w.reason ?? "Error";
      const how =
        reason === "DeadlineExceeded"
          ? "ran past its time limit and was stopped"
          : reason === "OOMKilled"
            ? "ran out of memory"
            : w.exitCode !== undefined
              ? `exited with code ${w.exitCode}`
              : "failed";
      const detail = w.message ? `: ${truncate(w.message, 300)}` : "";
      return { kind: "failed", reason, message: `The ${w.step} step ${how}${detail}` };
    }
  }
}

/** The step that should run next: the first one not yet Succeeded (agent skipped when authoritative). */
export function nextStep(
  steps: readonly StepStatus[] | undefined,
  authoritative: boolean,
): StepName | undefined {
  const order: StepName[] = authoritative ? ["prepare", "check"] : ["prepare", "check", "agent"];
  return order.find((s) => steps?.find((x) => x.name === s)?.state !== "Succeeded");
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
