/**
 * "Nothing kept past its time", on both object-store adapters (the standalone directory store and the S3
 * adapter on a real S3-compatible server): a document submitted through the API and processed by the real
 * steps leaves nothing of itself in the object store after each way its time ends — DELETE, the retention
 * period, an upload that expires unused, and a batch job's fan-out (whose input object is the client's and
 * stays in the client's bucket). Wires the real API, the reconciler, the upload sweeper and the steps
 * in-process (a composition root, hence in bin/), with one manual clock so no test waits for time to pass.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createHarness, type Harness, manualClock } from "../api/testdata/app-kit.js";
import { loadConfig } from "../core/config.js";
import { type Detection, keys, StepInput, type StepName } from "../core/detection.js";
import { batchDetectionName, DETECTION_JOB_KIND, type DetectionJob } from "../core/detection-job.js";
import type { ObjectStore, WorkloadRunner, WorkloadStatus } from "../core/ports.js";
import { makeDocument } from "../fixtures/documents.js";
import { createDetectionJobReconciler } from "../operator/detection-job-reconciler.js";
import { createDetectionReconciler } from "../operator/detection-reconciler.js";
import { createUploadSweeper } from "../operator/upload-sweeper.js";
import { MemoryResourceStore } from "../platform/local/memory-resource-store.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createLocalScheduler } from "../platform/local/scheduler.js";
import { createS3ObjectStore } from "../platform/s3/object-store.js";
import {
  type S3TestServer,
  s3TestServerAvailable,
  startS3TestServer,
} from "../platform/s3/testdata/s3-test-server.js";
import { loadStep } from "./step-runtime.js";

const log = pino({ level: "silent" });
const RETENTION_SECONDS = 3600;
const UPLOAD_TTL_SECONDS = 600;
const s3 = s3TestServerAvailable();

/** A workload runner that runs the real steps in this process, on the object store under test. */
function inProcessRunner(objects: ObjectStore, bucket: string): WorkloadRunner & { idle(): Promise<void> } {
  const workloads = new Map<string, WorkloadStatus>();
  const running = new Set<Promise<void>>();
  const config = { ...loadConfig({}), bucket, maxDocumentBytes: 5 * 1024 * 1024 };
  return {
    async start(spec) {
      if (workloads.has(spec.name)) return;
      const status: WorkloadStatus = {
        name: spec.name,
        step: spec.step,
        owner: spec.owner.name,
        state: "Running",
      };
      workloads.set(spec.name, status);
      const input = StepInput.parse(JSON.parse(spec.env.DOCVERIFY_STEP_INPUT!));
      const job = (async () => {
        const run = await loadStep(spec.step as StepName);
        const result = await run(input, { objects, bucket, config, log, clock: { now: () => new Date() } });
        await objects.put(bucket, keys.result(input.detection, input.step), JSON.stringify(result));
        status.state = "Succeeded";
      })().catch((err: Error) => {
        status.state = "Failed";
        status.reason = "Error";
        status.message = err.message;
      });
      running.add(job);
      void job.finally(() => running.delete(job));
    },
    get: async (name) => workloads.get(name),
    delete: async (name) => {
      workloads.delete(name);
    },
    onChange: () => undefined,
    close: async () => undefined,
    idle: async () => {
      while (running.size > 0) await Promise.all(running);
    },
  };
}

interface World {
  h: Harness;
  objects: ObjectStore;
  bucket: string;
  token: string;
  /** Reconciles `name` until nothing is left to do (steps run to their end in between). */
  settle(name: string): Promise<Detection | undefined>;
  sweep(): ReturnType<ReturnType<typeof createUploadSweeper>["sweep"]>;
  advance(ms: number): void;
  /** Every object key in the service bucket. */
  keysInBucket(): Promise<string[]>;
  jobs: MemoryResourceStore<DetectionJob>;
  reconcileJob(id: string): Promise<unknown>;
  close(): Promise<void>;
}

async function world(objects: ObjectStore, bucket: string, closeStore: () => Promise<void>): Promise<World> {
  await objects.ensureBucket(bucket);
  const clock = manualClock(new Date());
  const jobs = new MemoryResourceStore<DetectionJob>(DETECTION_JOB_KIND, { now: () => clock.now() });
  const h = await createHarness({
    objects,
    clock,
    jobs,
    config: { bucket, uploadTtlSeconds: UPLOAD_TTL_SECONDS, maxDocumentBytes: 5 * 1024 * 1024 },
    clients: [
      {
        client_id: "alice",
        client_secret: "alice-secret",
        scopes: ["DocumentVerification:*"],
        buckets: ["alice-inbox", "alice-reports"],
      },
    ],
  });
  const runner = inProcessRunner(objects, bucket);
  const scheduler = createLocalScheduler({ capacity: 4 });
  const reconciler = createDetectionReconciler({
    store: h.store,
    objects,
    bucket,
    scheduler,
    runner,
    clock,
    log,
    settings: {
      stepTimeoutSeconds: 60,
      stepMaxAttempts: 1,
      detectionDeadlineSeconds: 3600,
      retentionSeconds: RETENTION_SECONDS,
    },
  });
  const jobReconciler = createDetectionJobReconciler({
    jobs,
    detections: h.store,
    objects,
    clock,
    log,
    settings: { maxInFlight: 10 },
  });
  const sweeper = createUploadSweeper({ objects, bucket, detections: h.store, clock, log });
  return {
    h,
    objects,
    bucket,
    token: await h.token("alice"),
    async settle(name) {
      for (let pass = 0; pass < 50; pass++) {
        const before = JSON.stringify(await h.store.get(name));
        const res = await reconciler.reconcile(name);
        await runner.idle();
        const after = JSON.stringify(await h.store.get(name));
        if (!res.requeue && before === after && (await scheduler.stats()).waiting === 0) break;
      }
      return h.store.get(name);
    },
    async sweep() {
      return sweeper.sweep();
    },
    advance: (ms) => clock.advance(ms),
    async keysInBucket() {
      const out: string[] = [];
      for await (const o of objects.list(bucket, "")) out.push(o.key);
      return out;
    },
    jobs,
    reconcileJob: (id) => jobReconciler.reconcile(id),
    async close() {
      await scheduler.close();
      await h.close();
      await closeStore();
    },
  };
}

async function submitUpload(w: World, bytes: Uint8Array, filename = "statement.pdf") {
  const up = await call(w.h, "POST", "/v1/uploads", {
    token: w.token,
    body: { filename, content_type: "application/pdf", size_bytes: bytes.length },
  });
  expect(up.status).toBe(201);
  const url = new URL(up.body.upload_url);
  // Standalone: the API's own signed URL (in-process); S3: a presigned URL on the S3 server (over HTTP).
  const put =
    url.pathname.startsWith("/uploads/") && url.host === "127.0.0.1:8080"
      ? await w.h.app.request(`${url.pathname}${url.search}`, { method: "PUT", body: bytes })
      : await fetch(url, { method: "PUT", body: bytes });
  expect(put.status).toBe(200);
  return up.body.upload_id as string;
}

async function createFromUpload(w: World, uploadId: string) {
  const r = await call(w.h, "POST", "/v1/detection", {
    token: w.token,
    body: { upload_id: uploadId, doc_type: "bank_statement", region: "GB" },
  });
  expect(r.status).toBe(202);
  return r.body.id as string;
}

/** Keys that hold anything of detection `id` or upload `uploadId`. */
const traces = (all: string[], ...ids: string[]) => all.filter((k) => ids.some((id) => k.includes(id)));

function lifecycleSuite(
  name: string,
  makeStore: () => Promise<{ objects: ObjectStore; close(): Promise<void> }>,
) {
  describe(`nothing kept past its time (${name})`, () => {
    let pdf: Uint8Array;
    beforeAll(async () => {
      pdf = await makeDocument({ seed: 41, docType: "bank_statement", region: "GB" });
    });

    const open = async () => {
      const { objects, close } = await makeStore();
      return world(objects, `lc-${randomUUID().slice(0, 8)}`, close);
    };

    it("DELETE removes the document, the step results and the upload; the upload starts nothing again", async () => {
      const w = await open();
      try {
        const uploadId = await submitUpload(w, pdf);
        const id = await createFromUpload(w, uploadId);
        const done = await w.settle(id);
        expect(done?.status?.phase).toBe("Completed");
        const before = traces(await w.keysInBucket(), id, uploadId);
        expect(before).toEqual(
          expect.arrayContaining([
            keys.upload(uploadId),
            keys.uploadMeta(uploadId),
            keys.result(id, "prepare"),
            keys.result(id, "agent"),
            keys.text(id),
            expect.stringMatching(new RegExp(`^documents/${id}/statement\\.pdf$`)),
          ]),
        );
        const del = await call(w.h, "DELETE", `/v1/detection/${id}`, { token: w.token });
        expect(del.status).toBe(200);
        expect(await w.settle(id)).toBeUndefined(); // the finalizer ran and the record went
        expect(await w.keysInBucket()).toEqual([]);
        const again = await call(w.h, "POST", "/v1/detection", {
          token: w.token,
          body: { upload_id: uploadId, doc_type: "bank_statement", region: "GB" },
        });
        expect(again.status).toBe(422);
        expect(again.body.detail[0]).toMatchObject({ loc: ["body", "upload_id"], type: "upload_not_found" });
      } finally {
        await w.close();
      }
    });

    it("the retention period removes every file of the detection, which stays COMPLETED with verdict null", async () => {
      const w = await open();
      try {
        const uploadId = await submitUpload(w, pdf);
        const id = await createFromUpload(w, uploadId);
        expect((await w.settle(id))?.status?.phase).toBe("Completed");
        w.advance(RETENTION_SECONDS * 1000 - 1000);
        await w.settle(id);
        expect(traces(await w.keysInBucket(), id, uploadId).length).toBeGreaterThan(0);
        w.advance(2000);
        const pruned = await w.settle(id);
        expect(pruned?.status).toMatchObject({ phase: "Completed", verdict: null });
        expect(pruned?.status?.prunedAt).toBeDefined();
        expect(await w.keysInBucket()).toEqual([]);
        // the sweeper leaves nothing for later either
        expect((await w.sweep()).removed).toBe(0);
        const get = await call(w.h, "GET", `/v1/detection/${id}`, { token: await w.h.token("alice") });
        expect(get.body).toMatchObject({ status: "COMPLETED", verdict: null });
      } finally {
        await w.close();
      }
    });

    it("an upload that starts no detection is deleted when it expires (and not before)", async () => {
      const w = await open();
      try {
        const uploadId = await submitUpload(w, pdf);
        const reservedOnly = (await call(w.h, "POST", "/v1/uploads", { token: w.token })).body.upload_id;
        expect((await w.sweep()).removed).toBe(0);
        expect(traces(await w.keysInBucket(), uploadId, reservedOnly)).toHaveLength(3);
        w.advance(UPLOAD_TTL_SECONDS * 1000 + 1000);
        expect(await w.sweep()).toMatchObject({ uploads: 2, removed: 2, objects: 3 });
        expect(await w.keysInBucket()).toEqual([]);
      } finally {
        await w.close();
      }
    });

    it("a job's fan-out: the service's copy goes with DELETE and with retention; the client's input stays", async () => {
      const w = await open();
      try {
        await w.objects.ensureBucket("alice-inbox");
        await w.objects.ensureBucket("alice-reports");
        await w.objects.put("alice-inbox", "batch/a.pdf", Buffer.from(pdf));
        await w.objects.put("alice-inbox", "batch/b.pdf", Buffer.from(pdf));
        const created = await call(w.h, "POST", "/jobs", {
          token: w.token,
          body: {
            connector: { type: "s3", bucket_name: "alice-inbox", prefixes: ["batch/"] },
            output: { type: "s3", bucket_name: "alice-reports", prefix: "r/" },
            doc_type: "bank_statement",
            region: "GB",
          },
        });
        expect(created.status).toBe(202);
        const jobId = created.body.job_id as string;
        await w.reconcileJob(jobId);
        const job = (await w.jobs.get(jobId))!;
        const [a, b] = ["batch/a.pdf", "batch/b.pdf"].map((k) =>
          batchDetectionName(jobId, job.metadata.creationTimestamp!, k),
        );
        for (const id of [a!, b!]) expect((await w.settle(id))?.status?.phase).toBe("Completed");
        const all = await w.keysInBucket();
        expect(traces(all, a!)).toContain(`documents/${a}/a.pdf`);
        expect(traces(all, b!)).toContain(`documents/${b}/b.pdf`);

        // DELETE of one, retention of the other
        expect((await call(w.h, "DELETE", `/v1/detection/${a}`, { token: w.token })).status).toBe(200);
        expect(await w.settle(a!)).toBeUndefined();
        expect(traces(await w.keysInBucket(), a!)).toEqual([]);
        w.advance(RETENTION_SECONDS * 1000 + 1000);
        await w.settle(b!);
        expect(await w.keysInBucket()).toEqual([]);
        // the client's own bucket is theirs: the inputs stay
        const inbox: string[] = [];
        for await (const o of w.objects.list("alice-inbox", "")) inbox.push(o.key);
        expect(inbox).toEqual(["batch/a.pdf", "batch/b.pdf"]);
      } finally {
        await w.close();
      }
    });
  });
}

lifecycleSuite("local object store", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-lifecycle-"));
  return {
    objects: createLocalObjectStore(dir),
    close: () => rm(dir, { recursive: true, force: true }),
  };
});

describe.skipIf(!s3.ok)(s3.ok ? "on the S3 adapter" : `on the S3 adapter (skipped: ${s3.reason})`, () => {
  let server: S3TestServer;
  beforeAll(async () => {
    server = await startS3TestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  lifecycleSuite("S3 adapter on s3rver", async () => ({
    objects: createS3ObjectStore({
      endPoint: server.endPoint,
      port: server.port,
      useSSL: false,
      accessKey: server.accessKey,
      secretKey: server.secretKey,
      region: "us-east-1",
      pathStyle: true,
    }),
    close: async () => undefined,
  }));
});
