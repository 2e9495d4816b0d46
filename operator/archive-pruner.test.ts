import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { archiveDetection, readArchivedDetection } from "../core/archive.js";
import { keys } from "../core/detection.js";
import { newDetectionId } from "../core/ids.js";
import type { Clock } from "../core/ports.js";
import { writeUploadReservation } from "../core/upload.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createObjectStoreMemory } from "../platform/memory/object-store-memory.js";
import { archivedFixture } from "../platform/testdata/archive-contract.js";
import { createArchivePruner } from "./archive-pruner.js";

const BUCKET = "docverify";
const DAY = 86_400_000;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe("the archive pruner (retention of archived detections)", () => {
  it("prunes what is due: verdict and files go (the upload too), status and score stay; the rest waits", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-archive-pruner-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const objects = createLocalObjectStore(dir);
    await objects.ensureBucket(BUCKET);
    const start = Date.parse("2026-01-05T10:00:00.000Z");
    let now = start;
    const clock: Clock = { now: () => new Date(now) };
    let pruned = 0;
    const pruner = createArchivePruner({
      objects,
      bucket: BUCKET,
      clock,
      log: pino({ level: "silent" }),
      retentionSeconds: 30 * 86_400,
      metrics: { archivedPruned: () => pruned++ },
    });
    const due = archivedFixture(newDetectionId(start), { completedAt: start });
    due.spec = { ...due.spec, source: { uploadId: "upl-01k0000000000000000000dueup" } };
    const later = archivedFixture(newDetectionId(start + 1), { completedAt: start + DAY });
    await objects.put(BUCKET, keys.upload("upl-01k0000000000000000000dueup"), "%PDF");
    await writeUploadReservation(objects, BUCKET, "upl-01k0000000000000000000dueup", {
      client_id: "acme-bank",
      filename: "a.pdf",
      content_type: null,
      expires_at: new Date(start).toISOString(),
      size: 3,
      detection: due.metadata.name,
    });
    for (const d of [due, later]) {
      await objects.put(BUCKET, d.status!.document!.key, "%PDF");
      await archiveDetection(objects, BUCKET, d, { now: new Date(start) });
    }
    expect(await pruner.prune()).toEqual({ pruned: 0, objects: 0 });
    now = start + 30 * DAY + 1;
    expect(await pruner.prune()).toEqual({ pruned: 1, objects: 4 }); // document, verdict, upload + reservation
    expect(pruned).toBe(1);
    const back = await readArchivedDetection(objects, BUCKET, "acme-bank", due.metadata.name);
    expect(back?.status).toMatchObject({ phase: "Completed", score: 17, verdict: null });
    expect(await objects.stat(BUCKET, keys.uploadMeta("upl-01k0000000000000000000dueup"))).toBeUndefined();
    expect(
      (await readArchivedDetection(objects, BUCKET, "acme-bank", later.metadata.name))?.status?.verdict,
    ).not.toBeNull();
    expect(await pruner.prune()).toEqual({ pruned: 0, objects: 0 });
  });

  it("forgets a pruned archived detection in the tenant memory (issue 23), and only it", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-archive-pruner-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const objects = createLocalObjectStore(dir);
    await objects.ensureBucket(BUCKET);
    const memory = createObjectStoreMemory(objects, BUCKET);
    const start = Date.parse("2026-01-05T10:00:00.000Z");
    let now = start;
    const pruner = createArchivePruner({
      objects,
      bucket: BUCKET,
      clock: { now: () => new Date(now) },
      log: pino({ level: "silent" }),
      retentionSeconds: 86_400,
      memory,
    });
    const due = archivedFixture(newDetectionId(start), { completedAt: start });
    const later = archivedFixture(newDetectionId(start + 1), { completedAt: start + 2 * DAY });
    for (const d of [due, later]) {
      await archiveDetection(objects, BUCKET, d, { now: new Date(start) });
      await memory.remember("tenant", {
        v: 1,
        detection: d.metadata.name,
        at: new Date(start).toISOString(),
        docType: "invoice",
        file: "f".repeat(22),
        identifiers: [],
        template: "t".repeat(22),
        templateSealed: "x",
        content: "",
        wording: "",
        cells: "",
        cellsSealed: "x",
        keys: [`f.${"f".repeat(22)}`],
      });
    }
    now = start + DAY + 1;
    expect((await pruner.prune()).pruned).toBe(1);
    expect(await memory.has(due.metadata.name)).toBe(false);
    expect(await memory.has(later.metadata.name)).toBe(true);
    const left: string[] = [];
    for await (const o of objects.list(BUCKET, "memory/")) left.push(o.key);
    expect(left.filter((k) => k.includes(due.metadata.name))).toEqual([]);
  });
});
