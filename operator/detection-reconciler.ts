import type { ZodType } from "zod";
import { setCondition } from "../core/conditions.js";
import type { EventRecorder, EventType } from "../core/event-recorder.js";
import {
  AgentStepResult,
  CheckStepResult,
  type Detection,
  type DetectionStatus,
  keys,
  PrepareResult,
  type StepInput,
  type StepName,
  type StepStatus,
  workloadName,
} from "../core/detection.js";
import { removeDetectionFiles } from "../core/detection-files.js";
import { type FailureCode, failure } from "../core/failure-codes.js";
import { isTerminal } from "../core/phases.js";
import {
  type Clock,
  isStoreError,
  type ObjectStore,
  type ResourceStore,
  type Scheduler,
  type WorkloadRunner,
} from "../core/ports.js";
import { CLEANUP_FINALIZER } from "../core/resource.js";
import type { Logger } from "../core/step-context.js";
import type { ReconcileResult } from "./controller-loop.js";
import type { OperatorMetrics } from "./metrics.js";
import { crashFailureCode, nextStep, observeWorkload, retryDelayMs, truncate } from "./step-policy.js";

export interface ReconcilerSettings {
  stepTimeoutSeconds: number;
  stepMaxAttempts: number;
  detectionDeadlineSeconds: number;
  retentionSeconds: number;
}

export interface DetectionReconcilerDeps {
  store: ResourceStore<Detection>;
  objects: ObjectStore;
  bucket: string;
  scheduler: Scheduler;
  runner: WorkloadRunner;
  clock: Clock;
  log: Logger;
  settings: ReconcilerSettings;
  metrics?: OperatorMetrics;
  /** Events for people watching a detection (Kubernetes Events in the cluster, log lines standalone). */
  events?: EventRecorder;
}

/** Longest a terminal detection waits before its next look (timers cannot span 30 days). */
const MAX_WAIT_MS = 3_600_000;
/** Longest a detection may wait for admission before it fails with deadline_exceeded. */
const QUEUE_LIMIT_MS = 24 * 3_600_000;
/** Safety-net look at a running step even without a runner notification. */
const RUNNING_RECHECK_MS = 15_000;

const RESULT_SCHEMAS: Record<StepName, ZodType> = {
  prepare: PrepareResult,
  check: CheckStepResult,
  agent: AgentStepResult,
};

/**
 * The Detection reconciler: level-triggered and idempotent. Each pass reads the Detection and the world
 * (scheduler slot, the current step's workload, the step's stored result), takes one step and writes the
 * status once, with the resourceVersion it read (a Conflict just means "look again").
 * Every workload name is deterministic (`<detection>-<step>-<attempt>`), so a pass repeated after a crash
 * finds what the earlier one started instead of starting it twice.
 */
export function createDetectionReconciler(deps: DetectionReconcilerDeps) {
  const { store, objects, bucket, scheduler, runner, clock, settings } = deps;
  /** Best effort and not awaited: an event never slows or fails a pass. */
  const event = (d: Detection, type: EventType, reason: string, message: string) => {
    void deps.events
      ?.record({ name: d.metadata.name, uid: d.metadata.uid }, type, reason, message)
      .catch(() => {});
  };

  async function reconcile(name: string): Promise<ReconcileResult> {
    const d = await store.get(name);
    if (!d) {
      await scheduler.release(name);
      return {};
    }
    const log = deps.log.child({ detection: name });
    if (d.metadata.deletionTimestamp) return finalize(d, log);
    const status: DetectionStatus = structuredClone(d.status ?? {});
    const now = clock.now();

    if (isTerminal(status.phase)) return afterTerminal(d, status, now, log);

    // The deadline counts from admission, so time spent waiting behind other work (a large batch job, a
    // burst) does not eat a detection's budget; a detection never admitted fails after QUEUE_LIMIT_MS.
    const created = Date.parse(d.metadata.creationTimestamp ?? now.toISOString());
    const deadline = status.startedAt
      ? Date.parse(status.startedAt) + settings.detectionDeadlineSeconds * 1000
      : created + Math.max(QUEUE_LIMIT_MS, settings.detectionDeadlineSeconds * 1000);
    if (now.getTime() >= deadline) {
      log.warn(
        { deadlineSeconds: settings.detectionDeadlineSeconds, admitted: status.startedAt !== undefined },
        "detection ran past its deadline",
      );
      return write(d, fail(status, "deadline_exceeded", now), log);
    }

    // Admission: a slot from the scheduler before anything runs.
    if (!(await scheduler.isAdmitted(name))) {
      await scheduler.submit(name, d.spec.priority ?? "interactive");
      if (status.phase === undefined) {
        status.phase = "Queued";
        status.observedGeneration = d.metadata.generation;
        status.billable = !d.spec.sample;
        status.conditions = setCondition(
          status.conditions,
          { type: "Ready", status: "False", reason: "Queued", message: "Waiting for a free slot." },
          now,
        );
        return write(d, status, log);
      }
      // Admitted later: the scheduler's notification requeues us; the deadline bounds the wait.
      return { requeueAfterMs: Math.max(1000, Math.min(deadline - now.getTime(), MAX_WAIT_MS)) };
    }
    if (status.phase !== "Running") {
      status.phase = "Running";
      status.startedAt = status.startedAt ?? now.toISOString();
      status.observedGeneration = d.metadata.generation;
      status.billable = !d.spec.sample;
      log.info("admitted; running");
    }

    const step = nextStep(status.steps, status.authoritative !== undefined);
    if (!step) return write(d, complete(status, now), log); // defensive: everything already done
    const entry = status.steps?.find((s) => s.name === step);

    if (!entry) return startAttempt(d, status, step, 1, now, log);
    if (entry.state === "Failed") {
      const retryAt = Date.parse(entry.retryAt ?? now.toISOString());
      if (retryAt > now.getTime()) return { requeueAfterMs: retryAt - now.getTime() };
      await runner.delete(entry.workload);
      return startAttempt(d, status, step, entry.attempt + 1, now, log);
    }

    const observed = observeWorkload(await runner.get(entry.workload));
    if (observed.kind === "waiting") {
      if (entry.state !== observed.state) {
        entry.state = observed.state;
        return write(d, status, log, { requeueAfterMs: RUNNING_RECHECK_MS });
      }
      return { requeueAfterMs: RUNNING_RECHECK_MS };
    }
    if (observed.kind === "failed")
      return attemptFailed(d, status, entry, observed.reason, observed.message, now, log);

    // Succeeded: the step's full result is in the object store.
    const result = await readResult(name, step);
    if (!result.ok) return attemptFailed(d, status, entry, "ResultMissing", result.message, now, log);
    entry.state = "Succeeded";
    entry.finishedAt = now.toISOString();
    entry.message = undefined;
    deps.metrics?.stepFinished(step, "succeeded", entry.startedAt, now);
    const out = applyResult(status, step, result.value, now, log);
    const res = await write(d, out, log);
    if (res.written)
      event(d, "Normal", "StepSucceeded", `The ${step} step succeeded (attempt ${entry.attempt}).`);
    // Workload GC: a finished workload is deleted once its result is recorded (not before: a lost write
    // must find the workload again on the next pass).
    if (res.written) await runner.delete(entry.workload);
    return res;
  }

  async function startAttempt(
    d: Detection,
    status: DetectionStatus,
    step: StepName,
    attempt: number,
    now: Date,
    log: Logger,
  ): Promise<ReconcileResult> {
    const name = d.metadata.name;
    const workload = workloadName(name, step, attempt);
    const input: StepInput = {
      detection: name,
      uid: d.metadata.uid,
      step,
      attempt,
      spec: d.spec,
      document: status.document,
    };
    await runner.start({
      name: workload,
      step,
      owner: { name, uid: d.metadata.uid },
      env: { DOCVERIFY_STEP_INPUT: JSON.stringify(input), DOCVERIFY_DETECTION: name },
      timeoutSeconds: settings.stepTimeoutSeconds,
    });
    const entry: StepStatus = {
      name: step,
      workload,
      attempt,
      state: "Pending",
      startedAt: now.toISOString(),
    };
    status.steps = [...(status.steps ?? []).filter((s) => s.name !== step), entry];
    status.conditions = setCondition(
      status.conditions,
      {
        type: "Ready",
        status: "False",
        reason: `${capitalize(step)}Running`,
        message: attempt > 1 ? `Running the ${step} step (attempt ${attempt}).` : `Running the ${step} step.`,
      },
      now,
    );
    log.info({ step, attempt, workload }, "step started");
    const res = await write(d, status, log, { requeueAfterMs: RUNNING_RECHECK_MS });
    if (res.written)
      event(d, "Normal", "StepStarted", `Started the ${step} step (attempt ${attempt}) as ${workload}.`);
    return res;
  }

  async function attemptFailed(
    d: Detection,
    status: DetectionStatus,
    entry: StepStatus,
    reason: string,
    message: string,
    now: Date,
    log: Logger,
  ): Promise<ReconcileResult> {
    deps.metrics?.stepFinished(entry.name, "failed", entry.startedAt, now);
    entry.state = "Failed";
    entry.finishedAt = now.toISOString();
    entry.message = truncate(`${reason}: ${message}`, 500);
    if (entry.attempt >= settings.stepMaxAttempts) {
      log.error(
        { step: entry.name, attempt: entry.attempt, reason, message },
        "step failed; no attempts left",
      );
      const code = crashFailureCode(entry.name);
      const out = fail(status, code, now);
      if (entry.name === "agent") {
        out.agent = {
          ...out.agent,
          error: `The agent step failed ${entry.attempt} times; last: ${truncate(message, 300)}`,
        };
      }
      await runner.delete(entry.workload);
      return write(d, out, log, { requeue: true }, () =>
        event(d, "Warning", "StepFailed", `${entry.message} No attempts left.`),
      );
    }
    const delay = retryDelayMs(entry.attempt);
    entry.retryAt = new Date(now.getTime() + delay).toISOString();
    log.warn(
      { step: entry.name, attempt: entry.attempt, reason, message, retryInMs: delay },
      "step failed; will retry",
    );
    const res = await write(d, status, log, { requeueAfterMs: delay });
    if (res.written)
      event(d, "Warning", "StepFailed", `${entry.message} Retrying in ${Math.round(delay / 1000)} s.`);
    return res;
  }

  function applyResult(
    status: DetectionStatus,
    step: StepName,
    value: unknown,
    now: Date,
    log: Logger,
  ): DetectionStatus {
    switch (step) {
      case "prepare": {
        const r = value as PrepareResult;
        if (r.failure || !r.document) {
          log.info({ failure: r.failure?.code }, "prepare refused the document");
          return fail(status, r.failure?.code ?? "internal_error", now);
        }
        status.document = r.document;
        return status;
      }
      case "check": {
        const r = value as CheckStepResult;
        if (r.failure) return fail(status, r.failure.code, now);
        status.checks = r.checks;
        status.discovered = r.discovered;
        if (r.authoritative) {
          status.authoritative = r.authoritative;
          log.info(
            { checkId: r.authoritative.checkId, trust: r.authoritative.trust },
            "authoritative result; agent skipped",
          );
          return complete(status, now);
        }
        return status;
      }
      case "agent": {
        const r = value as AgentStepResult;
        status.agent = { runId: r.runId, ...(r.error ? { error: r.error } : {}) };
        if (r.failure || !r.verdict) return fail(status, r.failure?.code ?? "agent_failed", now);
        status.verdict = r.verdict;
        status.score = r.verdict.fraudScore;
        status.verdictExpiresAt = new Date(now.getTime() + settings.retentionSeconds * 1000).toISOString();
        return complete(status, now);
      }
    }
  }

  function complete(status: DetectionStatus, now: Date): DetectionStatus {
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
      now,
    );
    return status;
  }

  function fail(status: DetectionStatus, code: FailureCode, now: Date): DetectionStatus {
    status.phase = "Failed";
    status.completedAt = now.toISOString();
    status.failure = failure(code);
    status.billable = false;
    status.score = null;
    status.verdict = null;
    status.conditions = setCondition(
      status.conditions,
      { type: "Ready", status: "False", reason: pascal(code), message: failure(code).message },
      now,
    );
    return status;
  }

  async function afterTerminal(
    d: Detection,
    status: DetectionStatus,
    now: Date,
    log: Logger,
  ): Promise<ReconcileResult> {
    const name = d.metadata.name;
    await scheduler.release(name);
    for (const s of status.steps ?? []) await runner.delete(s.workload);
    if (status.prunedAt) return {};
    const completed = Date.parse(status.completedAt ?? d.metadata.creationTimestamp ?? now.toISOString());
    const pruneAt = completed + settings.retentionSeconds * 1000;
    if (now.getTime() < pruneAt) return { requeueAfterMs: Math.min(pruneAt - now.getTime(), MAX_WAIT_MS) };
    // Retention: the verdict (and so its reasoning) reads null; status, score and durable fields stay.
    const removed = await removeFiles(d);
    status.verdict = null;
    status.prunedAt = now.toISOString();
    log.info({ removedObjects: removed }, "retention period over; verdict and stored files pruned");
    const res = await write(d, status, log);
    if (res.written)
      event(
        d,
        "Normal",
        "Pruned",
        `Retention period over: the verdict and ${removed} stored file(s) were removed.`,
      );
    return res;
  }

  async function finalize(d: Detection, log: Logger): Promise<ReconcileResult> {
    const name = d.metadata.name;
    for (const s of d.status?.steps ?? []) await runner.delete(s.workload);
    await scheduler.release(name);
    if (!d.metadata.finalizers?.includes(CLEANUP_FINALIZER)) return {};
    const removed = await removeFiles(d);
    const next = structuredClone(d);
    next.metadata.finalizers = (d.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
    try {
      await store.update(next);
    } catch (err) {
      if (isStoreError(err, "Conflict")) return { requeue: true };
      if (isStoreError(err, "NotFound")) return {};
      throw err;
    }
    log.info({ removedObjects: removed }, "deleted; stored files removed");
    return {};
  }

  /** Deletes every file of the detection: document, step results, and the upload it was created from. */
  const removeFiles = (d: Detection) => removeDetectionFiles(objects, bucket, d);

  async function readResult(
    name: string,
    step: StepName,
  ): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
    let raw: Buffer;
    try {
      raw = await objects.get(bucket, keys.result(name, step));
    } catch (err) {
      if (err instanceof Error && err.name === "ObjectNotFoundError") {
        return { ok: false, message: `The ${step} step exited without writing its result.` };
      }
      throw err;
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString("utf8"));
    } catch {
      return { ok: false, message: `The ${step} step wrote a result that is not JSON.` };
    }
    const parsed = RESULT_SCHEMAS[step].safeParse(json);
    if (!parsed.success) {
      return {
        ok: false,
        message: `The ${step} step wrote a result of the wrong shape: ${parsed.error.issues[0]?.message}`,
      };
    }
    return { ok: true, value: parsed.data };
  }

  async function write(
    d: Detection,
    status: DetectionStatus,
    log: Logger,
    after: ReconcileResult = { requeue: true },
    /** Runs once the write landed, before a terminal event (keeps the events in order). */
    onWritten?: () => void,
  ): Promise<ReconcileResult & { written?: boolean }> {
    if (JSON.stringify(status) === JSON.stringify(d.status ?? {})) return after;
    const wasTerminal = isTerminal(d.status?.phase);
    try {
      await store.updateStatus({ ...d, status });
    } catch (err) {
      if (isStoreError(err, "Conflict")) return { requeue: true };
      if (isStoreError(err, "NotFound")) return {};
      throw err;
    }
    onWritten?.();
    if (!wasTerminal && isTerminal(status.phase)) {
      deps.metrics?.detectionFinished(status.phase!, status.failure?.code);
      log.info(
        { phase: status.phase, failureCode: status.failure?.code, score: status.score ?? null },
        status.phase === "Completed" ? "detection completed" : "detection failed",
      );
      await scheduler.release(d.metadata.name);
      if (status.phase === "Completed") {
        const how = status.authoritative
          ? `decided by ${status.authoritative.checkId} (${status.authoritative.trust})`
          : `fraud score ${status.score}`;
        event(d, "Normal", "Completed", `The detection completed: ${how}.`);
      } else {
        event(
          d,
          "Warning",
          "Failed",
          `The detection failed (${status.failure?.code}): ${status.failure?.message}`,
        );
      }
      return { requeue: true, written: true };
    }
    return { ...after, written: true };
  }

  return { reconcile };
}

export type DetectionReconciler = ReturnType<typeof createDetectionReconciler>;

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
function pascal(code: string): string {
  return code.split("_").map(capitalize).join("");
}
