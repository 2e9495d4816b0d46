/**
 * Batch jobs (POST /jobs) on the standalone service as a black box: documents are placed in a bucket of the
 * standalone object store (folders of <data dir>/objects/, filled with `docverify put-folder` and by
 * writing files directly), a job verifies them all and writes its report to another bucket.
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_DOC_TYPES, makeDocument, makeRandomBytes } from "../fixtures/documents.js";
import { CLIENTS, ENTRY, ROOT, type Service, startService, type TestClient } from "./harness.js";

const INBOX = "loan-inbox";
const REPORTS = "loan-reports";
const REGIONS = ["US", "GB", "DE"] as const;

interface JobView {
  job_id: string;
  status: string;
  failure_code: string | null;
  failure_message: string | null;
  created_at: string;
  completed_at: string | null;
  counts: { total: number; queued: number; running: number; completed: number; failed: number };
  report: { bucket: string; results_key: string; summary_key: string } | null;
}
/** The DetectionDetail fields this suite reads. */
interface Detail {
  id: string;
  status: string;
  batch_id: string | null;
  submitted_by: string | null;
  failure_code: string | null;
  billable: boolean;
  score: number | null;
  s3_key: string | null;
}
interface Summary {
  job_id: string;
  objects: { key: string; detection_id: string; status: string }[];
}

let svc: Service;

beforeAll(async () => {
  // Two unfinished detections per job at most, so fan-out spans many passes (and a kill lands inside it).
  svc = await startService({ env: { DOCVERIFY_JOB_MAX_IN_FLIGHT: "2" } });
});
afterAll(async () => {
  await svc?.dispose();
});

/** 25 generated documents of every fixture type and region, named like a back office would. */
async function documents(seedBase: number): Promise<{ name: string; bytes: Uint8Array }[]> {
  const out: { name: string; bytes: Uint8Array }[] = [];
  for (let i = 0; i < 25; i++) {
    const docType = FIXTURE_DOC_TYPES[i % FIXTURE_DOC_TYPES.length]!;
    const bytes = await makeDocument({ seed: seedBase + i, docType, region: REGIONS[i % REGIONS.length]! });
    out.push({ name: `${String(i).padStart(2, "0")}-${docType}.pdf`, bytes });
  }
  return out;
}

/** Writes objects straight into the standalone bucket folder. */
async function putObjects(bucket: string, objects: Record<string, Uint8Array | string>): Promise<void> {
  for (const [key, body] of Object.entries(objects)) {
    const file = path.join(svc.dataDir, "objects", bucket, ...key.split("/"));
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, body);
  }
}

/** `docverify put-folder <dir> <bucket/prefix>` as a user runs it. */
function putFolder(dir: string, target: string): string {
  const r = spawnSync(process.execPath, [ENTRY, "put-folder", dir, target], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", DOCVERIFY_DATA_DIR: svc.dataDir },
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`put-folder failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

async function waitJob(client: TestClient, id: string, timeoutMs = 240_000): Promise<JobView> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await svc.call("GET", `/jobs/${id}`, { client });
    if (r.status !== 200) throw new Error(`GET /jobs/${id}: ${r.status} ${JSON.stringify(r.body)}`);
    if (r.body.status === "COMPLETED" || r.body.status === "FAILED") return r.body;
    if (Date.now() > until)
      throw new Error(
        `job ${id} still ${JSON.stringify(r.body)} after ${timeoutMs} ms\n${svc.log.slice(-4000)}`,
      );
    await new Promise((res) => setTimeout(res, 250));
  }
}

/** Every detection of a batch, through the list endpoint's pages. */
async function batchDetections(client: TestClient, batchId: string): Promise<Detail[]> {
  const items: Detail[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ batch_id: batchId, limit: "10" });
    if (cursor) q.set("cursor", cursor);
    const r = await svc.call("GET", `/v1/detection?${q}`, { client });
    expect(r.status).toBe(200);
    items.push(...r.body.items);
    cursor = r.body.next_cursor;
  } while (cursor);
  return items;
}

async function readReport(
  report: NonNullable<JobView["report"]>,
): Promise<{ lines: Detail[]; summary: Summary }> {
  const file = (key: string) => path.join(svc.dataDir, "objects", report.bucket, ...key.split("/"));
  const lines = (await readFile(file(report.results_key), "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Detail);
  const summary = JSON.parse(await readFile(file(report.summary_key), "utf8")) as Summary;
  return { lines, summary };
}

/** What must hold for a completed job over `keys`: one detection and one report line per key, no more. */
async function expectCompleteReport(jobId: string, job: JobView, keys: string[], unsupported: string[]) {
  expect(job.status, JSON.stringify(job)).toBe("COMPLETED");
  expect(job.counts).toEqual({
    total: keys.length,
    queued: 0,
    running: 0,
    completed: keys.length - unsupported.length,
    failed: unsupported.length,
  });
  expect(job.report).toEqual({
    bucket: REPORTS,
    results_key: `daily/${jobId}/results.jsonl`,
    summary_key: `daily/${jobId}/summary.json`,
  });
  const { lines, summary } = await readReport(job.report!);
  expect(lines).toHaveLength(keys.length);
  expect(summary.objects.map((o) => o.key).sort()).toEqual([...keys].sort());

  const listed = await batchDetections(CLIENTS.batch, jobId);
  expect(listed).toHaveLength(keys.length);
  expect(new Set(listed.map((d) => d.id)).size).toBe(keys.length);
  const byId = new Map(listed.map((d) => [d.id, d]));
  for (const line of lines) {
    const d = byId.get(line.id);
    expect(d, `report line ${line.id} is a detection of the job`).toBeDefined();
    expect(line.status).toBe(d?.status);
    expect(line.batch_id).toBe(jobId);
    expect(line.submitted_by).toBe(CLIENTS.batch.client_id);
  }
  for (const key of unsupported) {
    const entry = summary.objects.find((o) => o.key === key);
    const line = lines.find((l) => l.id === entry?.detection_id);
    expect(line).toMatchObject({
      status: "FAILED",
      failure_code: "unsupported_content_type",
      billable: false,
    });
  }
  for (const line of lines.filter((l) => l.status === "COMPLETED")) {
    expect(line.score).toEqual(expect.any(Number));
    expect(line.s3_key).toEqual(expect.any(String));
  }
  expect(summary).toMatchObject({
    job_id: jobId,
    status: "COMPLETED",
    counts: { total: keys.length, completed: keys.length - unsupported.length, failed: unsupported.length },
  });
  return { lines, summary, listed };
}

const jobBody = (prefixes: string[], extra: Record<string, unknown> = {}) => ({
  connector: { type: "s3", bucket_name: INBOX, prefixes },
  output: { type: "s3", bucket_name: REPORTS, prefix: "daily/" },
  doc_type: "other",
  region: "gb",
  ...extra,
});

describe("a job over two prefixes of a bucket", () => {
  it("verifies every document, writes a report matching its detections, and lists them by batch_id", async () => {
    const docs = await documents(100);
    // First prefix through the put-folder command, second written straight into the bucket folder.
    const folder = await mkdtemp(path.join(os.tmpdir(), "docverify-e2e-folder-"));
    for (const d of docs.slice(0, 13)) await writeFile(path.join(folder, d.name), d.bytes);
    await writeFile(path.join(folder, "zz-noise.bin"), makeRandomBytes(9, 2048));
    expect(putFolder(folder, `${INBOX}/applications/2026-11-02`)).toMatch(/Copied 14 files/);
    await rm(folder, { recursive: true, force: true });
    await putObjects(INBOX, Object.fromEntries(docs.slice(13).map((d) => [`scans/${d.name}`, d.bytes])));
    await putObjects(INBOX, { "elsewhere/not-in-the-job.pdf": docs[0]!.bytes });
    const keys = [
      ...docs.slice(0, 13).map((d) => `applications/2026-11-02/${d.name}`),
      "applications/2026-11-02/zz-noise.bin",
      ...docs.slice(13).map((d) => `scans/${d.name}`),
    ];

    const created = await svc.call("POST", "/jobs", {
      client: CLIENTS.batch,
      json: jobBody(["applications/2026-11-02/", "scans/"]),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    expect(created.body).toEqual({ job_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: "QUEUED" });
    const jobId = created.body.job_id as string;

    const job = await waitJob(CLIENTS.batch, jobId);
    const { listed } = await expectCompleteReport(jobId, job, keys, ["applications/2026-11-02/zz-noise.bin"]);
    expect(job.completed_at).toEqual(expect.any(String));
    expect(Date.parse(job.completed_at ?? "")).toBeGreaterThanOrEqual(Date.parse(job.created_at));
    for (const d of listed) expect(d.batch_id).toBe(jobId);
  }, 300_000);
});

describe("a restart in the middle of fan-out", () => {
  it("loses and duplicates nothing", async () => {
    const docs = await documents(300);
    const objects: Record<string, Uint8Array> = Object.fromEntries(
      docs.map((d) => [`restart/${d.name}`, d.bytes]),
    );
    objects["restart/zz-noise.dat"] = makeRandomBytes(11, 4096);
    await putObjects(INBOX, objects);

    const created = await svc.call("POST", "/jobs", { client: CLIENTS.batch, json: jobBody(["restart/"]) });
    expect(created.status).toBe(202);
    const jobId = created.body.job_id as string;

    // Kill -9 once some detections exist and the listing is not finished (fewer than all exist).
    const until = Date.now() + 60_000;
    for (;;) {
      const r = await svc.call("GET", `/jobs/${jobId}`, { client: CLIENTS.batch });
      const total = r.body.counts.total as number;
      if (total >= 2 && total < 26) break;
      if (total >= 26 || Date.now() > until)
        throw new Error(`no fan-out in progress to interrupt: ${JSON.stringify(r.body)}`);
      await new Promise((res) => setTimeout(res, 20));
    }
    await svc.stop("SIGKILL");
    await svc.start();

    const job = await waitJob(CLIENTS.batch, jobId);
    await expectCompleteReport(jobId, job, Object.keys(objects), ["restart/zz-noise.dat"]);
  }, 300_000);
});

describe("force_error, buckets and ownership", () => {
  it("force_error fails the job at once with forced_error and creates no detections", async () => {
    const created = await svc.call("POST", "/jobs", {
      client: CLIENTS.batch,
      json: jobBody(["scans/"], { force_error: true }),
    });
    expect(created.status).toBe(202);
    const job = await waitJob(CLIENTS.batch, created.body.job_id, 30_000);
    expect(job).toMatchObject({
      status: "FAILED",
      failure_code: "forced_error",
      failure_message: expect.stringContaining("force_error"),
      counts: { total: 0, queued: 0, running: 0, completed: 0, failed: 0 },
      report: null,
    });
    expect(job.completed_at).toEqual(expect.any(String));
    expect(await batchDetections(CLIENTS.batch, created.body.job_id)).toEqual([]);
  });

  it("a bucket outside the client's list is 403 naming it", async () => {
    const input = await svc.call("POST", "/jobs", {
      client: CLIENTS.batch,
      json: {
        ...jobBody(["a/"]),
        connector: { type: "s3", bucket_name: "treasury-private", prefixes: ["a/"] },
      },
    });
    expect(input.status).toBe(403);
    expect(input.body.detail).toContain("treasury-private");
    const noList = await svc.call("POST", "/jobs", { client: CLIENTS.full, json: jobBody(["a/"]) });
    expect(noList.status).toBe(403);
    expect(noList.body.detail).toContain(INBOX);
  });

  it("another client's job is 404", async () => {
    const created = await svc.call("POST", "/jobs", {
      client: CLIENTS.batch,
      json: jobBody(["scans/"], { force_error: true }),
    });
    expect(created.status).toBe(202);
    const other = await svc.call("GET", `/jobs/${created.body.job_id}`, { client: CLIENTS.batch2 });
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ detail: "Job not found" });
    expect((await svc.call("GET", `/jobs/${created.body.job_id}`, { client: CLIENTS.batch })).status).toBe(
      200,
    );
  });
});
