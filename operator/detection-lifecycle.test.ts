import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { archiveDetection, isInArchive } from "../core/archive.js";
import { type Detection, DETECTION_KIND, type DetectionStatus, keys } from "../core/detection.js";
import { newDetectionId } from "../core/ids.js";
import type { WorkloadRunner } from "../core/ports.js";
import { API_GROUP_VERSION, CLEANUP_FINALIZER } from "../core/resource.js";
import { MemoryResourceStore } from "../platform/local/memory-resource-store.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createLocalScheduler } from "../platform/local/scheduler.js";
import { writeStored } from "../core/stored.js";
import { MEMORY_ENTRY, type MemoryEntry, memoryKeys } from "../core/tenant-memory.js";
import { createObjectStoreMemory } from "../platform/memory/object-store-memory.js";
import { webhookSettingsFrom } from "../core/webhook-settings.js";
import { endpointsOf, listDeliveries } from "../core/webhooks.js";
import { createWebhookSender } from "../platform/http/webhook-sender.js";
import { createDetectionLifecycle } from "./detection-lifecycle.js";
import { createWebhookDeliverer } from "./webhook-deliverer.js";
import type { StatusEvent } from "./detection-status.js";

/**
 * The lifecycle of a finished detection (operator/detection-lifecycle.ts) on the real local resource and
 * object stores and a manual clock: each call decides from what it reads, so a call repeated after a crash
 * at any point finishes the work (the reconciler's passes are level-triggered).
 */
const log = pino({ level: "silent" });
const HOUR = 3_600_000;
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "docverify-lifecycle-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function manualClock(start: Date) {
  let t = start.getTime();
  return {
    now: () => new Date(t),
    advance: (ms: number) => {
      t += ms;
    },
  };
}

async function world() {
  const clock = manualClock(new Date("2030-01-01T00:00:00Z"));
  const store = new MemoryResourceStore<Detection>(DETECTION_KIND, { now: () => clock.now() });
  const objects = createLocalObjectStore(path.join(dir, "objects"));
  await objects.ensureBucket("b");
  const deleted: string[] = [];
  const runner: WorkloadRunner = {
    start: async () => {},
    get: async () => undefined,
    delete: async (name) => void deleted.push(name),
    onChange: () => {},
    close: async () => {},
  };
  const events: StatusEvent[] = [];
  const memory = createObjectStoreMemory(objects, "b");
  const lifecycle = createDetectionLifecycle({
    store,
    memory,
    objects,
    bucket: "b",
    scheduler: createLocalScheduler({ capacity: 1 }),
    runner,
    clock,
    settings: { retentionSeconds: 24 * 3600, archiveAfterSeconds: 3600 },
    record: (_d, e) => void events.push(e),
  });
  /** A Completed detection with its files, finished now. */
  async function finished(labels?: Record<string, string>): Promise<Detection> {
    const name = newDetectionId(clock.now().getTime());
    const doc = keys.document(name, "s.pdf");
    await objects.put("b", doc, "%PDF");
    await objects.put("b", keys.result(name, "check"), "{}");
    const created = await store.create({
      apiVersion: API_GROUP_VERSION,
      kind: DETECTION_KIND,
      metadata: { name, finalizers: [CLEANUP_FINALIZER], ...(labels ? { labels } : {}) },
      spec: {
        source: { url: "https://x/s.pdf" },
        docType: "invoice",
        region: "GB",
        submittedBy: "c1",
        sample: false,
        priority: "interactive",
      },
    });
    const status: DetectionStatus = {
      phase: "Completed",
      completedAt: clock.now().toISOString(),
      score: 7,
      steps: [{ name: "agent", workload: `${name}-agent-1`, attempt: 1, state: "Succeeded" }],
      document: {
        filename: "s.pdf",
        contentType: "application/pdf",
        sizeBytes: 4,
        key: doc,
        sha256: "0".repeat(64),
      },
    };
    return store.updateStatus({ ...created, status });
  }
  /** The check step's memory entry of `name` (what checks/step.ts writes beside the results). */
  async function checkedWithMemory(name: string): Promise<void> {
    const entry: MemoryEntry = {
      v: 1,
      detection: name,
      at: clock.now().toISOString(),
      docType: "invoice",
      file: "f".repeat(22),
      identifiers: [],
      template: "t".repeat(22),
      templateSealed: "x",
      content: "",
      wording: "",
      cells: "",
      cellsSealed: "x",
      keys: [`f.${"f".repeat(22)}`, `t.${"t".repeat(22)}/-`],
    };
    await writeStored(objects, "b", MEMORY_ENTRY, { tenant: "tenant1", entry }, name);
  }
  /** Every object of the tenant memory that names `name`. */
  async function memoryOf(name: string): Promise<string[]> {
    const out: string[] = [];
    for await (const o of objects.list("b", "memory/")) if (o.key.includes(name)) out.push(o.key);
    return out;
  }
  return { clock, store, objects, lifecycle, deleted, events, finished, memory, checkedWithMemory, memoryOf };
}

describe("the detection lifecycle", () => {
  it("before anything is due: deletes the workloads and asks to look again when the archive is due", async () => {
    const w = await world();
    const d = await w.finished();
    const step = await w.lifecycle.afterTerminal(d, d.status!, w.clock.now(), log);
    expect(step).toEqual({ result: { requeueAfterMs: HOUR } });
    expect(w.deleted).toEqual([`${d.metadata.name}-agent-1`]);
    expect(await w.store.get(d.metadata.name)).toBeDefined();
  });

  it("at retention: the files go and the pruned status is returned to be written (verdict null, score kept)", async () => {
    const w = await world();
    const d = await w.finished();
    w.clock.advance(25 * HOUR);
    const step = await w.lifecycle.afterTerminal(d, d.status!, w.clock.now(), log);
    if (!("write" in step)) throw new Error("expected a status to write");
    expect(step.write.status).toMatchObject({
      verdict: null,
      score: 7,
      prunedAt: w.clock.now().toISOString(),
    });
    expect(step.write.events[0]).toMatchObject({ reason: "Pruned" });
    expect(await w.objects.stat("b", keys.result(d.metadata.name, "check"))).toBeUndefined();
  });

  it("archives once due: record, finalizer off, resource deleted; a pass cut short after the record finishes the job", async () => {
    const w = await world();
    const a = await w.finished();
    const b = await w.finished();
    w.clock.advance(HOUR);
    expect(await w.lifecycle.afterTerminal(a, a.status!, w.clock.now(), log)).toEqual({ result: {} });
    expect(await w.store.get(a.metadata.name)).toBeUndefined();
    expect(await isInArchive(w.objects, "b", "c1", a.metadata.name)).toBe(true);
    expect(w.events.map((e) => e.reason)).toEqual(["Archived"]);
    // b: the record was written, then the operator died; the next pass sees the same resource.
    await archiveDetection(w.objects, "b", b, { now: w.clock.now() });
    expect(await w.lifecycle.afterTerminal(b, b.status!, w.clock.now(), log)).toEqual({ result: {} });
    expect(await w.store.get(b.metadata.name)).toBeUndefined();
    expect(await isInArchive(w.objects, "b", "c1", b.metadata.name)).toBe(true);
  });

  it("keeps a detection created with an Idempotency-Key a resource for the key's 24 hours, then archives it", async () => {
    const w = await world();
    const d = await w.finished({ "docverify.io/idempotency-key": "a".repeat(40) });
    w.clock.advance(HOUR);
    expect(await w.lifecycle.afterTerminal(d, d.status!, w.clock.now(), log)).toEqual({
      result: { requeueAfterMs: expect.any(Number) },
    });
    expect(await w.store.get(d.metadata.name)).toBeDefined();
    w.clock.advance(23 * HOUR);
    // 24 hours is also this world's retention: the prune comes first, the archive on the next pass.
    const pruned = await w.lifecycle.afterTerminal(d, d.status!, w.clock.now(), log);
    if (!("write" in pruned)) throw new Error("expected the pruned status");
    const step = await w.lifecycle.afterTerminal(d, pruned.write.status, w.clock.now(), log);
    expect("result" in step && step.result).toEqual({});
    expect(await w.store.get(d.metadata.name)).toBeUndefined();
    expect(await isInArchive(w.objects, "b", "c1", d.metadata.name)).toBe(true);
  });

  it("finalize removes the files, an archived record left by a cut-short pass, then the finalizer", async () => {
    const w = await world();
    const d = await w.finished();
    await archiveDetection(w.objects, "b", d, { now: w.clock.now() });
    await w.store.delete(d.metadata.name);
    const deleting = (await w.store.get(d.metadata.name))!;
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    expect(await w.lifecycle.finalize(deleting, log)).toEqual({});
    expect(await w.store.get(d.metadata.name)).toBeUndefined();
    expect(await isInArchive(w.objects, "b", "c1", d.metadata.name)).toBe(false);
    expect(await w.objects.stat("b", keys.document(d.metadata.name, "s.pdf"))).toBeUndefined();
    // Repeated (a second event for the same deletion): nothing left to do, no error.
    expect(await w.lifecycle.finalize(deleting, log)).toEqual({});
  });

  it("remembers a finished detection's memory entry once, and forgets it at retention (issue 23)", async () => {
    const w = await world();
    const d = await w.finished();
    await w.checkedWithMemory(d.metadata.name);
    await w.lifecycle.afterTerminal(d, d.status!, w.clock.now(), log);
    expect(await w.memory.has(d.metadata.name)).toBe(true);
    expect((await w.memoryOf(d.metadata.name)).sort()).toEqual(
      [
        `memory/by-detection/${d.metadata.name}`,
        `memory/tenant1/e/${d.metadata.name}.json`,
        `memory/tenant1/x/f.${"f".repeat(22)}/${d.metadata.name}`,
        memoryKeys.marker("tenant1", `t.${"t".repeat(22)}/-`, d.metadata.name),
      ].sort(),
    );
    const found = await w.memory.lookup("tenant1", { keys: [`f.${"f".repeat(22)}`], perKey: 5, limit: 5 });
    expect(found.map((e) => e.detection)).toEqual([d.metadata.name]);
    // Another tenant's lookup under the same key finds nothing.
    expect(await w.memory.lookup("tenant2", { keys: [`f.${"f".repeat(22)}`], perKey: 5, limit: 5 })).toEqual(
      [],
    );
    w.clock.advance(25 * HOUR);
    const step = await w.lifecycle.afterTerminal(d, d.status!, w.clock.now(), log);
    expect("write" in step).toBe(true);
    expect(await w.memoryOf(d.metadata.name)).toEqual([]);
  });

  it("forgets a deleted detection's memory entry in its finalizer", async () => {
    const w = await world();
    const d = await w.finished();
    await w.checkedWithMemory(d.metadata.name);
    await w.lifecycle.afterTerminal(d, d.status!, w.clock.now(), log);
    expect((await w.memoryOf(d.metadata.name)).length).toBe(4);
    await w.store.delete(d.metadata.name);
    const deleting = (await w.store.get(d.metadata.name))!;
    await w.lifecycle.finalize(deleting, log);
    expect(await w.memoryOf(d.metadata.name)).toEqual([]);
  });
});

describe("the webhook outbox of a terminal detection", () => {
  it("a status marked pending (the terminal write's outbox entry) queues one delivery per endpoint, once", async () => {
    const w = await world();
    const secret = `whsec_${"A".repeat(32)}`;
    const deliverer = createWebhookDeliverer({
      objects: w.objects,
      bucket: "b",
      sender: createWebhookSender({
        allowPrivate: false,
        allowedPorts: [[443, 443]],
        timeoutMs: 1000,
        maxResponseBytes: 1024,
      }),
      endpoints: (id) =>
        endpointsOf(
          id,
          id === "c1"
            ? [{ url: "https://hooks.example.com/a", events: ["detection.completed"], secret }]
            : [],
        ),
      settings: webhookSettingsFrom({}),
      clock: w.clock,
      log,
    });
    const lifecycle = createDetectionLifecycle({
      store: w.store,
      objects: w.objects,
      bucket: "b",
      scheduler: createLocalScheduler({ capacity: 1 }),
      runner: {
        start: async () => {},
        get: async () => undefined,
        delete: async () => {},
        onChange: () => {},
        close: async () => {},
      },
      clock: w.clock,
      settings: { retentionSeconds: 24 * 3600, archiveAfterSeconds: 3600 },
      record: () => {},
      webhooks: deliverer.outbox,
    });
    const d = await w.finished();
    const pending: DetectionStatus = { ...d.status!, webhooks: { state: "pending" } };
    // The terminal write carried the mark, then the process died: the next pass queues the event…
    const step = await lifecycle.afterTerminal(d, pending, w.clock.now(), log);
    if (!("write" in step)) throw new Error("expected the queued mark to be written");
    expect(step.write.status.webhooks).toMatchObject({ state: "queued", deliveries: 1 });
    // …and a pass repeated before that mark was written (another crash) queues nothing twice.
    await lifecycle.afterTerminal(d, pending, w.clock.now(), log);
    const [ep] = endpointsOf("c1", [
      { url: "https://hooks.example.com/a", events: ["detection.completed"], secret },
    ]);
    const page = await listDeliveries(w.objects, "b", "c1", ep!.id, { limit: 10 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({
      eventId: `msg_${d.metadata.name}`,
      state: "pending",
      eventType: "detection.completed",
    });
    expect(JSON.parse(page.items[0]!.body).data).toEqual({
      id: d.metadata.name,
      status: "COMPLETED",
      score: 7,
      url: `/v1/detection/${d.metadata.name}`,
    });
    // A queued status is past the outbox: the lifecycle goes on with retention and the archive.
    const next = await lifecycle.afterTerminal(d, step.write.status, w.clock.now(), log);
    expect(next).toEqual({ result: { requeueAfterMs: HOUR } });
  });
});
