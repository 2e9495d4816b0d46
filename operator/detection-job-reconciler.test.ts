import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { type Detection, DETECTION_KIND } from "../core/detection.js";
import type { DetectionDetailData } from "../core/detection-detail.js";
import {
  batchDetectionName,
  DETECTION_JOB_KIND,
  type DetectionJob,
  type DetectionJobSpec,
} from "../core/detection-job.js";
import { failure, FAILURE_MESSAGES } from "../core/failure-codes.js";
import type { Clock, ObjectStore } from "../core/ports.js";
import { API_GROUP_VERSION, CLEANUP_FINALIZER, LABELS } from "../core/resource.js";
import { MemoryResourceStore } from "../platform/local/memory-resource-store.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createDetectionJobController } from "./detection-job-controller.js";
import { createDetectionJobReconciler } from "./detection-job-reconciler.js";
import { webhookSettingsFrom } from "../core/webhook-settings.js";
import { endpointsOf, listDeliveries } from "../core/webhooks.js";
import { createWebhookSender } from "../platform/http/webhook-sender.js";
import { createWebhookDeliverer } from "./webhook-deliverer.js";
import { createOperatorMetrics } from "./metrics.js";
import type { JobSummary } from "./job-report.js";

const log = pino({ level: "silent" });
const JOB_ID = "2c5e1d7a-9b8f-4e3d-a1c2-0f9e8d7c6b5a";
const KEYS = [
  "loans/a.pdf",
  "loans/b.pdf",
  "loans/c.pdf",
  "loans/d.pdf",
  "scans/e.png",
  "scans/f.png",
  "x/g.pdf",
];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function world(opts: { maxInFlight?: number; keys?: string[] } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-jobs-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const objects = createLocalObjectStore(dir);
  await objects.ensureBucket("inbox");
  for (const k of opts.keys ?? KEYS) await objects.put("inbox", k, `document ${k}`);
  const revision = { value: 0 };
  const jobs = new MemoryResourceStore<DetectionJob>(DETECTION_JOB_KIND, { revision });
  const detections = new MemoryResourceStore<Detection>(DETECTION_KIND, { revision });
  let now = new Date("2026-11-02T09:00:00.000Z");
  const clock: Clock = { now: () => now };
  const registry = new Registry();
  const metrics = createOperatorMetrics(registry, {
    queueDepth: () => 0,
    scheduler: async () => ({ waiting: 0, admitted: 0, capacity: 1 }),
    jobPhases: async () => {
      const byPhase: Record<string, number> = {};
      for (const j of (await jobs.list()).items) {
        const phase = j.status?.phase ?? "Queued";
        byPhase[phase] = (byPhase[phase] ?? 0) + 1;
      }
      return byPhase;
    },
  });
  const make = () =>
    createDetectionJobReconciler({
      jobs,
      detections,
      objects,
      clock,
      log,
      settings: { maxInFlight: opts.maxInFlight ?? 3 },
      metrics,
    });
  return {
    registry,
    objects,
    jobs,
    detections,
    reconciler: make(),
    /** A fresh reconciler: what a restarted operator has (no open listings). */
    restarted: make,
    tick: (ms: number) => (now = new Date(now.getTime() + ms)),
  };
}

function jobSpec(over: Partial<DetectionJobSpec> = {}): DetectionJobSpec {
  return {
    connector: { type: "s3", bucketName: "inbox", prefixes: ["loans/", "scans/"] },
    output: { type: "s3", bucketName: "reports", prefix: "daily/" },
    forceError: false,
    docType: "loan_application",
    region: "GB",
    submittedBy: "acme-bank",
    ...over,
  };
}

async function createJob(jobs: MemoryResourceStore<DetectionJob>, spec = jobSpec()): Promise<DetectionJob> {
  return jobs.create({
    apiVersion: API_GROUP_VERSION,
    kind: DETECTION_JOB_KIND,
    metadata: { name: JOB_ID, labels: { [LABELS.client]: "acme-bank" } },
    spec,
  });
}

/** Plays the Detection reconciler: finishes every unfinished detection (the last one of `keysToFail` fails). */
async function finishAll(store: MemoryResourceStore<Detection>, failKeys: string[] = []): Promise<number> {
  const { items } = await store.list();
  let n = 0;
  for (const d of items) {
    if (d.status?.phase === "Completed" || d.status?.phase === "Failed") continue;
    const key = d.spec.source.object?.key ?? "";
    const status: Detection["status"] = failKeys.includes(key)
      ? { phase: "Failed", failure: failure("unsupported_content_type"), completedAt: "2026-11-02T09:05:00Z" }
      : {
          phase: "Completed",
          completedAt: "2026-11-02T09:05:00Z",
          score: 10 * (n + 1),
          verdict: {
            fraudScore: 10 * (n + 1),
            documentTypeMatch: true,
            actualDocType: "loan_application",
            reasoning: "No finding suggests tampering.",
            perCheck: [],
          },
        };
    await store.updateStatus({ ...d, status });
    n++;
  }
  return n;
}

async function jobDetections(store: MemoryResourceStore<Detection>): Promise<Detection[]> {
  return (await store.list({ labels: { [LABELS.batch]: JOB_ID } })).items;
}

async function readReport(objects: ObjectStore) {
  const lines = (await objects.get("reports", `daily/${JOB_ID}/results.jsonl`))
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as DetectionDetailData);
  const summary = JSON.parse(
    (await objects.get("reports", `daily/${JOB_ID}/summary.json`)).toString("utf8"),
  ) as JobSummary;
  return { lines, summary };
}

describe("force_error", () => {
  it("fails the job at once with forced_error and creates no detections and no report", async () => {
    const w = await world();
    await createJob(w.jobs, jobSpec({ forceError: true }));
    expect(await w.reconciler.reconcile(JOB_ID)).toEqual({});
    const job = await w.jobs.get(JOB_ID);
    expect(job?.status).toMatchObject({
      phase: "Failed",
      failure: { code: "forced_error", message: FAILURE_MESSAGES.forced_error },
      counts: { total: 0, queued: 0, running: 0, completed: 0, failed: 0 },
    });
    expect(job?.status?.completedAt).toBeDefined();
    expect(job?.status?.conditions).toEqual([
      expect.objectContaining({
        type: "Ready",
        reason: "ForcedError",
        observedGeneration: job?.metadata.generation,
      }),
    ]);
    expect(job?.metadata.generation).toBe(1);
    expect(await jobDetections(w.detections)).toEqual([]);
    expect(await w.objects.stat("reports", `daily/${JOB_ID}/results.jsonl`).catch(() => undefined)).toBe(
      undefined,
    );
    // A terminal job stays as it is.
    await w.reconciler.reconcile(JOB_ID);
    expect((await w.jobs.get(JOB_ID))?.metadata.resourceVersion).toBe(job?.metadata.resourceVersion);
  });
});

describe("fan-out", () => {
  it("creates one batch detection per object with the job's settings", async () => {
    const w = await world({ maxInFlight: 10 });
    const job = await createJob(w.jobs);
    await w.reconciler.reconcile(JOB_ID);
    const ds = await jobDetections(w.detections);
    expect(ds.map((d) => d.spec.source.object?.key).sort()).toEqual(KEYS.filter((k) => !k.startsWith("x/")));
    const a = ds.find((d) => d.spec.source.object?.key === "loans/a.pdf")!;
    expect(a.metadata.name).toBe(batchDetectionName(JOB_ID, job.metadata.creationTimestamp!, "loans/a.pdf"));
    expect(a.metadata.labels).toEqual({ [LABELS.client]: "acme-bank", [LABELS.batch]: JOB_ID });
    expect(a.metadata.finalizers).toEqual([CLEANUP_FINALIZER]);
    expect(a.spec).toEqual({
      source: { object: { bucket: "inbox", key: "loans/a.pdf" } },
      docType: "loan_application",
      region: "GB",
      submittedBy: "acme-bank",
      sample: false,
      batchId: JOB_ID,
      priority: "batch",
    });
    const status = (await w.jobs.get(JOB_ID))?.status;
    expect(status).toMatchObject({
      phase: "Running",
      listing: { done: true, continueAfter: "scans/f.png" },
      counts: { total: 6, queued: 6, running: 0, completed: 0, failed: 0 },
    });
  });

  it("keeps at most maxInFlight detections unfinished and records progress after each page", async () => {
    const w = await world({ maxInFlight: 2 });
    await createJob(w.jobs);
    await w.reconciler.reconcile(JOB_ID);
    expect((await jobDetections(w.detections)).length).toBe(2);
    expect((await w.jobs.get(JOB_ID))?.status?.listing).toEqual({
      done: false,
      continueAfter: "loans/b.pdf",
    });

    // Nothing finished: no room, nothing new.
    await w.reconciler.reconcile(JOB_ID);
    expect((await jobDetections(w.detections)).length).toBe(2);

    await finishAll(w.detections);
    await w.reconciler.reconcile(JOB_ID);
    expect((await jobDetections(w.detections)).length).toBe(4);
    expect((await w.jobs.get(JOB_ID))?.status).toMatchObject({
      listing: { done: false, continueAfter: "loans/d.pdf" },
      counts: { total: 4, queued: 2, completed: 2 },
    });
  });

  it("after a restart mid fan-out creates no duplicate and misses no object", async () => {
    const w = await world({ maxInFlight: 2 });
    const job = await createJob(w.jobs);
    await w.reconciler.reconcile(JOB_ID); // a, b recorded
    await finishAll(w.detections);
    // The crash: an earlier operator created c's detection but died before recording continueAfter.
    const c = batchDetectionName(JOB_ID, job.metadata.creationTimestamp!, "loans/c.pdf");
    const { items } = await w.detections.list();
    await w.detections.create({
      ...items[0]!,
      metadata: { name: c, labels: items[0]!.metadata.labels, finalizers: [CLEANUP_FINALIZER] },
      spec: { ...items[0]!.spec, source: { object: { bucket: "inbox", key: "loans/c.pdf" } } },
      status: undefined,
    });

    const again = w.restarted();
    for (let i = 0; i < 10; i++) {
      await again.reconcile(JOB_ID);
      await finishAll(w.detections);
    }
    await again.reconcile(JOB_ID);
    const ds = await jobDetections(w.detections);
    const keys = ds.map((d) => d.spec.source.object?.key).sort();
    expect(keys).toEqual([
      "loans/a.pdf",
      "loans/b.pdf",
      "loans/c.pdf",
      "loans/d.pdf",
      "scans/e.png",
      "scans/f.png",
    ]);
    expect(new Set(ds.map((d) => d.metadata.name)).size).toBe(6);
    expect((await w.jobs.get(JOB_ID))?.status?.phase).toBe("Completed");
  });

  it("restarts its listing when the recorded progress is not where its open listing stands", async () => {
    const w = await world({ maxInFlight: 2 });
    await createJob(w.jobs);
    await w.reconciler.reconcile(JOB_ID);
    await finishAll(w.detections);
    // Someone (an older replica) rewinds the recorded progress: the reconciler must not trust its cache.
    const job = (await w.jobs.get(JOB_ID))!;
    await w.jobs.updateStatus({ ...job, status: { ...job.status, listing: { done: false } } });
    await w.reconciler.reconcile(JOB_ID);
    const ds = await jobDetections(w.detections);
    expect(ds.map((d) => d.spec.source.object?.key).sort()).toEqual(["loans/a.pdf", "loans/b.pdf"]);
    expect((await w.jobs.get(JOB_ID))?.status?.listing?.continueAfter).toBe("loans/b.pdf");
  });
});

describe("completion and report", () => {
  it("writes results.jsonl and summary.json once every detection is terminal, then completes", async () => {
    const w = await world({ maxInFlight: 4 });
    await createJob(w.jobs);
    await w.reconciler.reconcile(JOB_ID); // a-d
    w.tick(60_000);
    await finishAll(w.detections, ["scans/f.png"]);
    await w.reconciler.reconcile(JOB_ID); // e, f; listing done
    expect((await w.jobs.get(JOB_ID))?.status).toMatchObject({
      phase: "Running",
      listing: { done: true },
      counts: { total: 6, queued: 2, completed: 4 },
    });
    expect(await w.objects.stat("reports", `daily/${JOB_ID}/results.jsonl`)).toBeUndefined();
    await finishAll(w.detections, ["scans/f.png"]);
    await w.reconciler.reconcile(JOB_ID);
    const job = (await w.jobs.get(JOB_ID))!;
    expect(job.status).toMatchObject({
      phase: "Completed",
      counts: { total: 6, queued: 0, running: 0, completed: 5, failed: 1 },
      report: {
        bucket: "reports",
        resultsKey: `daily/${JOB_ID}/results.jsonl`,
        summaryKey: `daily/${JOB_ID}/summary.json`,
      },
      completedAt: "2026-11-02T09:01:00.000Z",
    });
    expect(job.status?.failure).toBeUndefined();

    const { lines, summary } = await readReport(w.objects);
    const ds = await jobDetections(w.detections);
    expect(lines.map((l) => l.id).sort()).toEqual(ds.map((d) => d.metadata.name).sort());
    for (const line of lines) expect(line.batch_id).toBe(JOB_ID);
    const failed = lines.filter((l) => l.status === "FAILED");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ failure_code: "unsupported_content_type", score: null });
    // Lines follow the source keys, which the summary lists in the same order.
    expect(summary.objects.map((o) => o.key)).toEqual(KEYS.filter((k) => !k.startsWith("x/")));
    expect(summary.objects.map((o) => o.detection_id)).toEqual(lines.map((l) => l.id));
    const scores = lines.flatMap((l) => (l.score === null ? [] : [l.score]));
    expect(summary).toMatchObject({
      job_id: JOB_ID,
      status: "COMPLETED",
      input: { bucket: "inbox", prefixes: ["loans/", "scans/"] },
      counts: { total: 6, completed: 5, failed: 1 },
      failure_codes: { unsupported_content_type: 1 },
      scored: 5,
      mean_score: Math.round((scores.reduce((a, b) => a + b, 0) / scores.length) * 100) / 100,
      completed_at: "2026-11-02T09:01:00.000Z",
      started_at: "2026-11-02T09:00:00.000Z",
    });
  });

  it("completes a job over prefixes that hold nothing with an empty report", async () => {
    const w = await world();
    await createJob(
      w.jobs,
      jobSpec({ connector: { type: "s3", bucketName: "inbox", prefixes: ["nothing-here/"] } }),
    );
    await w.reconciler.reconcile(JOB_ID);
    expect((await w.jobs.get(JOB_ID))?.status).toMatchObject({
      phase: "Completed",
      counts: { total: 0 },
    });
    const { lines, summary } = await readReport(w.objects);
    expect(lines).toEqual([]);
    expect(summary).toMatchObject({ counts: { total: 0, completed: 0, failed: 0 }, mean_score: null });
  });

  it("leaves detections of a deleted job alone and stops reconciling it", async () => {
    const w = await world({ maxInFlight: 10 });
    await createJob(w.jobs);
    await w.reconciler.reconcile(JOB_ID);
    await w.jobs.delete(JOB_ID);
    expect(await w.reconciler.reconcile(JOB_ID)).toEqual({});
    expect((await jobDetections(w.detections)).length).toBe(6);
  });
});

describe("controller", () => {
  it("drives a job to Completed as its detections finish", async () => {
    const w = await world({ maxInFlight: 2 });
    const controller = createDetectionJobController({
      jobs: w.jobs,
      detections: w.detections,
      reconciler: w.reconciler,
      log,
      resyncMs: 60_000,
      detectionEventDelayMs: 5,
    });
    await controller.start();
    cleanups.push(() => controller.stop());
    // Plays the Detection reconciler: finishes each detection shortly after it appears.
    const finisher = w.detections.watch(
      {},
      (ev) => {
        if (ev.type === "ADDED") setTimeout(() => void finishAll(w.detections), 5);
      },
      () => undefined,
    );
    cleanups.push(async () => finisher.stop());
    await createJob(w.jobs);
    const until = Date.now() + 20_000;
    while ((await w.jobs.get(JOB_ID))?.status?.phase !== "Completed") {
      if (Date.now() > until)
        throw new Error(`job stuck: ${JSON.stringify((await w.jobs.get(JOB_ID))?.status)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await w.jobs.get(JOB_ID))?.status?.counts).toEqual({
      total: 6,
      queued: 0,
      running: 0,
      completed: 6,
      failed: 0,
    });
    expect((await readReport(w.objects)).lines).toHaveLength(6);
  });
});

describe("DetectionJob metrics", () => {
  const metric = async (registry: Registry, line: RegExp) =>
    (await registry.metrics()).split("\n").find((l) => line.test(l));

  it("count the documents fanned out, the jobs by phase, and failed report writes", async () => {
    const w = await world({ maxInFlight: 10 });
    await createJob(w.jobs, jobSpec({ output: { type: "s3", bucketName: "Not A Bucket!", prefix: "" } }));
    await w.reconciler.reconcile(JOB_ID);
    expect(await metric(w.registry, /^docverify_job_detections_created_total /)).toBe(
      "docverify_job_detections_created_total 6",
    );
    expect(await metric(w.registry, /^docverify_detection_jobs\{phase="Running"\}/)).toBe(
      'docverify_detection_jobs{phase="Running"} 1',
    );
    // A second pass creates nothing new (AlreadyExists is not counted).
    await w.restarted().reconcile(JOB_ID);
    expect(await metric(w.registry, /^docverify_job_detections_created_total /)).toMatch(/ 6$/);
    await finishAll(w.detections);
    await expect(w.reconciler.reconcile(JOB_ID)).rejects.toThrow(/Bucket name/);
    expect(await metric(w.registry, /^docverify_job_report_write_failures_total /)).toBe(
      "docverify_job_report_write_failures_total 1",
    );
    expect((await w.jobs.get(JOB_ID))?.status?.phase).toBe("Running");
  });
});

describe("webhooks", () => {
  it("the write that fails a job carries the outbox mark; the next pass queues job.failed once", async () => {
    const w = await world();
    const secret = `whsec_${"B".repeat(32)}`;
    const hooks = [{ url: "https://hooks.example.com/jobs", events: ["job.failed" as const], secret }];
    const deliverer = createWebhookDeliverer({
      objects: w.objects,
      bucket: "inbox",
      sender: createWebhookSender({
        allowPrivate: false,
        allowedPorts: [[443, 443]],
        timeoutMs: 1000,
        maxResponseBytes: 1024,
      }),
      endpoints: (id) => endpointsOf(id, hooks),
      settings: webhookSettingsFrom({}),
      clock: { now: () => new Date("2026-11-02T09:00:00.000Z") },
      log,
    });
    const reconciler = createDetectionJobReconciler({
      jobs: w.jobs,
      detections: w.detections,
      objects: w.objects,
      clock: { now: () => new Date("2026-11-02T09:00:00.000Z") },
      log,
      settings: { maxInFlight: 3 },
      webhooks: deliverer.outbox,
    });
    const job = await createJob(w.jobs, jobSpec({ forceError: true }));
    expect(await reconciler.reconcile(JOB_ID)).toEqual({ requeue: true });
    expect((await w.jobs.get(JOB_ID))?.status).toMatchObject({
      phase: "Failed",
      webhooks: { state: "pending" },
    });
    await reconciler.reconcile(JOB_ID);
    expect((await w.jobs.get(JOB_ID))?.status?.webhooks).toMatchObject({ state: "queued", deliveries: 1 });
    expect(await reconciler.reconcile(JOB_ID)).toEqual({});
    const [ep] = endpointsOf(job.spec.submittedBy, hooks);
    const page = await listDeliveries(w.objects, "inbox", job.spec.submittedBy, ep!.id, { limit: 10 });
    expect(page.items).toHaveLength(1);
    expect(JSON.parse(page.items[0]!.body)).toMatchObject({
      type: "job.failed",
      data: { id: JOB_ID, status: "FAILED", failure_code: "forced_error", url: `/jobs/${JOB_ID}` },
    });
  });
});
