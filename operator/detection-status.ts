import type { CheckOutcome } from "../core/check-result.js";
import { setCondition } from "../core/conditions.js";
import {
  type Detection,
  type DetectionStatus,
  type StepName,
  type StepStatus,
  summarizeChecks,
} from "../core/detection.js";
import type { EventType } from "../core/event-recorder.js";
import { type FailureCode, failure } from "../core/failure-codes.js";
import type { StepResult } from "../core/step-results.js";
import { decideRetry, truncate } from "./step-policy.js";

/**
 * The Detection's status transitions, pure: each function takes a status (never changed) and what was
 * observed, and returns the next status with the events to record once it is written, in order. The
 * reconciler (detection-reconciler.ts) does the I/O around them: reading the resource and the world,
 * starting and deleting workloads, writing the status, recording the events.
 */

/** What a person watching the detection is told (a Kubernetes Event in the cluster, a log line standalone). */
export interface StatusEvent {
  type: EventType;
  /** CamelCase, e.g. StepSucceeded. */
  reason: string;
  message: string;
}

/** A log line the reconciler writes for the transition. */
export interface TransitionLog {
  level: "info" | "warn" | "error";
  fields: Record<string, unknown>;
  msg: string;
}

export interface Transition {
  status: DetectionStatus;
  /** Recorded in this order once the status is written; a detection's Completed/Failed event comes last. */
  events: StatusEvent[];
  /** A failed attempt will be retried after this delay. */
  retryInMs?: number;
  log?: TransitionLog;
}

export interface TransitionSettings {
  /** Attempts of a step before the detection fails with the step's crash code. */
  stepMaxAttempts: number;
  /** How long a verdict is kept (verdictExpiresAt). */
  retentionSeconds: number;
}

/** A step's full result as the step wrote it (validated against its schema: core/step-results.ts). */
export type { StepResult };

/** An attempt that did not deliver its result. */
export interface AttemptFailure {
  step: StepName;
  /** Error, DeadlineExceeded, OOMKilled, Lost (from the workload) or ResultMissing. */
  reason: string;
  /** One sentence: what happened. */
  message: string;
}

const copy = (s: DetectionStatus): DetectionStatus => structuredClone(s);

/**
 * A status written before the status was bounded kept every check's full result in `checks`; the
 * reconciler reads it as the per-check summary the schema now has (the same status otherwise), so a
 * detection that was running during an upgrade finishes, and is archived, like any other.
 */
export function upgradeLegacyStatus(status: DetectionStatus): DetectionStatus {
  const checks = status.checks as unknown[] | undefined;
  if (!checks?.some((c) => (c as { findingCount?: unknown }).findingCount === undefined)) return status;
  const next = copy(status);
  next.checks = checks.map((c) => {
    const legacy = c as {
      checkId: string;
      outcome: CheckOutcome;
      severity: number;
      findings?: unknown[];
      findingCount?: number;
    };
    return {
      checkId: legacy.checkId,
      outcome: legacy.outcome,
      severity: legacy.severity,
      findingCount: legacy.findingCount ?? legacy.findings?.length ?? 0,
    };
  });
  return next;
}

/**
 * The generation a pass of an unfinished detection acts on: the status's observedGeneration follows
 * `metadata.generation`, and every condition a transition sets carries it (core/conditions.ts).
 */
export function observeGeneration(status: DetectionStatus, d: Detection): DetectionStatus {
  if (status.observedGeneration === d.metadata.generation) return status;
  const next = copy(status);
  next.observedGeneration = d.metadata.generation;
  return next;
}

/** Waiting for a slot: the first status a detection gets. */
export function queued(status: DetectionStatus, d: Detection, now: Date): DetectionStatus {
  const next = copy(status);
  next.phase = "Queued";
  next.observedGeneration = d.metadata.generation;
  next.billable = !d.spec.sample;
  next.conditions = setCondition(
    next.conditions,
    { type: "Ready", status: "False", reason: "Queued", message: "Waiting for a free slot." },
    { now, generation: next.observedGeneration },
  );
  return next;
}

/** Admitted by the scheduler: Running from now on (startedAt is kept from the first admission). */
export function running(status: DetectionStatus, d: Detection, now: Date): DetectionStatus {
  if (status.phase === "Running") return status;
  const next = copy(status);
  next.phase = "Running";
  next.startedAt = next.startedAt ?? now.toISOString();
  next.observedGeneration = d.metadata.generation;
  next.billable = !d.spec.sample;
  return next;
}

/** When the detection must be finished: its deadline counts from admission; never admitted, 24 h. */
export function deadlineOf(
  d: Detection,
  status: DetectionStatus,
  deadlineSeconds: number,
  now: Date,
  queueLimitMs: number,
): number {
  const created = Date.parse(d.metadata.creationTimestamp ?? now.toISOString());
  return status.startedAt
    ? Date.parse(status.startedAt) + deadlineSeconds * 1000
    : created + Math.max(queueLimitMs, deadlineSeconds * 1000);
}

/** An attempt of `step` was started as `workload`. */
export function attemptStarted(
  status: DetectionStatus,
  step: StepName,
  attempt: number,
  workload: string,
  now: Date,
): Transition {
  const next = copy(status);
  const entry: StepStatus = { name: step, workload, attempt, state: "Pending", startedAt: now.toISOString() };
  next.steps = [...(next.steps ?? []).filter((s) => s.name !== step), entry];
  next.conditions = setCondition(
    next.conditions,
    {
      type: "Ready",
      status: "False",
      reason: `${capitalize(step)}Running`,
      message: attempt > 1 ? `Running the ${step} step (attempt ${attempt}).` : `Running the ${step} step.`,
    },
    { now, generation: next.observedGeneration },
  );
  return {
    status: next,
    events: [
      {
        type: "Normal",
        reason: "StepStarted",
        message: `Started the ${step} step (attempt ${attempt}) as ${workload}.`,
      },
    ],
  };
}

/** The current attempt's workload is Pending or Running. */
export function attemptWaiting(
  status: DetectionStatus,
  step: StepName,
  state: "Pending" | "Running",
): DetectionStatus {
  const next = copy(status);
  const entry = stepOf(next, step);
  entry.state = state;
  return next;
}

/** The current attempt of `step` delivered its result: record it and move on (or finish). */
export function attemptSucceeded(
  status: DetectionStatus,
  result: StepResult,
  now: Date,
  settings: TransitionSettings,
): Transition {
  const next = copy(status);
  const step = result.step;
  const entry = stepOf(next, step);
  entry.state = "Succeeded";
  entry.finishedAt = now.toISOString();
  entry.message = undefined;
  const events: StatusEvent[] = [
    {
      type: "Normal",
      reason: "StepSucceeded",
      message: `The ${step} step succeeded (attempt ${entry.attempt}).`,
    },
  ];
  let log: TransitionLog | undefined;
  switch (result.step) {
    case "prepare":
      if (result.failure || !result.document) {
        log = {
          level: "info",
          fields: { failure: result.failure?.code },
          msg: "prepare refused the document",
        };
        failIn(next, result.failure?.code ?? "internal_error", now);
      } else {
        next.document = result.document;
      }
      break;
    case "check":
      if (result.failure) {
        failIn(next, result.failure.code, now);
        break;
      }
      next.checks = summarizeChecks(result.checks);
      next.discovered = result.discovered;
      if (result.authoritative) {
        next.authoritative = result.authoritative;
        log = {
          level: "info",
          fields: { checkId: result.authoritative.checkId, trust: result.authoritative.trust },
          msg: "authoritative result; agent skipped",
        };
        completeIn(next, now);
      }
      break;
    case "agent":
      next.agent = { runId: result.runId, ...(result.error ? { error: result.error } : {}) };
      if (result.failure || !result.verdict) {
        failIn(next, result.failure?.code ?? "agent_failed", now);
        break;
      }
      next.verdict = result.verdict;
      next.score = result.verdict.fraudScore;
      next.verdictExpiresAt = new Date(now.getTime() + settings.retentionSeconds * 1000).toISOString();
      completeIn(next, now);
      break;
  }
  return withTerminalEvent(status, { status: next, events, ...(log ? { log } : {}) });
}

/**
 * The current attempt of a step failed (crashed, timed out, ran out of memory, lost, or exited without a
 * result): retried with backoff while decideRetry allows, otherwise the detection fails with the code
 * decideRetry names.
 */
export function attemptFailed(
  status: DetectionStatus,
  failed: AttemptFailure,
  now: Date,
  settings: TransitionSettings,
): Transition {
  const next = copy(status);
  const entry = stepOf(next, failed.step);
  entry.state = "Failed";
  entry.finishedAt = now.toISOString();
  entry.message = truncate(`${failed.reason}: ${failed.message}`, 500);
  const fields = {
    step: failed.step,
    attempt: entry.attempt,
    reason: failed.reason,
    message: failed.message,
  };
  const decision = decideRetry(
    { step: failed.step, attempt: entry.attempt, reason: failed.reason },
    settings.stepMaxAttempts,
  );
  if (!decision.retry) {
    failIn(next, decision.code, now);
    if (failed.step === "agent") {
      next.agent = {
        ...next.agent,
        error: `The agent step failed ${entry.attempt} times; last: ${truncate(failed.message, 300)}`,
      };
    }
    const final =
      decision.why === "attempts"
        ? { event: "No attempts left.", log: "step failed; no attempts left" }
        : {
            event: "Not retried again: it would run out of time or memory again on the same document.",
            log: "step failed; not retried (out of time or memory again)",
          };
    return withTerminalEvent(status, {
      status: next,
      events: [{ type: "Warning", reason: "StepFailed", message: `${entry.message} ${final.event}` }],
      log: { level: "error", fields, msg: final.log },
    });
  }
  entry.retryAt = new Date(now.getTime() + decision.delayMs).toISOString();
  return {
    status: next,
    events: [
      {
        type: "Warning",
        reason: "StepFailed",
        message: `${entry.message} Retrying in ${Math.round(decision.delayMs / 1000)} s.`,
      },
    ],
    retryInMs: decision.delayMs,
    log: {
      level: "warn",
      fields: { ...fields, retryInMs: decision.delayMs },
      msg: "step failed; will retry",
    },
  };
}

/** Finished with a verdict (or decided by an authoritative check). */
export function complete(status: DetectionStatus, now: Date): Transition {
  const next = copy(status);
  completeIn(next, now);
  return withTerminalEvent(status, { status: next, events: [] });
}

/** Failed with `code` (e.g. deadline_exceeded): no score, no verdict, not billable. */
export function fail(status: DetectionStatus, code: FailureCode, now: Date): Transition {
  const next = copy(status);
  failIn(next, code, now);
  return withTerminalEvent(status, { status: next, events: [] });
}

/**
 * The next status was refused by the store's size guard (core/resource-size.ts): the detection fails with
 * internal_error instead, keeping what it had before the refused write (its verdict, which is what grows,
 * is not kept); the condition and a Warning event say why, so the failure is clear in `kubectl describe`
 * and in the log, in both runtimes alike. `keepChecks: false` also drops the per-check summary (a last
 * resort for a status that is too large even so).
 */
export function statusTooLarge(
  status: DetectionStatus,
  message: string,
  now: Date,
  opts: { keepChecks?: boolean } = {},
): Transition {
  const next = copy(status);
  if (opts.keepChecks === false) next.checks = undefined;
  failIn(next, "internal_error", now);
  next.conditions = setCondition(
    next.conditions,
    { type: "Ready", status: "False", reason: "StatusTooLarge", message: truncate(message, 1000) },
    { now, generation: next.observedGeneration },
  );
  return withTerminalEvent(status, {
    status: next,
    events: [{ type: "Warning", reason: "StatusTooLarge", message: truncate(message, 1000) }],
    log: { level: "error", fields: { reason: "StatusTooLarge" }, msg: message },
  });
}

/** The retention period is over: the verdict (and its reasoning) reads null; status and score stay. */
export function pruned(status: DetectionStatus, now: Date, removedFiles: number): Transition {
  const next = copy(status);
  next.verdict = null;
  next.prunedAt = now.toISOString();
  return {
    status: next,
    events: [
      {
        type: "Normal",
        reason: "Pruned",
        message: `Retention period over: the verdict and ${removedFiles} stored file(s) were removed.`,
      },
    ],
  };
}

/** The event that tells a detection ended, for a status that is Completed or Failed. */
export function terminalEvent(status: DetectionStatus): StatusEvent | undefined {
  if (status.phase === "Completed") {
    const how = status.authoritative
      ? `decided by ${status.authoritative.checkId} (${status.authoritative.trust})`
      : `fraud score ${status.score}`;
    return { type: "Normal", reason: "Completed", message: `The detection completed: ${how}.` };
  }
  if (status.phase === "Failed") {
    return {
      type: "Warning",
      reason: "Failed",
      message: `The detection failed (${status.failure?.code}): ${status.failure?.message}`,
    };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------

const isTerminalPhase = (s: DetectionStatus) => s.phase === "Completed" || s.phase === "Failed";

/** Appends the Completed/Failed event when the transition ends the detection: after the step's own. */
function withTerminalEvent(before: DetectionStatus, t: Transition): Transition {
  if (isTerminalPhase(before) || !isTerminalPhase(t.status)) return t;
  const end = terminalEvent(t.status);
  return end ? { ...t, events: [...t.events, end] } : t;
}

function stepOf(status: DetectionStatus, step: StepName): StepStatus {
  const entry = status.steps?.find((s) => s.name === step);
  if (!entry) throw new Error(`The status has no ${step} step to update.`);
  return entry;
}

function completeIn(status: DetectionStatus, now: Date): void {
  status.phase = "Completed";
  status.completedAt = now.toISOString();
  status.failure = undefined;
  status.conditions = setCondition(
    status.conditions,
    {
      type: "Ready",
      status: "True",
      reason: status.authoritative ? "Authoritative" : "Completed",
      message: status.authoritative
        ? `Decided by ${status.authoritative.checkId} alone (${status.authoritative.trust}).`
        : `Verdict ready: fraud score ${status.score}.`,
    },
    { now, generation: status.observedGeneration },
  );
}

function failIn(status: DetectionStatus, code: FailureCode, now: Date): void {
  status.phase = "Failed";
  status.completedAt = now.toISOString();
  status.failure = failure(code);
  status.billable = false;
  status.score = null;
  status.verdict = null;
  status.conditions = setCondition(
    status.conditions,
    { type: "Ready", status: "False", reason: pascal(code), message: failure(code).message },
    { now, generation: status.observedGeneration },
  );
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
function pascal(code: string): string {
  return code.split("_").map(capitalize).join("");
}
