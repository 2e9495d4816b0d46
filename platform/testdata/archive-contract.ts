/**
 * The archive's layout (core/archive.ts) on a real object store adapter, as one parametrised suite:
 * `describeArchiveContract("local", makeStore)` in each adapter's test file. The archive is core code over
 * the ObjectStore port; this proves its key order, start-after paging and deletions on each adapter.
 */
import { describe, expect, it } from "vitest";
import {
  archiveDetection,
  archiveKeys,
  dueArchivedDetections,
  isInArchive,
  listArchivedDetections,
  pruneArchivedDetection,
  readArchivedDetection,
  removeArchivedDetection,
} from "../../core/archive.js";
import { type Detection, DETECTION_KIND, keys } from "../../core/detection.js";
import { newDetectionId } from "../../core/ids.js";
import type { ObjectStore } from "../../core/ports.js";
import { API_GROUP_VERSION, LABELS } from "../../core/resource.js";
import type { ContractStore } from "./object-store-contract.js";

const T0 = Date.parse("2026-01-05T10:00:00.000Z");
const DAY = 86_400_000;

export function archivedFixture(
  id: string,
  opts: {
    client?: string;
    phase?: "Completed" | "Failed";
    batchId?: string;
    pruned?: boolean;
    completedAt?: number;
  } = {},
): Detection {
  const client = opts.client ?? "acme-bank";
  const failed = opts.phase === "Failed";
  return {
    apiVersion: API_GROUP_VERSION,
    kind: DETECTION_KIND,
    metadata: {
      name: id,
      uid: `uid-${id}`,
      resourceVersion: "42",
      generation: 1,
      creationTimestamp: new Date(T0).toISOString(),
      labels: { [LABELS.client]: client },
      finalizers: ["docverify.io/cleanup"],
    },
    spec: {
      source: { url: "https://example.com/a.pdf" },
      docType: "invoice",
      region: "US",
      submittedBy: client,
      sample: false,
      priority: opts.batchId ? "batch" : "interactive",
      ...(opts.batchId ? { batchId: opts.batchId } : {}),
    },
    status: {
      phase: failed ? "Failed" : "Completed",
      billable: !failed,
      completedAt: new Date(opts.completedAt ?? T0 + 60_000).toISOString(),
      document: {
        filename: "a.pdf",
        contentType: "application/pdf",
        sizeBytes: 10,
        key: keys.document(id, "a.pdf"),
        sha256: "0".repeat(64),
      },
      checks: [{ checkId: "file.type", outcome: "pass", severity: 0, findingCount: 0 }],
      ...(failed
        ? { failure: { code: "source_unreachable", message: "x" }, score: null, verdict: null }
        : {
            score: 17,
            verdict:
              opts.pruned === true
                ? null
                : {
                    fraudScore: 17,
                    documentTypeMatch: true,
                    actualDocType: "invoice",
                    reasoning: "Low risk.",
                    perCheck: [{ checkId: "file.type", importance: 1, reasoning: "Types agree." }],
                  },
          }),
      ...(opts.pruned ? { prunedAt: new Date(T0 + DAY).toISOString() } : {}),
    },
  };
}

async function archive(store: ObjectStore, bucket: string, d: Detection) {
  await store.put(bucket, d.status!.document!.key, "%PDF-1.7");
  await store.put(bucket, keys.result(d.metadata.name, "check"), "{}");
  await archiveDetection(store, bucket, d, { now: new Date(T0 + 3600_000) });
}

/** Wraps a store to count the objects read. */
function counting(store: ObjectStore) {
  const counts = { get: 0, stat: 0 };
  const wrapped: ObjectStore = {
    ...store,
    get: (b, k) => {
      counts.get++;
      return store.get(b, k);
    },
    stat: (b, k) => {
      counts.stat++;
      return store.stat(b, k);
    },
    list: (b, p, o) => store.list(b, p, o),
  };
  return { store: wrapped, counts };
}

const ids = (ds: Detection[]) => ds.map((d) => d.metadata.name);

export function describeArchiveContract(name: string, makeStore: () => Promise<ContractStore>): void {
  describe(`the archive (core/archive.ts) on ${name}`, () => {
    it("writes the record last and reads the detection back with its verdict", async () => {
      const { store, bucket } = await makeStore();
      const d = archivedFixture(newDetectionId(T0));
      await archive(store, bucket, d);
      expect(await isInArchive(store, bucket, "acme-bank", d.metadata.name)).toBe(true);
      const back = await readArchivedDetection(store, bucket, "acme-bank", d.metadata.name);
      expect(back?.spec).toEqual(d.spec);
      expect(back?.status).toEqual(d.status);
      expect(back?.metadata).toEqual({
        name: d.metadata.name,
        uid: d.metadata.uid,
        generation: 1,
        creationTimestamp: d.metadata.creationTimestamp,
        labels: d.metadata.labels,
      });
      // The verdict is kept beside the step results, not in the record.
      const record = JSON.parse(
        (await store.get(bucket, archiveKeys.record("acme-bank", d.metadata.name))).toString(),
      );
      expect(record.detection.status.verdict).toBeUndefined();
      expect(record.verdict).toBe(true);
      // Another client, or an id that is no detection id, finds nothing.
      expect(await readArchivedDetection(store, bucket, "other", d.metadata.name)).toBeUndefined();
      expect(await readArchivedDetection(store, bucket, "acme-bank", "det-concurrent")).toBeUndefined();
    });

    it("lists newest first in pages from a cursor, by status, by batch and by both", async () => {
      const { store, bucket } = await makeStore();
      // 40 detections over 20 days, every 4th failed, every 3rd in a batch.
      const all: Detection[] = [];
      for (let i = 0; i < 40; i++) {
        const id = newDetectionId(T0 + i * 12 * 3600_000 + (i % 7) * 911);
        const d = archivedFixture(id, {
          phase: i % 4 === 0 ? "Failed" : "Completed",
          ...(i % 3 === 0 ? { batchId: "job-1" } : {}),
        });
        all.push(d);
        await archive(store, bucket, d);
      }
      await archive(store, bucket, archivedFixture(newDetectionId(T0 + 5), { client: "other-client" }));
      const newest = ids(all).reverse();
      const pages: string[] = [];
      let before: string | undefined;
      for (;;) {
        const page = await listArchivedDetections(store, bucket, "acme-bank", { limit: 7, before });
        pages.push(...ids(page));
        if (page.length < 7) break;
        before = page.at(-1)!.metadata.name;
      }
      expect(pages).toEqual(newest);
      const byPhase = (phase: "Completed" | "Failed") =>
        newest.filter((id) => all.find((d) => d.metadata.name === id)!.status!.phase === phase);
      expect(
        ids(await listArchivedDetections(store, bucket, "acme-bank", { phase: "Failed", limit: 50 })),
      ).toEqual(byPhase("Failed"));
      const completed = byPhase("Completed");
      expect(
        ids(
          await listArchivedDetections(store, bucket, "acme-bank", {
            phase: "Completed",
            limit: 5,
            before: completed[4],
          }),
        ),
      ).toEqual(completed.slice(5, 10));
      const inBatch = newest.filter(
        (id) => all.find((d) => d.metadata.name === id)!.spec.batchId === "job-1",
      );
      expect(
        ids(await listArchivedDetections(store, bucket, "acme-bank", { batchId: "job-1", limit: 50 })),
      ).toEqual(inBatch);
      expect(
        ids(
          await listArchivedDetections(store, bucket, "acme-bank", {
            batchId: "job-1",
            phase: "Failed",
            limit: 50,
          }),
        ),
      ).toEqual(inBatch.filter((id) => byPhase("Failed").includes(id)));
      expect(
        await listArchivedDetections(store, bucket, "acme-bank", { batchId: "job-2", limit: 50 }),
      ).toEqual([]);
      // A cursor that is no detection id (a hand-made resource's name) still pages correctly.
      expect(
        ids(await listArchivedDetections(store, bucket, "acme-bank", { before: "det-zzz", limit: 3 })),
      ).toEqual(newest.slice(0, 3));
      expect(ids(await listArchivedDetections(store, bucket, "other-client", { limit: 50 }))).toHaveLength(1);
    });

    it("reads the page only: the records and verdicts of the page, however deep the cursor", async () => {
      const { store: raw, bucket } = await makeStore();
      const all: string[] = [];
      for (let i = 0; i < 120; i++) {
        const id = newDetectionId(T0 + i * 3600_000);
        all.push(id);
        await archive(raw, bucket, archivedFixture(id));
      }
      const { store, counts } = counting(raw);
      const newest = [...all].reverse();
      const page = await listArchivedDetections(store, bucket, "acme-bank", {
        limit: 10,
        before: newest[99],
      });
      expect(ids(page)).toEqual(newest.slice(100, 110));
      expect(counts.get).toBe(20); // 10 records + 10 verdicts
    });

    it("a marker whose record is gone is skipped and the page is still filled", async () => {
      const { store, bucket } = await makeStore();
      const list: string[] = [];
      for (let i = 0; i < 6; i++) {
        const id = newDetectionId(T0 + i * 1000);
        list.push(id);
        await archive(store, bucket, archivedFixture(id, { phase: "Failed" }));
      }
      await store.delete(bucket, archiveKeys.record("acme-bank", list[4]!));
      expect(
        ids(await listArchivedDetections(store, bucket, "acme-bank", { phase: "Failed", limit: 3 })),
      ).toEqual([list[5], list[3], list[2]]);
    });

    it("removes everything of an archived detection, record last; a second removal finds nothing", async () => {
      const { store, bucket } = await makeStore();
      const d = archivedFixture(newDetectionId(T0), { batchId: "job-9" });
      await archive(store, bucket, d);
      expect(await removeArchivedDetection(store, bucket, "acme-bank", d.metadata.name)).toBe(true);
      const left: string[] = [];
      for await (const o of store.list(bucket, "")) left.push(o.key);
      expect(left).toEqual([]);
      expect(await removeArchivedDetection(store, bucket, "acme-bank", d.metadata.name)).toBe(false);
      expect(await readArchivedDetection(store, bucket, "acme-bank", d.metadata.name)).toBeUndefined();
    });

    it("retention: due entries in completion order up to a time; pruning removes files and verdict, the record stays", async () => {
      const { store, bucket } = await makeStore();
      const early = archivedFixture(newDetectionId(T0), { completedAt: T0 + 10 * DAY });
      const late = archivedFixture(newDetectionId(T0 + 1000), { completedAt: T0 + 20 * DAY });
      const already = archivedFixture(newDetectionId(T0 + 2000), { pruned: true, completedAt: T0 + 5 * DAY });
      await archive(store, bucket, late);
      await archive(store, bucket, early);
      await archive(store, bucket, already);
      const due = async (at: number) => {
        const out = [];
        for await (const e of dueArchivedDetections(store, bucket, new Date(at))) out.push(e);
        return out;
      };
      expect(await due(T0 + 9 * DAY)).toEqual([]);
      const now = await due(T0 + 15 * DAY);
      expect(now.map((e) => e.id)).toEqual([early.metadata.name]);
      expect(await pruneArchivedDetection(store, bucket, now[0]!)).toBe(3); // document, check result, verdict
      const back = await readArchivedDetection(store, bucket, "acme-bank", early.metadata.name);
      expect(back?.status).toMatchObject({ phase: "Completed", score: 17, verdict: null });
      expect(await store.stat(bucket, early.status!.document!.key)).toBeUndefined();
      expect((await due(T0 + 30 * DAY)).map((e) => e.id)).toEqual([late.metadata.name]);
      expect(ids(await listArchivedDetections(store, bucket, "acme-bank", { limit: 10 }))).toEqual([
        already.metadata.name,
        late.metadata.name,
        early.metadata.name,
      ]);
    });
  });
}
