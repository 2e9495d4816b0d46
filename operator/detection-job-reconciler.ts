import { createHash } from "node:crypto";
import { setCondition } from "../core/conditions.js";
import { type Detection, DETECTION_KIND } from "../core/detection.js";
import {
  batchDetectionName,
  type DetectionJob,
  type DetectionJobStatus,
  type JobCounts,
} from "../core/detection-job.js";
import { failure } from "../core/failure-codes.js";
import { isTerminal } from "../core/phases.js";
import {
  type Clock,
  isStoreError,
  type ObjectInfo,
  type ObjectStore,
  type ResourceStore,
} from "../core/ports.js";
import { API_GROUP_VERSION, CLEANUP_FINALIZER, LABELS, labelValue } from "../core/resource.js";
import type { Logger } from "../core/step-context.js";
import type { ReconcileResult } from "./controller-loop.js";
import { objectsAfter } from "./job-listing.js";
import { writeJobReport } from "./job-report.js";
import type { WebhookOutbox } from "./webhook-deliverer.js";
import { eventTypeOf, jobEvent } from "../core/webhooks.js";
import type { OperatorMetrics } from "./metrics.js";

export interface JobReconcilerSettings {
  /** Most detections of one job that may be unfinished at once (bounds what one job puts in the queue). */
  maxInFlight: number;
}

export interface DetectionJobReconcilerDeps {
  jobs: ResourceStore<DetectionJob>;
  detections: ResourceStore<Detection>;
  objects: ObjectStore;
  clock: Clock;
  log: Logger;
  settings: JobReconcilerSettings;
  metrics?: Pick<OperatorMetrics, "jobDetectionsCreated" | "jobReportWriteFailed">;
  /** The webhook outbox: job.completed / job.failed, marked in the terminal write, queued on the next pass. */
  webhooks?: WebhookOutbox;
}

/** Safety-net look at a running job even without a detection event. */
const RUNNING_RECHECK_MS = 30_000;

const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");
/** Label values as the API computes them (a value that is no valid label value is hashed). */
export const batchLabel = (jobId: string) => labelValue(jobId, sha256Hex);
const clientLabel = (clientId: string) => labelValue(clientId, sha256Hex);

/** Counts of a job's detections by API status (pure). */
export function countDetections(detections: readonly Detection[]): JobCounts {
  const counts: JobCounts = { total: detections.length, queued: 0, running: 0, completed: 0, failed: 0 };
  for (const d of detections) {
    const phase = d.status?.phase ?? "Queued";
    if (phase === "Queued") counts.queued++;
    else if (phase === "Running") counts.running++;
    else if (phase === "Completed") counts.completed++;
    else counts.failed++;
  }
  return counts;
}

/**
 * The DetectionJob reconciler, level-triggered like the Detection one. A pass reads the job and its
 * detections (label `docverify.io/batch`), then:
 * - `forceError` → Failed `forced_error` at once, no detections;
 * - while the listing is not done and fewer than `maxInFlight` of its detections are unfinished, fans out
 *   the next objects (in key order, after `status.listing.continueAfter`) as Detections with deterministic
 *   names (AlreadyExists = created by an earlier pass that crashed before recording it), then records the
 *   last key; a restart therefore neither misses nor duplicates an object;
 * - once the listing is done and every detection is terminal, writes the report to the output bucket and
 *   completes.
 * Counts are rebuilt from the detections on every pass; the status is written once per pass.
 * Deleting a job leaves its detections (ordinary detections with batch_id; no ownerReference) and report.
 */
export function createDetectionJobReconciler(deps: DetectionJobReconcilerDeps) {
  const { jobs, detections, objects, clock, settings } = deps;
  /**
   * Open listings by job, so a job over a large bucket is listed once rather than once per page. Only a
   * cache: used when its position equals the recorded `continueAfter`, otherwise the listing restarts.
   */
  const listings = new Map<string, { position: string | undefined; it: AsyncIterator<ObjectInfo> }>();

  async function reconcile(name: string): Promise<ReconcileResult> {
    const job = await jobs.get(name);
    if (
      job &&
      !job.metadata.deletionTimestamp &&
      job.status?.webhooks?.state === "pending" &&
      deps.webhooks &&
      (job.status.phase === "Completed" || job.status.phase === "Failed")
    ) {
      const now = clock.now();
      const event = jobEvent(
        { name, clientId: job.spec.submittedBy },
        {
          phase: job.status.phase,
          ...(job.status.completedAt ? { completedAt: job.status.completedAt } : {}),
          ...(job.status.failure ? { failureCode: job.status.failure.code } : {}),
        },
        deps.webhooks.publicUrl(),
        now,
      );
      const deliveries = await deps.webhooks.queue(event);
      deps.log.info({ job: name, webhookId: event.id, type: event.type, deliveries }, "webhook event queued");
      return write(job, {
        ...job.status,
        webhooks: { state: "queued", queuedAt: now.toISOString(), deliveries },
      });
    }
    if (!job || job.metadata.deletionTimestamp || isTerminal(job.status?.phase)) {
      listings.delete(name);
      return {};
    }
    const log = deps.log.child({ job: name });
    const now = clock.now();
    const status: DetectionJobStatus = structuredClone(job.status ?? {});
    status.observedGeneration = job.metadata.generation;

    if (job.spec.forceError) {
      log.info("force_error set; failing the job without creating detections");
      status.phase = "Failed";
      status.failure = failure("forced_error");
      status.startedAt ??= now.toISOString();
      status.completedAt = now.toISOString();
      status.counts = countDetections([]);
      status.conditions = setCondition(
        status.conditions,
        { type: "Ready", status: "False", reason: "ForcedError", message: failure("forced_error").message },
        { now, generation: job.metadata.generation },
      );
      return write(job, status);
    }

    if (status.phase !== "Running") {
      status.phase = "Running";
      status.startedAt ??= now.toISOString();
      log.info(
        { bucket: job.spec.connector.bucketName, prefixes: job.spec.connector.prefixes },
        "job started",
      );
    }
    status.listing ??= { done: false };

    const mine = await listJobDetections(name);
    let pending = mine.filter((d) => !isTerminal(d.status?.phase)).length;
    if (!status.listing.done) {
      const room = settings.maxInFlight - pending;
      if (room > 0) {
        const page = await fanOut(job, status.listing.continueAfter, room, log);
        const known = new Set(mine.map((d) => d.metadata.name));
        for (const d of page.created) {
          if (known.has(d.metadata.name)) continue;
          mine.push(d);
          if (!isTerminal(d.status?.phase)) pending++;
        }
        if (page.lastKey !== undefined) status.listing.continueAfter = page.lastKey;
        if (page.exhausted) {
          status.listing.done = true;
          listings.delete(name);
          log.info({ total: mine.length }, "listing done; every object has its detection");
        }
      }
    }
    status.counts = countDetections(mine);

    if (status.listing.done && pending === 0) {
      let report: Awaited<ReturnType<typeof writeJobReport>>;
      try {
        report = await writeJobReport(objects, { ...job, status }, mine, now);
      } catch (err) {
        deps.metrics?.jobReportWriteFailed();
        log.error({ err, bucket: job.spec.output.bucketName }, "writing the job's report failed; will retry");
        throw err;
      }
      status.report = report;
      status.phase = "Completed";
      status.completedAt = now.toISOString();
      status.conditions = setCondition(
        status.conditions,
        {
          type: "Ready",
          status: "True",
          reason: "ReportWritten",
          message: `All ${mine.length} detections finished (${status.counts.completed} completed, ${status.counts.failed} failed); the report is in bucket ${report.bucket} at ${report.resultsKey}.`,
        },
        { now, generation: job.metadata.generation },
      );
      log.info({ counts: status.counts, report }, "job completed");
      return write(job, status);
    }

    status.conditions = setCondition(
      status.conditions,
      status.listing.done
        ? {
            type: "Ready",
            status: "False",
            reason: "DetectionsRunning",
            message: `Waiting for ${pending} of ${mine.length} detections to finish.`,
          }
        : {
            type: "Ready",
            status: "False",
            reason: "FanningOut",
            message: `Created ${mine.length} detections so far; at most ${settings.maxInFlight} run at once.`,
          },
      { now, generation: job.metadata.generation },
    );
    // Detection events requeue the job; the recheck is a safety net.
    return write(job, status, { requeueAfterMs: RUNNING_RECHECK_MS });
  }

  async function listJobDetections(jobId: string): Promise<Detection[]> {
    const { items } = await detections.list({ labels: { [LABELS.batch]: batchLabel(jobId) } });
    return items.filter((d) => d.spec.batchId === jobId);
  }

  /** Creates detections for up to `room` objects after `after`; says where it stopped. */
  async function fanOut(
    job: DetectionJob,
    after: string | undefined,
    room: number,
    log: Logger,
  ): Promise<{ created: Detection[]; lastKey?: string; exhausted: boolean }> {
    const jobId = job.metadata.name;
    const cached = listings.get(jobId);
    const it =
      cached && cached.position === after
        ? cached.it
        : objectsAfter(objects, job.spec.connector.bucketName, job.spec.connector.prefixes, after)[
            Symbol.asyncIterator
          ]();
    const created: Detection[] = [];
    let lastKey: string | undefined;
    let exhausted = false;
    try {
      while (created.length < room) {
        const next = await it.next();
        if (next.done) {
          exhausted = true;
          break;
        }
        created.push(await createDetection(job, next.value.key));
        lastKey = next.value.key;
      }
    } catch (err) {
      listings.delete(jobId);
      throw err;
    }
    if (!exhausted) listings.set(jobId, { position: lastKey ?? after, it });
    if (created.length) log.info({ created: created.length, lastKey }, "fanned out detections");
    return { created, ...(lastKey !== undefined ? { lastKey } : {}), exhausted };
  }

  /** The detection of one object; an existing one (an earlier pass made it) is read back. */
  async function createDetection(job: DetectionJob, key: string): Promise<Detection> {
    const jobId = job.metadata.name;
    const name = batchDetectionName(jobId, job.metadata.creationTimestamp ?? new Date(0).toISOString(), key);
    const detection: Detection = {
      apiVersion: API_GROUP_VERSION,
      kind: DETECTION_KIND,
      metadata: {
        name,
        labels: {
          [LABELS.client]: job.metadata.labels?.[LABELS.client] ?? clientLabel(job.spec.submittedBy),
          [LABELS.batch]: batchLabel(jobId),
        },
        finalizers: [CLEANUP_FINALIZER],
      },
      spec: {
        source: { object: { bucket: job.spec.connector.bucketName, key } },
        docType: job.spec.docType,
        region: job.spec.region,
        submittedBy: job.spec.submittedBy,
        ...(job.spec.tenant !== undefined ? { tenant: job.spec.tenant } : {}),
        sample: false,
        batchId: jobId,
        priority: "batch",
        ...(job.spec.policy ? { policy: job.spec.policy } : {}),
      },
    };
    try {
      const created = await detections.create(detection);
      deps.metrics?.jobDetectionsCreated(1);
      return created;
    } catch (err) {
      if (!isStoreError(err, "AlreadyExists")) throw err;
      const existing = await detections.get(name);
      if (!existing) throw err;
      return existing;
    }
  }

  async function write(
    job: DetectionJob,
    status: DetectionJobStatus,
    after: ReconcileResult = {},
  ): Promise<ReconcileResult> {
    if (
      !isTerminal(job.status?.phase) &&
      (status.phase === "Completed" || status.phase === "Failed") &&
      !status.webhooks &&
      deps.webhooks?.subscribed(job.spec.submittedBy, eventTypeOf("job", status.phase))
    ) {
      // The outbox entry, in the write that makes the job terminal (core/webhook-mark.ts); the next pass
      // queues its deliveries.
      status = { ...status, webhooks: { state: "pending" } };
      after = { requeue: true };
    }
    if (JSON.stringify(status) === JSON.stringify(job.status ?? {})) return after;
    try {
      await jobs.updateStatus({ ...job, status });
    } catch (err) {
      if (isStoreError(err, "Conflict")) return { requeue: true };
      if (isStoreError(err, "NotFound")) return {};
      throw err;
    }
    return after;
  }

  return { reconcile };
}

export type DetectionJobReconciler = ReturnType<typeof createDetectionJobReconciler>;
