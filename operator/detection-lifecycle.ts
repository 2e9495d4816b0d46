import { archiveDetection, isArchivable, removeArchivedDetection } from "../core/archive.js";
import type { Detection, DetectionStatus } from "../core/detection.js";
import { removeDetectionFiles } from "../core/detection-files.js";
import type { DetectionJob } from "../core/detection-job.js";
import { idempotencyHeldUntil } from "../core/idempotency.js";
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
import { readStored } from "../core/stored.js";
import { MEMORY_ENTRY, type TenantMemory } from "../core/tenant-memory.js";
import type { Logger } from "../core/step-context.js";
import type { ReconcileResult } from "./controller-loop.js";
import { pruned, type StatusEvent, type Transition } from "./detection-status.js";
import type { OperatorMetrics } from "./metrics.js";
import type { WebhookOutbox } from "./webhook-deliverer.js";
import { detectionEvent } from "../core/webhooks.js";

export interface LifecycleSettings {
  /** DOCVERIFY_RETENTION_SECONDS: how long after it finished a detection keeps its verdict and files. */
  retentionSeconds: number;
  /** A terminal detection is archived this long after it finished; 0 or absent keeps it a resource. */
  archiveAfterSeconds?: number;
}

export interface DetectionLifecycleDeps {
  store: ResourceStore<Detection>;
  /** The tenant memory (issue 23): remembers a finished detection, forgets a deleted or pruned one. */
  memory?: TenantMemory;
  objects: ObjectStore;
  bucket: string;
  scheduler: Scheduler;
  runner: WorkloadRunner;
  clock: Clock;
  settings: LifecycleSettings;
  metrics?: OperatorMetrics;
  /** Records an event about a detection (best effort, never awaited). */
  record: (d: Detection, e: StatusEvent) => void;
  /** The DetectionJobs: a batch detection is archived only once its job has finished. */
  jobs?: ResourceStore<DetectionJob>;
  /** The webhook outbox: a terminal status marked `webhooks.state: pending` has its event queued here. */
  webhooks?: WebhookOutbox;
}

/**
 * What a terminal detection needs next: a status to write (the retention transition), or the pass's
 * result (requeue at the next due time, or nothing).
 */
export type LifecycleStep = { write: Transition } | { result: ReconcileResult };

/** Longest a terminal detection waits before its next look (timers cannot span 30 days). */
const MAX_WAIT_MS = 3_600_000;
/** A batch detection due for the archive looks at its job again after this long while the job runs. */
const JOB_RECHECK_MS = 30_000;
/** A job seen running is not asked about again for this long (many detections share one job). */
const JOB_STATE_TTL_MS = 5_000;

/**
 * What happens to a detection after its steps: retention (the verdict and stored files go once the
 * retention period is over), the archive (the record goes to the object store and the resource is
 * deleted), and the cleanup finalizer of a deleted detection. The Detection reconciler calls it on
 * every pass of a terminal or deleted detection; each call decides from the detection as read and the
 * clock, so it is level-triggered and idempotent like the reconciler: a pass repeated after a crash at any
 * point finishes what the earlier one started.
 */
export function createDetectionLifecycle(deps: DetectionLifecycleDeps) {
  const { store, objects, bucket, scheduler, runner, settings } = deps;

  /**
   * A terminal detection: releases its slot and deletes its workloads, then applies retention when it is
   * due (a status to write), archives it when that is due, or says when to look again.
   */
  async function afterTerminal(
    d: Detection,
    status: DetectionStatus,
    now: Date,
    log: Logger,
  ): Promise<LifecycleStep> {
    const name = d.metadata.name;
    await scheduler.release(name);
    for (const s of status.steps ?? []) await runner.delete(s.workload);
    if (
      status.webhooks?.state === "pending" &&
      deps.webhooks &&
      (status.phase === "Completed" || status.phase === "Failed")
    ) {
      // The event the terminal write owed (operator/webhook-deliverer.ts): its deliveries are written
      // (idempotently: a pass repeated after a crash writes none twice), then the mark says so.
      const event = detectionEvent(
        { name, clientId: d.spec.submittedBy },
        {
          phase: status.phase,
          ...(status.completedAt ? { completedAt: status.completedAt } : {}),
          score: status.score ?? null,
          ...(status.failure ? { failureCode: status.failure.code } : {}),
        },
        deps.webhooks.publicUrl(),
        now,
      );
      const deliveries = await deps.webhooks.queue(event);
      log.info({ webhookId: event.id, type: event.type, deliveries }, "webhook event queued");
      return {
        write: {
          status: { ...status, webhooks: { state: "queued", queuedAt: now.toISOString(), deliveries } },
          events: [],
        },
      };
    }
    const completed = Date.parse(status.completedAt ?? d.metadata.creationTimestamp ?? now.toISOString());
    const pruneAt = completed + settings.retentionSeconds * 1000;
    if (!status.prunedAt && now.getTime() >= pruneAt) {
      // Retention: the verdict (and so its reasoning) reads null; status, score and durable fields stay.
      // The tenant memory forgets it first (its entry is found through the detection's id alone).
      await deps.memory?.forget(name);
      const removed = await removeFiles(d);
      log.info({ removedObjects: removed }, "retention period over; verdict and stored files pruned");
      return { write: pruned(status, now, removed) };
    }
    if (!status.prunedAt) await remember(name, log);
    const archiveAfterMs = (settings.archiveAfterSeconds ?? 0) * 1000;
    // A detection created with an Idempotency-Key stays a resource (where the key's label is looked up)
    // for the key's 24 hours (core/idempotency.ts).
    const archiveAt =
      archiveAfterMs > 0 && isArchivable(name)
        ? Math.max(completed + archiveAfterMs, idempotencyHeldUntil(d) ?? 0)
        : undefined;
    if (archiveAt !== undefined && now.getTime() >= archiveAt)
      return { result: await archive({ ...d, status }, now, log) };
    const next = Math.min(
      status.prunedAt ? Number.POSITIVE_INFINITY : pruneAt,
      archiveAt ?? Number.POSITIVE_INFINITY,
    );
    if (next === Number.POSITIVE_INFINITY) return { result: {} };
    return { result: { requeueAfterMs: Math.min(next - now.getTime(), MAX_WAIT_MS) } };
  }

  /** Whether the job `jobId` has finished (or is gone), asked at most every JOB_STATE_TTL_MS per job. */
  const jobStates = new Map<string, { finished: boolean; at: number }>();
  async function jobFinished(jobId: string, now: Date): Promise<boolean> {
    const known = jobStates.get(jobId);
    if (known && (known.finished || now.getTime() - known.at < JOB_STATE_TTL_MS)) return known.finished;
    const job = await deps.jobs?.get(jobId);
    const finished = !job || isTerminal(job.status?.phase);
    if (jobStates.size >= 10_000) jobStates.clear();
    jobStates.set(jobId, { finished, at: now.getTime() });
    return finished;
  }

  /**
   * Archives a terminal detection: writes its record to the object store (core/archive.ts), and only then
   * removes the cleanup finalizer (which would delete the files the record refers to) and deletes the
   * resource. A crash anywhere leaves the detection in the resource store, in the archive, or briefly in
   * both (readers take the resource first), never in neither; the next pass finishes the job. A batch
   * detection waits for its job to finish.
   */
  async function archive(d: Detection, now: Date, log: Logger): Promise<ReconcileResult> {
    const name = d.metadata.name;
    if (d.spec.batchId !== undefined && !(await jobFinished(d.spec.batchId, now))) {
      return { requeueAfterMs: JOB_RECHECK_MS };
    }
    const { key } = await archiveDetection(objects, bucket, d, { now });
    if (d.metadata.finalizers?.includes(CLEANUP_FINALIZER)) {
      // Changed meanwhile (a DELETE, say): look again; the record written is rewritten or removed then.
      const removed = await removeCleanupFinalizer(d);
      if (removed !== "removed") return removed === "conflict" ? { requeue: true } : {};
    }
    try {
      await store.delete(name);
    } catch (err) {
      if (!isStoreError(err, "NotFound")) throw err;
    }
    deps.metrics?.detectionArchived();
    deps.record(d, {
      type: "Normal",
      reason: "Archived",
      message: `Archived to the object store as ${key}.`,
    });
    log.info({ record: key }, "archived; resource deleted");
    return {};
  }

  /**
   * A deleted detection (deletionTimestamp set): its workloads and slot go, then, under the cleanup
   * finalizer, its stored files and any archived record, and last the finalizer itself.
   */
  async function finalize(d: Detection, log: Logger): Promise<ReconcileResult> {
    const name = d.metadata.name;
    for (const s of d.status?.steps ?? []) await runner.delete(s.workload);
    await scheduler.release(name);
    if (!d.metadata.finalizers?.includes(CLEANUP_FINALIZER)) return {};
    await deps.memory?.forget(name);
    const removed = await removeFiles(d);
    // An archive pass cut short (or one that lost a race with this DELETE) may have left the record.
    if (await removeArchivedDetection(objects, bucket, d.spec.submittedBy, name))
      log.info("deleted the archived record too");
    const gone = await removeCleanupFinalizer(d);
    if (gone === "conflict") return { requeue: true };
    if (gone === "removed") log.info({ removedObjects: removed }, "deleted; stored files removed");
    return {};
  }

  /**
   * Files the check step's memory entry (runs/<id>/memory.json) in the tenant memory once the detection is
   * terminal, so the memory holds finished detections only (docs/decisions.md, "Tenant memory"). Idempotent:
   * a detection already remembered, or without an entry (memory off, a failed check), is left alone.
   */
  async function remember(name: string, log: Logger): Promise<void> {
    const memory = deps.memory;
    if (!memory || (await memory.has(name))) return;
    const read = await readStored(objects, bucket, MEMORY_ENTRY, name);
    if (read.kind === "invalid")
      log.warn({ reason: read.reason }, "the tenant memory entry is unreadable; not remembered");
    if (read.kind !== "ok" || read.value.entry.detection !== name) return;
    await memory.remember(read.value.tenant, read.value.entry);
    log.info({ keys: read.value.entry.keys.length }, "remembered in the tenant memory");
  }

  /** Removes the cleanup finalizer with the version read: a Conflict means "look again". */
  async function removeCleanupFinalizer(d: Detection): Promise<"removed" | "conflict" | "gone"> {
    const next = structuredClone(d);
    next.metadata.finalizers = (d.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
    try {
      await store.update(next);
      return "removed";
    } catch (err) {
      if (isStoreError(err, "Conflict")) return "conflict";
      if (isStoreError(err, "NotFound")) return "gone";
      throw err;
    }
  }

  /** Deletes every file of the detection: document, step results, and the upload it was created from. */
  const removeFiles = (d: Detection) => removeDetectionFiles(objects, bucket, d);

  return { afterTerminal, finalize };
}

export type DetectionLifecycle = ReturnType<typeof createDetectionLifecycle>;
