import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { archiveDetection, archiveKeys, isInArchive } from "../../core/archive.js";
import { type Detection, keys } from "../../core/detection.js";
import { CLEANUP_FINALIZER, LABELS } from "../../core/resource.js";
import { call, createHarness, type Harness } from "../testdata/app-kit.js";

/**
 * The API over archived detections (core/archive.ts): GET, list (merged with the live resources, by
 * status and batch), DELETE and uploads behave exactly as they did while the detection was a resource.
 */
let h: Harness;
let alice: string;
let bob: string;
beforeEach(async () => {
  h = await createHarness();
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterEach(async () => {
  await h.close();
});

const body = {
  source_url: "https://docs.example.com/statement.pdf",
  doc_type: "bank_statement",
  region: "gb",
};

async function create(opts: { token?: string; batch?: string } = {}): Promise<string> {
  const r = await call(h, "POST", "/v1/detection", { token: opts.token ?? alice, body });
  expect(r.status).toBe(202);
  const id = r.body.id as string;
  if (opts.batch) {
    const d = (await h.store.get(id)) as Detection;
    await h.store.update({
      ...d,
      metadata: { ...d.metadata, labels: { ...d.metadata.labels, [LABELS.batch]: opts.batch } },
      spec: { ...d.spec, batchId: opts.batch },
    });
  }
  h.clock.advance(1000);
  return id;
}

/** Finishes a detection as the reconciler would: Completed with a verdict, or Failed; files stored. */
async function finish(id: string, phase: "Completed" | "Failed" = "Completed"): Promise<void> {
  const d = (await h.store.get(id)) as Detection;
  const document = {
    filename: "statement.pdf",
    contentType: "application/pdf",
    sizeBytes: 8,
    key: keys.document(id, "statement.pdf"),
    sha256: "0".repeat(64),
  };
  await h.deps.objects.put(h.deps.bucket, document.key, "%PDF-1.7");
  await h.deps.objects.put(h.deps.bucket, keys.result(id, "check"), "{}");
  const now = h.clock.now().toISOString();
  await h.store.updateStatus({
    ...d,
    status:
      phase === "Completed"
        ? {
            phase,
            billable: true,
            document,
            discovered: ["metadata_present"],
            checks: [{ checkId: "file.type", outcome: "pass", severity: 0, findingCount: 0 }],
            agent: { runId: "run-1" },
            score: 23,
            verdict: {
              fraudScore: 23,
              documentTypeMatch: true,
              actualDocType: "bank_statement",
              reasoning: "Low risk.",
              perCheck: [{ checkId: "file.type", importance: 1, reasoning: "Types agree." }],
            },
            startedAt: now,
            completedAt: now,
          }
        : {
            phase,
            billable: false,
            document,
            failure: { code: "document_unreadable", message: "The document could not be read." },
            score: null,
            verdict: null,
            completedAt: now,
          },
  });
}

/**
 * What the reconciler's archive pass does (operator/detection-reconciler.ts): the record, then the
 * finalizer off, then the resource deleted. `stopAt` leaves it half-way, as a crash would.
 */
async function archive(id: string, stopAt?: "record" | "finalizer"): Promise<void> {
  const d = (await h.store.get(id)) as Detection;
  await archiveDetection(h.deps.objects, h.deps.bucket, d, { now: h.clock.now() });
  if (stopAt === "record") return;
  const updated = await h.store.update({
    ...structuredClone(d),
    metadata: { ...structuredClone(d.metadata), finalizers: [] },
  });
  if (stopAt === "finalizer") return;
  await h.store.delete(updated.metadata.name);
}

/** A tenant memory entry of detection `id` (one file key), as the operator remembers a finished one. */
function memoryEntry(id: string) {
  return {
    v: 1 as const,
    detection: id,
    at: h.clock.now().toISOString(),
    docType: "bank_statement",
    file: "f".repeat(22),
    identifiers: [],
    template: "t".repeat(22),
    templateSealed: "x",
    content: "",
    wording: "",
    cells: "",
    cellsSealed: "x",
    keys: [`f.${"f".repeat(22)}`, `c1.${id.slice(-22).padStart(22, "c")}`],
  };
}

const get = (id: string, token = alice) => call(h, "GET", `/v1/detection/${id}`, { token });
const list = async (qs = "", token = alice) => {
  const r = await call(h, "GET", `/v1/detection${qs}`, { token });
  expect(r.status).toBe(200);
  return r.body as { items: { id: string; status: string }[]; next_cursor: string | null };
};
/** Every page of a listing, as [ids of each page]. */
async function pages(qs: string): Promise<string[][]> {
  const out: string[][] = [];
  let cursor: string | null = null;
  do {
    const sep = qs ? "&" : "?";
    const page = await list(`${qs}${cursor ? `${qs ? sep : "?"}cursor=${encodeURIComponent(cursor)}` : ""}`);
    out.push(page.items.map((d) => d.id));
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

describe("archived detections through the API", () => {
  it("GET answers exactly what it answered before archiving; another client still gets 404", async () => {
    const id = await create();
    await finish(id);
    const before = await get(id);
    await archive(id);
    expect(await h.store.get(id)).toBeUndefined();
    const after = await get(id);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before.body);
    expect((await get(id, bob)).status).toBe(404);
    const failed = await create();
    await finish(failed, "Failed");
    const failedBefore = await get(failed);
    await archive(failed);
    expect((await get(failed)).body).toEqual(failedBefore.body);
  });

  it("list merges live and archived detections newest first, in the same pages as before archiving", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) ids.push(await create());
    for (const [i, id] of ids.entries())
      if (i % 3 !== 2) await finish(id, i % 4 === 0 ? "Failed" : "Completed");
    const before = await pages("?limit=4");
    const items = (await list("?limit=200")).items;
    for (const [i, id] of ids.entries()) if (i % 3 !== 2 && i !== 7) await archive(id);
    expect((await h.store.list()).items.map((d) => d.metadata.name)).toEqual([
      ids[2],
      ids[5],
      ids[7],
      ids[8],
    ]);
    expect(await pages("?limit=4")).toEqual(before);
    expect((await list("?limit=200")).items).toEqual(items);
    for (const status of ["COMPLETED", "FAILED", "QUEUED"]) {
      expect((await list(`?status=${status}&limit=200`)).items.map((d) => d.id)).toEqual(
        items.filter((d) => d.status === status).map((d) => d.id),
      );
    }
    expect((await pages("?status=COMPLETED&limit=2")).flat()).toEqual(
      items.filter((d) => d.status === "COMPLETED").map((d) => d.id),
    );
    expect((await list("", bob)).items).toEqual([]);
  });

  it("filters archived detections by batch_id, alone and with status", async () => {
    const inJob = [
      await create({ batch: "job-7" }),
      await create({ batch: "job-7" }),
      await create({ batch: "job-7" }),
    ];
    const other = await create({ batch: "job-8" });
    await finish(inJob[0]!);
    await finish(inJob[1]!, "Failed");
    await finish(other);
    const before = (await list("?batch_id=job-7")).items;
    await archive(inJob[0]!);
    await archive(inJob[1]!);
    await archive(other);
    expect((await list("?batch_id=job-7")).items).toEqual(before);
    expect((await list("?batch_id=job-7&status=FAILED")).items.map((d) => d.id)).toEqual([inJob[1]]);
    expect((await list("?batch_id=job-7&status=QUEUED")).items.map((d) => d.id)).toEqual([inJob[2]]);
    expect((await list("?batch_id=job-8")).items.map((d) => d.id)).toEqual([other]);
  });

  it("a detection both archived and still a resource (a pass cut short) is listed once; GET reads the resource", async () => {
    const a = await create();
    const b = await create();
    await finish(a);
    await finish(b);
    const before = (await list()).items;
    await archive(a, "record");
    await archive(b, "finalizer");
    expect(await isInArchive(h.deps.objects, h.deps.bucket, "alice", a)).toBe(true);
    expect((await list()).items).toEqual(before);
    expect((await list("?limit=1")).next_cursor).not.toBeNull();
    expect((await get(a)).body).toEqual(before.find((d) => d.id === a));
  });

  it("DELETE of an archived detection removes its files and record at once: 404 from then on", async () => {
    const id = await create();
    await finish(id);
    await archive(id);
    const files = async () => {
      const out: string[] = [];
      for (const p of [keys.documentPrefix(id), keys.runPrefix(id)])
        for await (const o of h.deps.objects.list(h.deps.bucket, p)) out.push(o.key);
      return out;
    };
    expect(await files()).toContain(archiveKeys.verdict(id));
    // Remembered in the tenant memory (issue 23): the DELETE forgets it too.
    await h.deps.memory?.remember("alice-tenant", memoryEntry(id));
    expect(await h.deps.memory?.has(id)).toBe(true);
    expect((await call(h, "DELETE", `/v1/detection/${id}`, { token: bob })).status).toBe(404);
    expect(await h.deps.memory?.has(id)).toBe(true);
    const r = await call(h, "DELETE", `/v1/detection/${id}`, { token: alice });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id, deleted: true });
    expect((await get(id)).status).toBe(404);
    expect((await list()).items).toEqual([]);
    expect((await list("?status=COMPLETED")).items).toEqual([]);
    expect(await files()).toEqual([]);
    expect(await isInArchive(h.deps.objects, h.deps.bucket, "alice", id)).toBe(false);
    expect(await h.deps.memory?.has(id)).toBe(false);
    const memoryLeft: string[] = [];
    for await (const o of h.deps.objects.list(h.deps.bucket, "memory/")) memoryLeft.push(o.key);
    expect(memoryLeft).toEqual([]);
    expect((await call(h, "DELETE", `/v1/detection/${id}`, { token: alice })).status).toBe(404);
  });

  it("DELETE of a resource whose archive pass was cut short removes the record too: nothing comes back", async () => {
    const a = await create();
    const b = await create();
    await finish(a);
    await finish(b);
    await archive(a, "record"); // record written, finalizer still on
    await archive(b, "finalizer"); // record written, finalizer off: a DELETE deletes the resource at once
    for (const id of [a, b]) {
      expect((await call(h, "DELETE", `/v1/detection/${id}`, { token: alice })).status).toBe(200);
      expect((await get(id)).status).toBe(404);
      expect(await isInArchive(h.deps.objects, h.deps.bucket, "alice", id)).toBe(false);
    }
    expect((await h.store.get(a))?.metadata.finalizers).toEqual([CLEANUP_FINALIZER]);
    expect(await h.store.get(b)).toBeUndefined();
    expect((await list()).items).toEqual([]);
  });

  it("DELETE forgets the memory entry of a resource gone at once; a finalizer's resource keeps it for the finalizer", async () => {
    // The operator remembers a terminal detection and forgets it in its finalizer, one reconcile at a time:
    // a DELETE that forgot a live detection could run between remember's writes and leave markers behind.
    const live = await create();
    const cut = await create();
    await finish(live);
    await finish(cut);
    await archive(cut, "finalizer"); // remembered, record written, finalizer off: the DELETE removes it at once
    for (const id of [live, cut]) await h.deps.memory?.remember("alice-tenant", memoryEntry(id));
    for (const id of [live, cut])
      expect((await call(h, "DELETE", `/v1/detection/${id}`, { token: alice })).status).toBe(200);
    expect((await h.store.get(live))?.metadata.deletionTimestamp).toBeDefined();
    expect(await h.deps.memory?.has(live)).toBe(true);
    expect(await h.store.get(cut)).toBeUndefined();
    expect(await h.deps.memory?.has(cut)).toBe(false);
  });

  it("an upload whose detection was archived still cannot start a second detection (422 upload_used)", async () => {
    const up = await call(h, "POST", "/v1/uploads", { token: alice, body: {} });
    const url = new URL(up.body.upload_url as string);
    const put = await h.app.request(`${url.pathname}${url.search}`, {
      method: "PUT",
      body: Buffer.from("%PDF-1.7\n%%EOF\n"),
    });
    expect(put.status).toBe(200);
    const first = await call(h, "POST", "/v1/detection", {
      token: alice,
      body: { upload_id: up.body.upload_id, doc_type: "invoice", region: "US" },
    });
    expect(first.status).toBe(202);
    await finish(first.body.id);
    await archive(first.body.id);
    const second = await call(h, "POST", "/v1/detection", {
      token: alice,
      body: { upload_id: up.body.upload_id, doc_type: "invoice", region: "US" },
    });
    expect(second.status).toBe(422);
    expect(second.body.detail[0]).toMatchObject({
      type: "upload_used",
      msg: expect.stringContaining(first.body.id),
    });
  });

  describe("a damaged archived object answers what it is, never a bare 500 or a stack", () => {
    /** Error lines the API logs (the operators' side of a damaged object). */
    function captureErrors(): { msg: string; key?: string; problem?: string }[] {
      const lines: { msg: string; key?: string; problem?: string }[] = [];
      h.deps.log = pino(
        { level: "error" },
        { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) },
      );
      return lines;
    }
    const noStack = (body: unknown) =>
      expect(JSON.stringify(body)).not.toMatch(/\bat .*\.(ts|js):\d+|Error:|SyntaxError/);

    it("a damaged verdict: 200 with status, score and the durable fields, verdict null (as once it is no longer available); the operators are told", async () => {
      const id = await create();
      await finish(id);
      const before = await get(id);
      await archive(id);
      await h.deps.objects.put(h.deps.bucket, archiveKeys.verdict(id), "{ this is not json");
      const errors = captureErrors();
      const r = await get(id);
      expect(r.status).toBe(200);
      noStack(r.body);
      expect(r.body).toEqual({ ...before.body, verdict: null });
      expect(r.body).toMatchObject({ status: "COMPLETED", score: 23, billable: true });
      // The listing shows it the same way instead of failing the page.
      const listed = (await list()).items.find((d) => d.id === id);
      expect(listed).toEqual(r.body);
      expect(errors.map((e) => [e.msg, e.key])).toEqual([
        ["an archived verdict is damaged; the detection reads with verdict null", archiveKeys.verdict(id)],
        [
          "an archived verdict is damaged; the detection is listed with verdict null",
          archiveKeys.verdict(id),
        ],
      ]);
      // A verdict of the wrong shape is damaged too (not a verdict to show).
      await h.deps.objects.put(
        h.deps.bucket,
        archiveKeys.verdict(id),
        JSON.stringify({ fraudScore: "high" }),
      );
      expect(await get(id)).toMatchObject({ status: 200, body: { verdict: null, score: 23 } });
    });

    it("a damaged record: 500 saying the stored record is damaged and that DELETE still works, not 404; DELETE removes it", async () => {
      const keep = await create();
      const id = await create();
      await finish(keep);
      await finish(id);
      await archive(keep);
      await archive(id);
      const recordKey = archiveKeys.record("alice", id);
      await h.deps.objects.put(h.deps.bucket, recordKey, '{"version":1,"archivedAt":');
      const errors = captureErrors();
      const r = await get(id);
      expect(r.status).toBe(500);
      noStack(r.body);
      expect(r.body.detail).toMatch(
        new RegExp(
          `^The stored record of detection ${id} is damaged and cannot be read; the service's operators have been told \\(request [0-9a-f-]+\\)\\. DELETE /v1/detection/${id} still removes it and its files\\.$`,
        ),
      );
      expect(errors.find((e) => e.key === recordKey)?.problem).toBe("is not valid JSON");
      // Another client learns nothing: its folder holds no such record.
      expect((await get(id, bob)).status).toBe(404);
      // The listing leaves it out (logged) and still lists the rest.
      expect((await list()).items.map((d) => d.id)).toEqual([keep]);
      expect((await call(h, "DELETE", `/v1/detection/${id}`, { token: bob })).status).toBe(404);
      const del = await call(h, "DELETE", `/v1/detection/${id}`, { token: alice });
      expect(del).toMatchObject({ status: 200, body: { id, deleted: true } });
      expect(await isInArchive(h.deps.objects, h.deps.bucket, "alice", id)).toBe(false);
      for await (const o of h.deps.objects.list(h.deps.bucket, keys.runPrefix(id)))
        throw new Error(`left: ${o.key}`);
      expect((await get(id)).status).toBe(404);
    });
  });
});
