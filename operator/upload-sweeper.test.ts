import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { archiveDetection } from "../core/archive.js";
import { type Detection, DETECTION_KIND, keys } from "../core/detection.js";
import { newDetectionId } from "../core/ids.js";
import type { Clock } from "../core/ports.js";
import { API_GROUP_VERSION } from "../core/resource.js";
import { type UploadReservationInput, writeUploadReservation } from "../core/upload.js";
import { MemoryResourceStore } from "../platform/local/memory-resource-store.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createUploadSweeper } from "./upload-sweeper.js";
import { removeDetectionFiles } from "../core/detection-files.js";

const BUCKET = "docverify";
const GRACE = 60_000;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function world() {
  const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-sweeper-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const objects = createLocalObjectStore(dir);
  await objects.ensureBucket(BUCKET);
  const detections = new MemoryResourceStore<Detection>(DETECTION_KIND);
  let now = Date.now();
  const clock: Clock = { now: () => new Date(now) };
  const deleted: string[] = [];
  const sweeper = createUploadSweeper({
    objects,
    bucket: BUCKET,
    detections,
    clock,
    log: pino({ level: "silent" }),
    graceMs: GRACE,
    metrics: { uploadDeleted: (reason) => deleted.push(reason) },
  });
  const start = now;
  const reservation = (extra: Partial<UploadReservationInput> = {}): UploadReservationInput => ({
    client_id: "alice",
    filename: "a.pdf",
    content_type: null,
    expires_at: new Date(start + 600_000).toISOString(),
    size: 3,
    ...extra,
  });
  return {
    objects,
    detections,
    sweeper,
    /** The reasons the sweeper reported to its metrics, in order. */
    deleted,
    at: (msAfterStart: number) => {
      now = start + msAfterStart;
    },
    async upload(id: string, extra?: Partial<UploadReservationInput>, bytes = true) {
      if (bytes) await objects.put(BUCKET, keys.upload(id), "pdf");
      await writeUploadReservation(objects, BUCKET, id, reservation(extra));
    },
    async detection(name: string, status?: Detection["status"]) {
      const d = await detections.create({
        apiVersion: API_GROUP_VERSION,
        kind: DETECTION_KIND,
        metadata: { name },
        spec: {
          source: { uploadId: "upl-x" },
          docType: "other",
          region: "US",
          submittedBy: "alice",
          sample: false,
          priority: "interactive",
        },
      });
      if (status) await detections.updateStatus({ ...d, status });
    },
    async uploadsLeft() {
      const ids = new Set<string>();
      for await (const o of objects.list(BUCKET, "uploads/")) ids.add(o.key.split("/")[1]!);
      return [...ids].sort();
    },
  };
}

describe("the upload sweeper", () => {
  it("deletes an unused upload once it expires, not before", async () => {
    const w = await world();
    await w.upload("upl-unused");
    await w.upload("upl-reserved-only", {}, false);
    expect(await w.sweeper.sweep()).toEqual({ uploads: 2, removed: 0, objects: 0 });
    w.at(600_001);
    expect(await w.sweeper.sweep()).toEqual({ uploads: 2, removed: 2, objects: 3 });
    expect(await w.uploadsLeft()).toEqual([]);
    expect(w.deleted).toEqual(["expired_unused", "expired_unused"]);
  });

  it("leaves an upload whose detection exists to that detection, even past its expiry", async () => {
    const w = await world();
    await w.upload("upl-used", { detection: "det-live" });
    await w.detection("det-live", { phase: "Completed" });
    w.at(10 * 600_000);
    expect((await w.sweeper.sweep()).removed).toBe(0);
    expect(await w.uploadsLeft()).toEqual(["upl-used"]);
  });

  it("leaves an upload whose detection was archived (no resource any more) to that detection", async () => {
    const w = await world();
    const name = newDetectionId();
    await w.upload("upl-archived", { detection: name });
    await w.detection(name, { phase: "Completed", completedAt: new Date().toISOString() });
    const d = (await w.detections.get(name))!;
    await archiveDetection(w.objects, BUCKET, d, { now: new Date() });
    await w.detections.delete(name);
    w.at(10 * 600_000);
    expect((await w.sweeper.sweep()).removed).toBe(0);
    expect(await w.uploadsLeft()).toEqual(["upl-archived"]);
  });

  it("deletes what is left of an upload whose detection is past retention", async () => {
    const w = await world();
    await w.upload("upl-pruned", { detection: "det-pruned" });
    await w.detection("det-pruned", { phase: "Completed", prunedAt: new Date().toISOString() });
    expect((await w.sweeper.sweep()).removed).toBe(1);
    expect(await w.uploadsLeft()).toEqual([]);
    expect(w.deleted).toEqual(["detection_pruned"]);
  });

  it("a claim whose detection does not exist goes only after expiry plus the grace period", async () => {
    const w = await world();
    await w.upload("upl-stale", { detection: "det-never-created" });
    w.at(600_001);
    expect((await w.sweeper.sweep()).removed).toBe(0);
    w.at(600_001 + GRACE);
    expect((await w.sweeper.sweep()).removed).toBe(1);
    expect(w.deleted).toEqual(["stale_claim"]);
  });

  it("files without a (readable) reservation go once they are older than the grace period", async () => {
    const w = await world();
    await w.objects.put(BUCKET, keys.upload("upl-orphan"), "pdf");
    await w.objects.put(BUCKET, keys.upload("upl-garbled"), "pdf");
    await w.objects.put(BUCKET, keys.uploadMeta("upl-garbled"), "{not json");
    expect((await w.sweeper.sweep()).removed).toBe(0);
    w.at(GRACE + 5_000);
    expect(await w.sweeper.sweep()).toEqual({ uploads: 2, removed: 2, objects: 3 });
    expect(w.deleted).toEqual(["orphaned", "orphaned"]);
  });

  it("touches nothing outside uploads/, and concurrent sweeps share one pass", async () => {
    const w = await world();
    await w.objects.put(BUCKET, "documents/det-a/a.pdf", "pdf");
    await w.objects.put(BUCKET, "uploadsX/y", "x");
    await w.upload("upl-old");
    w.at(600_001);
    const [a, b] = await Promise.all([w.sweeper.sweep(), w.sweeper.sweep()]);
    expect(a).toBe(b);
    const left: string[] = [];
    for await (const o of w.objects.list(BUCKET, "")) left.push(o.key);
    expect(left).toEqual(["documents/det-a/a.pdf", "uploadsX/y"]);
  });
});

describe("removeDetectionFiles (finalizer and retention)", () => {
  it("removes the detection's document, results, evidence images and its upload, but not an upload claimed by another", async () => {
    const w = await world();
    const spec = (uploadId: string) => ({ source: { uploadId } });
    await w.objects.put(BUCKET, "documents/det-a/a.pdf", "pdf");
    await w.objects.put(BUCKET, "runs/det-a/check.json", "{}");
    await w.objects.put(BUCKET, keys.evidence("det-a"), "{}");
    await w.objects.put(BUCKET, keys.evidencePage("det-a", 1), "png");
    await w.objects.put(BUCKET, keys.evidencePage("det-a", 1, "first-saved"), "png");
    await w.objects.put(BUCKET, keys.evidencePage("det-ab", 1), "png");
    await w.objects.put(BUCKET, "documents/det-ab/keep.pdf", "pdf");
    await w.upload("upl-mine", { detection: "det-a" });
    await w.upload("upl-theirs", { detection: "det-b" });
    expect(
      await removeDetectionFiles(w.objects, BUCKET, {
        metadata: { name: "det-a" },
        spec: specOf(spec("upl-mine")),
      }),
    ).toBe(7);
    expect(
      await removeDetectionFiles(w.objects, BUCKET, {
        metadata: { name: "det-a" },
        spec: specOf(spec("upl-theirs")),
      }),
    ).toBe(0);
    // a hand-made resource cannot widen the deletion with a crafted upload id
    expect(
      await removeDetectionFiles(w.objects, BUCKET, {
        metadata: { name: "det-z" },
        spec: specOf(spec("../")),
      }),
    ).toBe(0);
    const left: string[] = [];
    for await (const o of w.objects.list(BUCKET, "")) left.push(o.key);
    expect(left).toEqual([
      "documents/det-ab/keep.pdf",
      "evidence/det-ab/pages/1.png",
      "uploads/upl-theirs/document",
      "uploads/upl-theirs/meta.json",
    ]);
  });
});

const specOf = (s: { source: { uploadId: string } }): Detection["spec"] => ({
  ...s,
  docType: "other",
  region: "US",
  submittedBy: "alice",
  sample: false,
  priority: "interactive",
});
