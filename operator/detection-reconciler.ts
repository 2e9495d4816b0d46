import type { TenantMemory } from "../core/tenant-memory.js";
import {
  type Detection,
  type DetectionStatus,
  type StepInput,
  type StepName,
  type StepStatus,
  workloadName,
} from "../core/detection.js";
import type { Config } from "../core/config.js";
import type { DetectionJob } from "../core/detection-job.js";
import { DEFAULT_POLICY_REF, POLICY_SNAPSHOT, type PolicySource } from "../core/detection-policy.js";
import type { EventRecorder } from "../core/event-recorder.js";
import { isTerminal } from "../core/phases.js";
import {
  type Clock,
  isStoreError,
  type ObjectStore,
  type ResourceStore,
  type Scheduler,
  type WorkloadRunner,
} from "../core/ports.js";
import type { Logger } from "../core/step-context.js";
import { readStepResult, type StepResult } from "../core/step-results.js";
import { writeStored } from "../core/stored.js";
import type { ReconcileResult } from "./controller-loop.js";
import { createDetectionLifecycle } from "./detection-lifecycle.js";
import {
  attemptFailed,
  attemptStarted,
  attemptSucceeded,
  attemptWaiting,
  complete,
  deadlineOf,
  fail,
  observeGeneration,
  queued,
  running,
  type StatusEvent,
  statusTooLarge,
  upgradeLegacyStatus,
  type Transition,
} from "./detection-status.js";
import type { OperatorMetrics } from "./metrics.js";
import { nextStep, observeWorkload } from "./step-policy.js";
import type { WebhookOutbox } from "./webhook-deliverer.js";
import { eventTypeOf } from "../core/webhooks.js";

export interface ReconcilerSettings {
  stepTimeoutSeconds: number;
  stepMaxAttempts: number;
  detectionDeadlineSeconds: number;
  retentionSeconds: number;
  /**
   * A terminal detection is archived (core/archive.ts) this long after it finished, and its resource
   * deleted; 0 or absent keeps it a resource.
   */
  archiveAfterSeconds?: number;
}

/** The reconciler's settings as the service's configuration gives them (both runtimes, the benches). */
export const reconcilerSettingsOf = (config: Config): ReconcilerSettings => ({
  stepTimeoutSeconds: config.stepTimeoutSeconds,
  stepMaxAttempts: config.stepMaxAttempts,
  detectionDeadlineSeconds: config.detectionDeadlineSeconds,
  retentionSeconds: config.retentionSeconds,
  archiveAfterSeconds: config.archiveAfterSeconds,
});

export interface DetectionReconcilerDeps {
  store: ResourceStore<Detection>;
  /** The tenant memory: a finished detection is remembered, a deleted or pruned one forgotten (issue 23). */
  memory?: TenantMemory;
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
  /**
   * The DetectionJobs, so a batch detection is archived only once its job has finished: the job reconciler
   * counts and reports from the live Detections, and re-creates a missing one while it fans out.
   */
  jobs?: ResourceStore<DetectionJob>;
  /**
   * The tenants' policies (operator/policy-controller.ts): a detection naming one (`spec.policy`) is scored
   * under the version in force when it is admitted; absent, every detection gets the default rules.
   */
  policies?: PolicySource;
  /**
   * The webhook outbox (operator/webhook-deliverer.ts): the terminal status write carries the outbox mark
   * when the client has an endpoint for the event; the lifecycle then queues its deliveries.
   */
  webhooks?: WebhookOutbox;
}

/** Longest a detection waits before its next look (timers cannot span 30 days). */
const MAX_WAIT_MS = 3_600_000;
/** Longest a detection may wait for admission before it fails with deadline_exceeded. */
const QUEUE_LIMIT_MS = 24 * 3_600_000;
/** Safety-net look at a running step even without a runner notification. */
const RUNNING_RECHECK_MS = 15_000;

/**
 * The Detection reconciler: level-triggered and idempotent. Each pass reads the Detection and the world
 * (scheduler slot, the current step's workload, the step's stored result), takes one step and writes the
 * status once, with the resourceVersion it read (a Conflict just means "look again"), then records the
 * step's events in order. How the status changes is decided by the pure transitions of
 * detection-status.ts; this module does only the I/O around them. What follows the steps (retention, the
 * archive, the cleanup finalizer of a deleted detection) is detection-lifecycle.ts's, called from here.
 * Every workload name is deterministic (`<detection>-<step>-<attempt>`), so a pass repeated after a crash
 * finds what the earlier one started instead of starting it twice.
 */
export function createDetectionReconciler(deps: DetectionReconcilerDeps) {
  const { store, objects, bucket, scheduler, runner, clock, settings } = deps;
  /** Best effort and not awaited: an event never slows or fails a pass. */
  const record = (d: Detection, e: StatusEvent) => {
    void deps.events
      ?.record({ name: d.metadata.name, uid: d.metadata.uid }, e.type, e.reason, e.message)
      .catch(() => {});
  };
  const lifecycle = createDetectionLifecycle({ ...deps, record });

  async function reconcile(name: string): Promise<ReconcileResult> {
    const d = await store.get(name);
    if (!d) {
      await scheduler.release(name);
      return {};
    }
    const log = deps.log.child({ detection: name });
    if (d.metadata.deletionTimestamp) return lifecycle.finalize(d, log);
    let status: DetectionStatus = upgradeLegacyStatus(d.status ?? {});
    const now = clock.now();

    if (isTerminal(status.phase)) {
      // Retention, the archive and their schedule: operator/detection-lifecycle.ts.
      const next = await lifecycle.afterTerminal(d, status, now, log);
      return "write" in next ? write(d, next.write, log) : next.result;
    }
    status = observeGeneration(status, d);

    // The deadline counts from admission, so time spent waiting behind other work (a large batch job, a
    // burst) does not eat a detection's budget; a detection never admitted fails after QUEUE_LIMIT_MS.
    const deadline = deadlineOf(d, status, settings.detectionDeadlineSeconds, now, QUEUE_LIMIT_MS);
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
      if (status.phase === undefined) return write(d, queued(status, d, now), log);
      // Admitted later: the scheduler's notification requeues us; the deadline bounds the wait.
      return { requeueAfterMs: Math.max(1000, Math.min(deadline - now.getTime(), MAX_WAIT_MS)) };
    }
    if (status.phase !== "Running") {
      status = running(status, d, now);
      log.info("admitted; running");
    }
    if (status.policy === undefined) status = { ...status, policy: await resolvePolicy(d, log) };

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
        return write(d, attemptWaiting(status, step, observed.state), log, {
          requeueAfterMs: RUNNING_RECHECK_MS,
        });
      }
      return { requeueAfterMs: RUNNING_RECHECK_MS };
    }
    if (observed.kind === "failed")
      return onAttemptFailed(d, status, entry, observed.reason, observed.message, now, log);

    // Succeeded: the step's full result is in the object store.
    const result = await readResult(name, step);
    if (!result.ok) return onAttemptFailed(d, status, entry, "ResultMissing", result.message, now, log);
    deps.metrics?.stepFinished(step, "succeeded", entry.startedAt, now);
    const t = attemptSucceeded(status, result.value, now, settings);
    logTransition(log, t);
    const res = await write(d, t, log);
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
      ...(status.policy ? { policy: status.policy } : {}),
    };
    await runner.start({
      name: workload,
      step,
      owner: { name, uid: d.metadata.uid },
      env: { DOCVERIFY_STEP_INPUT: JSON.stringify(input), DOCVERIFY_DETECTION: name },
      timeoutSeconds: settings.stepTimeoutSeconds,
    });
    log.info({ step, attempt, workload }, "step started");
    return write(d, attemptStarted(status, step, attempt, workload, now), log, {
      requeueAfterMs: RUNNING_RECHECK_MS,
    });
  }

  async function onAttemptFailed(
    d: Detection,
    status: DetectionStatus,
    entry: StepStatus,
    reason: string,
    message: string,
    now: Date,
    log: Logger,
  ): Promise<ReconcileResult> {
    deps.metrics?.stepFinished(entry.name, "failed", entry.startedAt, now);
    const t = attemptFailed(status, { step: entry.name, reason, message }, now, settings);
    logTransition(log, t);
    if (t.retryInMs === undefined) {
      // No attempts left: the detection fails; its last workload goes now.
      await runner.delete(entry.workload);
      return write(d, t, log);
    }
    return write(d, t, log, { requeueAfterMs: t.retryInMs });
  }

  /**
   * The policy a detection is scored under, resolved once at admission (docs/decisions.md, "Tenant
   * policies"): the version in force of the policy its client names, kept as a snapshot beside the step
   * results (the agent step and a later re-score read that one, not whatever is in force then). A policy
   * that is unknown or has no valid version: the default rules, said in a warning and an event.
   */
  async function resolvePolicy(d: Detection, log: Logger) {
    const name = d.spec.policy;
    if (name === undefined || !deps.policies) return DEFAULT_POLICY_REF;
    const policy = await deps.policies.inForce(name);
    if (!policy) {
      log.warn(
        { policy: name },
        "the client's detection policy has no valid version in force; default rules",
      );
      void deps.events
        ?.record(
          { name: d.metadata.name, uid: d.metadata.uid },
          "Warning",
          "PolicyUnavailable",
          `Policy ${name} has no valid version in force; the default rules apply.`,
        )
        .catch(() => {});
      return DEFAULT_POLICY_REF;
    }
    await writeStored(objects, bucket, POLICY_SNAPSHOT, policy, d.metadata.name);
    log.info({ policy: name, version: policy.version }, "scored under the client's policy");
    return { name: policy.name, version: policy.version };
  }

  /** The step's result as the step wrote it (core/step-results.ts), or why it cannot be used. */
  async function readResult(
    name: string,
    step: StepName,
  ): Promise<{ ok: true; value: StepResult } | { ok: false; message: string }> {
    const read = await readStepResult(objects, bucket, name, step);
    if (read.kind === "ok") return { ok: true, value: read.value };
    if (read.kind === "missing")
      return { ok: false, message: `The ${step} step exited without writing its result.` };
    return {
      ok: false,
      message:
        read.problem === "not_json"
          ? `The ${step} step wrote a result that is not JSON.`
          : `The ${step} step wrote a result of the wrong shape: ${read.issue}`,
    };
  }

  /**
   * Writes the status with the version that was read (unchanged: no write) and, once it landed,
   * records the transition's events in order; a detection that just ended releases its slot.
   */
  async function write(
    d: Detection,
    next: Transition | DetectionStatus,
    log: Logger,
    after: ReconcileResult = { requeue: true },
    tooLarge = 0,
  ): Promise<ReconcileResult & { written?: boolean }> {
    let { status, events } = "events" in next ? next : { status: next, events: [] };
    const wasTerminal = isTerminal(d.status?.phase);
    if (
      !wasTerminal &&
      (status.phase === "Completed" || status.phase === "Failed") &&
      !status.webhooks &&
      deps.webhooks?.subscribed(d.spec.submittedBy, eventTypeOf("detection", status.phase))
    ) {
      // The outbox entry, in the write that makes the detection terminal (core/webhook-mark.ts).
      status = { ...status, webhooks: { state: "pending" } };
    }
    if (JSON.stringify(status) === JSON.stringify(d.status ?? {})) return after;
    try {
      await store.updateStatus({ ...d, status });
    } catch (err) {
      if (isStoreError(err, "Conflict")) return { requeue: true };
      if (isStoreError(err, "NotFound")) return {};
      if (isStoreError(err, "TooLarge") && tooLarge < 2) {
        // The size guard refused the status: fail the detection clearly instead of retrying a write
        // that can never succeed (the second fallback also drops the per-check summary).
        deps.metrics?.statusTooLarge();
        const t = statusTooLarge(d.status ?? {}, err.message, clock.now(), { keepChecks: tooLarge === 0 });
        logTransition(log, t);
        return write(d, t, log, after, tooLarge + 1);
      }
      throw err;
    }
    for (const e of events) record(d, e);
    if (!wasTerminal && isTerminal(status.phase)) {
      deps.metrics?.detectionFinished(status.phase!, status.failure?.code);
      log.info(
        { phase: status.phase, failureCode: status.failure?.code, score: status.score ?? null },
        status.phase === "Completed" ? "detection completed" : "detection failed",
      );
      await scheduler.release(d.metadata.name);
      return { requeue: true, written: true };
    }
    return { ...after, written: true };
  }

  return { reconcile };
}

export type DetectionReconciler = ReturnType<typeof createDetectionReconciler>;

function logTransition(log: Logger, t: Transition): void {
  if (t.log) log[t.log.level](t.log.fields, t.log.msg);
}
