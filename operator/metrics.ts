import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** Prometheus metrics of the operator: reconciles, steps, outcomes, queue depth and scheduler slots. */
export interface OperatorMetrics {
  reconciled(outcome: "ok" | "error"): void;
  stepFinished(step: string, outcome: "succeeded" | "failed", startedAt: string | undefined, now: Date): void;
  detectionFinished(phase: string, failureCode: string | undefined): void;
  /** The upload sweeper deleted an upload nobody can use any more (operator/upload-sweeper.ts). */
  uploadDeleted(reason: string): void;
  /** A status write was refused by the resource size guard; the detection failed. */
  statusTooLarge(): void;
  /** A terminal detection was archived and its resource deleted. */
  detectionArchived(): void;
  /** Retention pruned an archived detection (operator/archive-pruner.ts). */
  archivedPruned(): void;
  /** A DetectionJob fanned out `n` new Detections (one per listed document). */
  jobDetectionsCreated(n: number): void;
  /** Writing a DetectionJob's report to its output bucket failed (the pass is retried). */
  jobReportWriteFailed(): void;
  /** One webhook attempt ended (operator/webhook-deliverer.ts), with its outcome and duration. */
  webhookAttempt(outcome: string, seconds: number): void;
  /** A webhook delivery finished: delivered, or failed with its schedule used up. */
  webhookFinished(state: "delivered" | "failed"): void;
  /** A webhook endpoint's circuit opened (the endpoint is paused). */
  webhookCircuitOpened(): void;
}

export function createOperatorMetrics(
  registry: Registry,
  sources: {
    queueDepth: () => number;
    scheduler: () => Promise<{ waiting: number; admitted: number; capacity: number }>;
    /** The DetectionJobs by phase (Queued counts jobs without a phase yet), read at scrape time. */
    jobPhases?: () => Promise<Record<string, number>>;
    /** Webhook deliveries waiting for an attempt or in flight. */
    webhookBacklog?: () => number;
  },
): OperatorMetrics {
  const webhookAttempts = new Counter({
    name: "docverify_webhook_attempts_total",
    help: "Webhook delivery attempts by outcome (delivered, http_error, redirect, refused, timeout, unreachable, endpoint_removed).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const webhookLatency = new Histogram({
    name: "docverify_webhook_attempt_duration_seconds",
    help: "Duration of webhook delivery attempts, by outcome.",
    labelNames: ["outcome"],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 15, 30],
    registers: [registry],
  });
  const webhookFinished = new Counter({
    name: "docverify_webhook_deliveries_total",
    help: "Webhook deliveries finished: delivered, or failed once their retry schedule was used up.",
    labelNames: ["state"],
    registers: [registry],
  });
  const webhookCircuits = new Counter({
    name: "docverify_webhook_circuit_opened_total",
    help: "Times a webhook endpoint was paused after failed attempts in a row.",
    registers: [registry],
  });
  const webhookBacklog = sources.webhookBacklog;
  new Gauge({
    name: "docverify_webhook_backlog",
    help: "Webhook deliveries waiting for an attempt or in flight.",
    registers: [registry],
    collect() {
      this.set(webhookBacklog?.() ?? 0);
    },
  });
  const reconciles = new Counter({
    name: "docverify_reconcile_total",
    help: "Detection reconcile passes by outcome.",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const steps = new Histogram({
    name: "docverify_step_duration_seconds",
    help: "Duration of step attempts by step and outcome.",
    labelNames: ["step", "outcome"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const finished = new Counter({
    name: "docverify_detections_finished_total",
    help: "Detections that reached a terminal phase, by phase and failure code.",
    labelNames: ["phase", "failure_code"],
    registers: [registry],
  });
  const uploadsDeleted = new Counter({
    name: "docverify_uploads_deleted_total",
    help: "Uploads the sweeper deleted, by reason (expired unused, stale claim, pruned detection, orphaned files).",
    labelNames: ["reason"],
    registers: [registry],
  });
  const tooLarge = new Counter({
    name: "docverify_status_too_large_total",
    help: "Detection status writes refused by the resource size guard (DOCVERIFY_MAX_RESOURCE_BYTES); each failed its detection.",
    registers: [registry],
  });
  const archived = new Counter({
    name: "docverify_detections_archived_total",
    help: "Terminal detections archived to the object store (their resources deleted).",
    registers: [registry],
  });
  const archivedPruned = new Counter({
    name: "docverify_archived_detections_pruned_total",
    help: "Archived detections whose verdict and files retention removed.",
    registers: [registry],
  });
  const jobDetections = new Counter({
    name: "docverify_job_detections_created_total",
    help: "Detections DetectionJobs fanned out (one per listed document).",
    registers: [registry],
  });
  const jobReportFailures = new Counter({
    name: "docverify_job_report_write_failures_total",
    help: "Failed writes of a DetectionJob's report (results.jsonl, summary.json) to its output bucket; each is retried.",
    registers: [registry],
  });
  if (sources.jobPhases) {
    const jobPhases = sources.jobPhases;
    const jobs = new Gauge({
      name: "docverify_detection_jobs",
      help: "DetectionJobs by phase (Queued, Running, Completed, Failed).",
      labelNames: ["phase"],
      registers: [registry],
      async collect() {
        const byPhase = await jobPhases();
        for (const phase of ["Queued", "Running", "Completed", "Failed"])
          jobs.set({ phase }, byPhase[phase] ?? 0);
      },
    });
  }
  new Gauge({
    name: "docverify_reconcile_queue_depth",
    help: "Detections waiting in the reconcile work queue.",
    registers: [registry],
    collect() {
      this.set(sources.queueDepth());
    },
  });
  const sched = new Gauge({
    name: "docverify_scheduler_slots",
    help: "Scheduler admission: waiting and admitted detections, and capacity.",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      const s = await sources.scheduler();
      sched.set({ state: "waiting" }, s.waiting);
      sched.set({ state: "admitted" }, s.admitted);
      sched.set({ state: "capacity" }, s.capacity);
    },
  });
  return {
    reconciled: (outcome) => reconciles.inc({ outcome }),
    stepFinished(step, outcome, startedAt, now) {
      const start = startedAt ? Date.parse(startedAt) : Number.NaN;
      if (Number.isFinite(start))
        steps.observe({ step, outcome }, Math.max(0, (now.getTime() - start) / 1000));
    },
    detectionFinished: (phase, failureCode) => finished.inc({ phase, failure_code: failureCode ?? "" }),
    uploadDeleted: (reason) => uploadsDeleted.inc({ reason }),
    statusTooLarge: () => tooLarge.inc(),
    detectionArchived: () => archived.inc(),
    archivedPruned: () => archivedPruned.inc(),
    jobDetectionsCreated: (n) => jobDetections.inc(n),
    jobReportWriteFailed: () => jobReportFailures.inc(),
    webhookAttempt(outcome, seconds) {
      webhookAttempts.inc({ outcome });
      webhookLatency.observe({ outcome }, seconds);
    },
    webhookFinished: (state) => webhookFinished.inc({ state }),
    webhookCircuitOpened: () => webhookCircuits.inc(),
  };
}
