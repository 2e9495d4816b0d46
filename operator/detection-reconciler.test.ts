import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { archiveDetection, isInArchive, readArchivedDetection } from "../core/archive.js";
import { API_GROUP_VERSION, CLEANUP_FINALIZER, LABELS } from "../core/resource.js";
import { type Detection, DETECTION_KIND, keys } from "../core/detection.js";
import { DETECTION_JOB_KIND, type DetectionJob } from "../core/detection-job.js";
import type { EventRecorder } from "../core/event-recorder.js";
import { newDetectionId } from "../core/ids.js";
import { systemClock } from "../core/ports.js";
import { MemoryResourceStore } from "../platform/local/memory-resource-store.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createLocalScheduler } from "../platform/local/scheduler.js";
import { createLocalWorkloadRunner } from "../platform/local/workload-runner.js";
import { createDetectionController } from "./detection-controller.js";
import { createDetectionReconciler, type ReconcilerSettings } from "./detection-reconciler.js";

const SCRIPT_PATH = path.join(import.meta.dirname, "testdata/scripted-step.ts");
const log = pino({ level: "silent" });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function world(
  script: Record<string, string>,
  settings: Partial<ReconcilerSettings> = {},
  capacity = 4,
  events?: EventRecorder,
  jobs?: MemoryResourceStore<DetectionJob>,
) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "docverify-reconciler-"));
  const store = new MemoryResourceStore<Detection>(DETECTION_KIND);
  const objects = createLocalObjectStore(path.join(dataDir, "objects"));
  await objects.ensureBucket("docverify");
  const scheduler = createLocalScheduler({ capacity });
  const runner = createLocalWorkloadRunner({
    command: process.execPath,
    args: ["--import", "tsx", SCRIPT_PATH],
    workers: 0,
    baseEnv: { PATH: process.env.PATH ?? "", DOCVERIFY_DATA_DIR: dataDir, SCRIPT: JSON.stringify(script) },
    log,
  });
  const reconciler = createDetectionReconciler({
    store,
    objects,
    bucket: "docverify",
    scheduler,
    runner,
    clock: systemClock,
    log,
    events,
    ...(jobs ? { jobs } : {}),
    settings: {
      stepTimeoutSeconds: 30,
      stepMaxAttempts: 2,
      detectionDeadlineSeconds: 120,
      retentionSeconds: 3600,
      ...settings,
    },
  });
  const controller = createDetectionController({
    store,
    scheduler,
    runner,
    reconciler,
    log,
    concurrency: 4,
    resyncMs: 1000,
  });
  await controller.start();
  cleanups.push(async () => {
    await controller.stop();
    await runner.close();
    await scheduler.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function create(opts: { sample?: boolean; batchId?: string } = {}): Promise<string> {
    const name = newDetectionId();
    await store.create({
      apiVersion: API_GROUP_VERSION,
      kind: DETECTION_KIND,
      metadata: { name, finalizers: [CLEANUP_FINALIZER], labels: { [LABELS.client]: "c1" } },
      spec: {
        source: { url: "https://example.com/a.pdf" },
        docType: "invoice",
        region: "US",
        submittedBy: "c1",
        sample: opts.sample ?? false,
        priority: opts.batchId ? "batch" : "interactive",
        ...(opts.batchId ? { batchId: opts.batchId } : {}),
      },
    });
    return name;
  }
  async function until(
    name: string,
    pred: (d: Detection | undefined) => boolean,
    ms = 60_000,
  ): Promise<Detection | undefined> {
    const end = Date.now() + ms;
    for (;;) {
      const d = await store.get(name);
      if (pred(d)) return d;
      if (Date.now() > end) throw new Error(`timed out; last: ${JSON.stringify(d?.status)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const terminal = (name: string, ms?: number) =>
    until(
      name,
      (d) => d?.status?.phase === "Completed" || d?.status?.phase === "Failed",
      ms,
    ) as Promise<Detection>;
  return { store, objects, scheduler, runner, create, until, terminal, dataDir };
}

/** Retries `check` until it stops throwing; after a minute (a hang, not a slow machine) its last error fails the test. */
async function eventually(check: () => Promise<void>): Promise<void> {
  const giveUp = Date.now() + 60_000;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > giveUp) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** An event recorder that hands every event to `onEvent`; `ended` resolves at the detection's Completed or Failed. */
function recordingEvents(onEvent: (...args: Parameters<EventRecorder["record"]>) => void) {
  let end: () => void = () => {};
  const ended = new Promise<void>((r) => {
    end = r;
  });
  const events: EventRecorder = {
    record: async (d, type, reason, message) => {
      onEvent(d, type, reason, message);
      if (reason === "Completed" || reason === "Failed") end();
    },
  };
  return { events, ended };
}

describe("Detection reconciler on real local adapters", () => {
  it("runs prepare → check → agent and completes with the verdict, then frees the slot and the workloads", async () => {
    const w = await world({});
    const name = await w.create();
    const d = await w.terminal(name);
    expect(d.status).toMatchObject({
      phase: "Completed",
      score: 12,
      billable: true,
      document: { filename: "doc.pdf" },
      discovered: ["metadata_present"],
      agent: { runId: "run-scripted" },
      verdict: { fraudScore: 12 },
    });
    expect(d.status?.steps?.map((s) => [s.name, s.state, s.attempt])).toEqual([
      ["prepare", "Succeeded", 1],
      ["check", "Succeeded", 1],
      ["agent", "Succeeded", 1],
    ]);
    expect(d.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "Completed",
    });
    expect(Date.parse(d.status!.verdictExpiresAt!)).toBeGreaterThan(Date.now());
    // The pass after the terminal write frees the slot and deletes the workloads: wait for it to happen.
    await eventually(async () => {
      expect(await w.scheduler.isAdmitted(name)).toBe(false);
      for (const s of d.status!.steps!) expect(await w.runner.get(s.workload)).toBeUndefined();
    });
  });

  it("a step's failure value fails the detection with its code and runs nothing after it", async () => {
    const w = await world({ prepare: "fail:source_unreachable" });
    const d = await w.terminal(await w.create());
    expect(d.status).toMatchObject({
      phase: "Failed",
      failure: { code: "source_unreachable" },
      billable: false,
      score: null,
      verdict: null,
    });
    expect(d.status?.steps?.map((s) => s.name)).toEqual(["prepare"]);
  });

  it("records an event per step and one at the end (Warning for failures)", async () => {
    const seen: string[] = [];
    const { events, ended } = recordingEvents((d, type, reason, message) =>
      seen.push(`${d.name} ${type} ${reason} ${message}`),
    );
    const w = await world({ check: "crash-first", agent: "crash" }, {}, 4, events);
    const name = await w.create();
    await w.terminal(name);
    await ended;
    const reasons = seen.map((l) => l.split(" ").slice(1, 3).join(" "));
    expect(seen.every((l) => l.startsWith(`${name} `))).toBe(true);
    expect(reasons).toEqual([
      "Normal StepStarted",
      "Normal StepSucceeded",
      "Normal StepStarted",
      "Warning StepFailed",
      "Normal StepStarted",
      "Normal StepSucceeded",
      "Normal StepStarted",
      "Warning StepFailed",
      "Normal StepStarted",
      "Warning StepFailed",
      "Warning Failed",
    ]);
    expect(seen.at(-1)).toMatch(/agent_failed/);
  });

  it("records Completed last, after the agent's StepSucceeded", async () => {
    const seen: string[] = [];
    const { events, ended } = recordingEvents((_d, _type, reason) => seen.push(reason));
    const w = await world({}, {}, 4, events);
    await w.terminal(await w.create());
    await ended;
    expect(seen).toEqual([
      "StepStarted",
      "StepSucceeded",
      "StepStarted",
      "StepSucceeded",
      "StepStarted",
      "StepSucceeded",
      "Completed",
    ]);
  });

  it("retries a crashed step and completes", async () => {
    const w = await world({ check: "crash-first" });
    const d = await w.terminal(await w.create());
    expect(d.status?.phase).toBe("Completed");
    expect(d.status?.steps?.find((s) => s.name === "check")).toMatchObject({
      state: "Succeeded",
      attempt: 2,
    });
  });

  it("a status over the size guard fails the detection clearly (StatusTooLarge) instead of retrying the write", async () => {
    const seen: string[] = [];
    const { events, ended } = recordingEvents((_d, type, reason, message) =>
      seen.push(`${type} ${reason} ${message}`),
    );
    const w = await world({ agent: "huge-reasoning" }, {}, 4, events);
    const name = await w.create();
    const d = await w.terminal(name);
    await ended;
    expect(d.status).toMatchObject({
      phase: "Failed",
      failure: { code: "internal_error" },
      verdict: null,
      checks: [{ checkId: "file.type", outcome: "pass", severity: 0, findingCount: 0 }],
    });
    expect(d.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      reason: "StatusTooLarge",
      message: expect.stringMatching(/over the 524288-byte limit of one resource/),
    });
    expect(seen.filter((l) => l.startsWith("Warning"))).toEqual([
      expect.stringMatching(/^Warning StatusTooLarge Detection det-\S+ would be \d+ bytes/),
      expect.stringMatching(/^Warning Failed .*internal_error/),
    ]);
    await eventually(async () => {
      expect(await w.scheduler.isAdmitted(name)).toBe(false);
      for (const s of d.status!.steps!) expect(await w.runner.get(s.workload)).toBeUndefined();
    });
  });

  it("fails with agent_failed and agent.error after the agent keeps crashing", async () => {
    const w = await world({ agent: "crash" });
    const d = await w.terminal(await w.create());
    expect(d.status).toMatchObject({ phase: "Failed", failure: { code: "agent_failed" } });
    expect(d.status?.agent?.error).toMatch(/agent step failed 2 times/);
  });

  it("treats a step that exits without a result as a failed attempt (check_failed at the end)", async () => {
    const w = await world({ check: "no-result" });
    const d = await w.terminal(await w.create());
    expect(d.status).toMatchObject({ phase: "Failed", failure: { code: "check_failed" } });
    expect(d.status?.steps?.find((s) => s.name === "check")?.message).toMatch(/without writing its result/);
  });

  it("kills a step past its time limit and retries it", async () => {
    const w = await world({ prepare: "hang" }, { stepTimeoutSeconds: 1 });
    const d = await w.terminal(await w.create());
    expect(d.status).toMatchObject({ phase: "Failed", failure: { code: "internal_error" } });
    expect(d.status?.steps?.[0]).toMatchObject({
      attempt: 2,
      message: expect.stringMatching(/DeadlineExceeded/),
    });
  });

  it("retries a check step out of time once, then fails document_too_complex; a crash until the attempts run out", async () => {
    // The limit holds for every step: prepare and agent (a Node process each) must start and finish within
    // it on a loaded CI machine, so it is not 1 s; the hanging check exceeds any.
    const hung = await world({ check: "hang" }, { stepTimeoutSeconds: 6, stepMaxAttempts: 3 });
    const a = await hung.terminal(await hung.create());
    expect(a.status).toMatchObject({ phase: "Failed", failure: { code: "document_too_complex" } });
    expect(a.status?.steps?.find((s) => s.name === "check")).toMatchObject({
      attempt: 2,
      message: expect.stringMatching(/^DeadlineExceeded/),
    });
    const crashing = await world({ check: "crash" }, { stepMaxAttempts: 3 });
    const b = await crashing.terminal(await crashing.create());
    expect(b.status).toMatchObject({ phase: "Failed", failure: { code: "check_failed" } });
    expect(b.status?.steps?.find((s) => s.name === "check")?.attempt).toBe(3);
  });

  it("never retries a step that reports a budget breach or an encrypted document", async () => {
    for (const code of ["document_too_complex", "document_encrypted"]) {
      const w = await world({ check: `fail:${code}` }, { stepMaxAttempts: 3 });
      const d = await w.terminal(await w.create());
      expect(d.status).toMatchObject({ phase: "Failed", failure: { code } });
      expect(d.status?.steps?.find((s) => s.name === "check")).toMatchObject({
        attempt: 1,
        state: "Succeeded",
      });
    }
  });

  it("fails a detection that runs past its deadline", async () => {
    const w = await world({ prepare: "hang" }, { detectionDeadlineSeconds: 2 });
    const d = await w.terminal(await w.create());
    expect(d.status).toMatchObject({ phase: "Failed", failure: { code: "deadline_exceeded" } });
  });

  it("skips the agent when a check is authoritative: score and verdict stay empty", async () => {
    const w = await world({ check: "authoritative" });
    const d = await w.terminal(await w.create());
    expect(d.status).toMatchObject({
      phase: "Completed",
      authoritative: { checkId: "signature.pdf", trust: "corroborated" },
    });
    expect(d.status?.verdict ?? null).toBeNull();
    expect(d.status?.score ?? null).toBeNull();
    expect(d.status?.steps?.map((s) => s.name)).toEqual(["prepare", "check"]);
  });

  it("sample runs are not billable", async () => {
    const w = await world({});
    const d = await w.terminal(await w.create({ sample: true }));
    expect(d.status).toMatchObject({ phase: "Completed", billable: false });
  });

  it("admits no more than the scheduler's capacity at once", async () => {
    const w = await world({}, {}, 1);
    let running = 0;
    let maxRunning = 0;
    const phases = new Map<string, string | undefined>();
    const h = w.store.watch(
      {},
      (e) => {
        phases.set(e.object.metadata.name, e.object.status?.phase);
        running = [...phases.values()].filter((p) => p === "Running").length;
        maxRunning = Math.max(maxRunning, running);
      },
      () => {},
    );
    const names = [await w.create(), await w.create(), await w.create()];
    for (const n of names) expect((await w.terminal(n)).status?.phase).toBe("Completed");
    h.stop();
    expect(maxRunning).toBe(1);
  });

  it("on delete removes the stored files and then the finalizer, so the resource goes", async () => {
    const w = await world({});
    const name = await w.create();
    await w.terminal(name);
    expect(await w.objects.stat("docverify", keys.document(name, "doc.pdf"))).toBeDefined();
    await w.store.delete(name);
    await w.until(name, (d) => d === undefined, 10_000);
    expect(await w.objects.stat("docverify", keys.document(name, "doc.pdf"))).toBeUndefined();
    expect(await w.objects.stat("docverify", keys.result(name, "agent"))).toBeUndefined();
  });

  it("after the retention period prunes the verdict and the files; status and score stay", async () => {
    const w = await world({}, { retentionSeconds: 1 });
    const name = await w.create();
    await w.terminal(name);
    const d = await w.until(name, (x) => x?.status?.prunedAt !== undefined, 15_000);
    expect(d?.status).toMatchObject({ phase: "Completed", score: 12, verdict: null });
    expect(await w.objects.stat("docverify", keys.document(name, "doc.pdf"))).toBeUndefined();
  });

  it("archives a finished detection after archiveAfterSeconds: record first, then the resource goes; it reads the same", async () => {
    const w = await world({}, { archiveAfterSeconds: 1 });
    const name = await w.create();
    const done = await w.terminal(name);
    await w.until(name, (d) => d === undefined, 20_000);
    const archived = await readArchivedDetection(w.objects, "docverify", "c1", name);
    expect(archived?.status).toEqual(done.status);
    expect(archived?.spec).toEqual(done.spec);
    // The files stay with the archived detection until DELETE or retention.
    expect(await w.objects.stat("docverify", keys.document(name, "doc.pdf"))).toBeDefined();
  });

  it("keeps a batch detection until its job has finished (the job counts from live detections)", async () => {
    const jobs = new MemoryResourceStore<DetectionJob>(DETECTION_JOB_KIND);
    const job = await jobs.create({
      apiVersion: API_GROUP_VERSION,
      kind: DETECTION_JOB_KIND,
      metadata: { name: "5b2a4e0e-1111-4c3a-9a55-0123456789ab" },
      spec: {
        connector: { type: "s3", bucketName: "in", prefixes: [""] },
        output: { type: "s3", bucketName: "out", prefix: "" },
        forceError: false,
        docType: "invoice",
        region: "US",
        submittedBy: "c1",
      },
    });
    const running = await jobs.updateStatus({ ...job, status: { phase: "Running" } });
    const w = await world({}, { archiveAfterSeconds: 1 }, 4, undefined, jobs);
    const name = await w.create({ batchId: job.metadata.name });
    const alone = await w.create();
    await w.terminal(name);
    await w.until(alone, (d) => d === undefined, 20_000);
    expect(await w.store.get(name)).toBeDefined();
    expect(await isInArchive(w.objects, "docverify", "c1", name)).toBe(false);
    await jobs.updateStatus({ ...running, status: { phase: "Completed" } });
    await w.until(name, (d) => d === undefined, 60_000);
    expect(await isInArchive(w.objects, "docverify", "c1", name)).toBe(true);
  });

  it("a DELETE of a detection whose archive record exists (a pass cut short) removes the record with the files", async () => {
    const w = await world({});
    const name = await w.create();
    const done = await w.terminal(name);
    await archiveDetection(w.objects, "docverify", done, { now: new Date() });
    expect(await isInArchive(w.objects, "docverify", "c1", name)).toBe(true);
    await w.store.delete(name);
    await w.until(name, (d) => d === undefined, 10_000);
    expect(await isInArchive(w.objects, "docverify", "c1", name)).toBe(false);
    expect(await w.objects.stat("docverify", keys.document(name, "doc.pdf"))).toBeUndefined();
  });
});
