/**
 * Bounded resources and the archive, end to end on a real kube-apiserver + etcd with the real operator,
 * api (its informer), step Pods (node player), Redis and S3 (s3rver):
 * - a 300-page PDF's detection completes with its status under the size guard, and a 300-page document's
 *   check results written the old way (every finding in the status) are refused by the guard;
 * - finished detections are archived out of etcd, and GET, list (pages, status and batch filters), the job,
 *   DELETE and retention answer exactly as they did before;
 * - kill -9 of the operator between "record written" and "resource deleted" (its delete permission is
 *   taken away so it stops exactly there) loses nothing and lists nothing twice.
 * Each phase is an operator restart with other settings, so every wait is for an event.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { archiveKeys, isInArchive } from "../../core/archive.js";
import { loadConfig } from "../../core/config.js";
import {
  type CheckStepResult,
  type Detection,
  DETECTION_KIND,
  type DetectionStatus,
  keys,
} from "../../core/detection.js";
import { isStoreError, systemClock } from "../../core/ports.js";
import { API_GROUP_VERSION, LABELS } from "../../core/resource.js";
import { DEFAULT_MAX_RESOURCE_BYTES, resourceBytes } from "../../core/resource-size.js";
import { makeDocument } from "../../fixtures/documents.js";
import { attemptStarted, attemptSucceeded, running } from "../../operator/detection-status.js";
import { createLocalObjectStore } from "../../platform/local/object-store.js";
import { apiRequest } from "./api-request.js";
import {
  expectOk,
  missingPrerequisites,
  type RuntimeWorld,
  startRuntimeWorld,
  until,
} from "./runtime-world.js";
import { canI, waitForPermission } from "./test-cluster.js";

const run = promisify(execFile);
const NS = "docverify-archive";
const SCRATCH = "docverify-archive-scratch";
const INBOX = "archive-inbox";
const REPORTS = "archive-reports";
const CLIENT = {
  client_id: "acme-bank",
  client_secret: "s3cret-acme-0123456789",
  scopes: ["DocumentVerification:*"],
  buckets: [INBOX, REPORTS],
};
const OTHER = {
  client_id: "other-bank",
  client_secret: "s3cret-other-0123456789",
  scopes: ["DocumentVerification:*"],
};
const MANUAL = "/usr/share/doc/libtasn1-doc/libtasn1.pdf";

const missing = missingPrerequisites();
if (!existsSync(MANUAL)) missing.push(`${MANUAL} is missing; run \`npm run test:setup\``);
const title = missing.length
  ? `bounded resources and the archive on a real kube-apiserver: SKIPPED — ${missing.join("; ")}`
  : "bounded resources and the archive on a real kube-apiserver";

/** `pages` pages made of copies of `file` with qpdf (a real tool, as the fixtures use). */
async function concatenated(file: string, filePages: number, pages: number, out: string): Promise<Buffer> {
  const args = ["--empty", "--pages"];
  for (let left = pages; left > 0; left -= filePages)
    args.push(file, left >= filePages ? "1-z" : `1-${left}`);
  await run("qpdf", [...args, "--", out]);
  return readFile(out);
}

/**
 * `file` with 24 short references per page, each hidden under a white box at a place that differs from
 * page to page: on 300 pages, thousands of genuine findings (layout.overlay's text_covered), as a document
 * edited page by page gives.
 */
async function coveredOnEveryPage(file: string, out: string): Promise<void> {
  const { PDFDocument, StandardFonts, rgb } = await import("pdf-lib");
  const { writeFile } = await import("node:fs/promises");
  const doc = await PDFDocument.load(await readFile(file), { updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const [i, page] of doc.getPages().entries()) {
    for (let k = 0; k < 24; k++) {
      const x = 60 + (k % 3) * 170 + ((i * 13) % 40);
      const y = 120 + Math.floor(k / 3) * 75 + (i % 7) * 3;
      page.drawText(`Ref ${String(i * 24 + k).padStart(5, "0")}`, { x, y, size: 9, font });
      page.drawRectangle({ x: x - 2, y: y - 3, width: 52, height: 13, color: rgb(1, 1, 1) });
    }
  }
  await writeFile(out, await doc.save({ useObjectStreams: false }));
}

describe.skipIf(missing.length > 0)(title, () => {
  let w: RuntimeWorld;
  let dir: string;
  let statement300: Buffer;
  let manual300: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "docverify-archive-e2e-"));
    const hundred = path.join(dir, "statement-100.pdf");
    const { writeFile } = await import("node:fs/promises");
    await writeFile(
      hundred,
      await makeDocument({ seed: 300, docType: "bank_statement", region: "GB", pages: 100 }),
    );
    statement300 = await concatenated(hundred, 100, 300, path.join(dir, "statement-300.pdf"));
    manual300 = path.join(dir, "manual-300.pdf");
    await concatenated(MANUAL, 36, 300, path.join(dir, "manual-300-plain.pdf"));
    await coveredOnEveryPage(path.join(dir, "manual-300-plain.pdf"), manual300);
    w = await startRuntimeWorld({
      namespace: NS,
      extraNamespaces: [SCRATCH],
      documents: {
        "/invoice.pdf": Buffer.from(await makeDocument({ seed: 71, docType: "invoice", region: "US" })),
        "/statement-300.pdf": statement300,
        "/note.txt": { body: Buffer.from("a note, not a document"), type: "text/plain" },
      },
    });
    await w.startApi([CLIENT, OTHER]);
  }, 240_000);

  afterAll(async () => {
    await w?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it("the size guard: a 300-page document's status with every finding is refused; the bounded one is written", async () => {
    // The real check step on a 300-page manual with a value covered 24 times a page (thousands of
    // findings), as a step Pod runs it.
    const { runCheckStep } = await import("../../checks/step.js");
    const { restoreNativeJson } = await import("../../bin/native-json.js");
    restoreNativeJson();
    const objects = createLocalObjectStore(path.join(dir, "objects"));
    const config = loadConfig({ DOCVERIFY_DATA_DIR: dir, DOCVERIFY_LOG_LEVEL: "silent" });
    await objects.ensureBucket(config.bucket);
    const name = "det-01k0000000000000000000m300";
    const bytes = await readFile(manual300);
    const document = {
      filename: "manual-300.pdf",
      contentType: "application/pdf",
      sizeBytes: bytes.length,
      key: keys.document(name, "manual-300.pdf"),
      sha256: createHash("sha256").update(bytes).digest("hex"),
    };
    await objects.put(config.bucket, document.key, bytes);
    const spec = {
      source: { url: "https://example.com/manual-300.pdf" },
      docType: "other" as const,
      region: "US",
      submittedBy: "acme-bank",
      sample: false,
      priority: "interactive" as const,
    };
    const check: CheckStepResult = await runCheckStep(
      { detection: name, step: "check", attempt: 1, spec, document },
      { objects, bucket: config.bucket, config, log: pino({ level: "silent" }), clock: systemClock },
    );
    const findings = check.checks.reduce((n, c) => n + c.findings.length, 0);
    expect(findings).toBeGreaterThan(1000);

    const store = w.adminStore(SCRATCH);
    const created = await store.create({
      apiVersion: API_GROUP_VERSION,
      kind: DETECTION_KIND,
      metadata: { name, labels: { [LABELS.client]: "acme-bank" } },
      spec,
    });
    const settings = { stepMaxAttempts: 3, retentionSeconds: 86_400 };
    let status: DetectionStatus = running({}, created, new Date());
    status = attemptStarted(status, "prepare", 1, `${name}-prepare-1`, new Date()).status;
    status = attemptSucceeded(status, { step: "prepare", document }, new Date(), settings).status;
    status = attemptStarted(status, "check", 1, `${name}-check-1`, new Date()).status;
    status = attemptSucceeded(status, check, new Date(), settings).status;

    // Before: the status held every check result in full.
    const unbounded = { ...created, status: { ...status, checks: check.checks } } as unknown as Detection;
    const refused = await store.updateStatus(unbounded).catch((e: unknown) => e);
    expect(isStoreError(refused, "TooLarge"), String(refused)).toBe(true);
    expect((refused as Error).message).toMatch(/over the 524288-byte limit of one resource/);

    // Now: a summary per check, through the real apiserver.
    const written = await store.updateStatus({ ...created, status });
    const back = (await store.get(name))!;
    expect(back.status?.checks).toEqual(status.checks);
    expect(back.status?.checks?.reduce((n, c) => n + c.findingCount, 0)).toBe(findings);
    const size = resourceBytes(back);
    expect(size).toBeLessThan(DEFAULT_MAX_RESOURCE_BYTES);
    process.stdout.write(
      `300-page manual (${findings} findings): Detection after the check step ${resourceBytes(unbounded)} bytes with every finding (refused), ${size} bytes bounded (as stored, managedFields included; written as ${resourceBytes(written)})\n`,
    );
  }, 180_000);

  // The detections of the archive phases.
  const ids: string[] = [];
  let jobId = "";
  let big = "";
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers
  type Snapshot = { details: any[]; pages: any[]; filters: Record<string, any>; job: any };

  async function snapshot(): Promise<Snapshot> {
    const all = [
      ...ids,
      ...(await w.call("GET", `/v1/detection?batch_id=${jobId}&limit=200`)).body.items.map(
        (d: { id: string }) => d.id,
      ),
    ];
    const details = [];
    for (const id of all) details.push((await w.call("GET", `/v1/detection/${id}`)).body);
    const pages = [];
    let cursor: string | null = null;
    do {
      const r: { body: { next_cursor: string | null } } = await w.call(
        "GET",
        `/v1/detection?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      pages.push(r.body);
      cursor = r.body.next_cursor;
    } while (cursor);
    const filters: Record<string, unknown> = {};
    for (const q of [
      "status=COMPLETED",
      "status=FAILED",
      "status=RUNNING",
      `batch_id=${jobId}`,
      `batch_id=${jobId}&status=FAILED`,
      `batch_id=${jobId}&status=COMPLETED&limit=1`,
    ])
      filters[q] = (await w.call("GET", `/v1/detection?${q}`)).body;
    filters.other = (await w.call("GET", "/v1/detection", undefined, OTHER)).body;
    return { details, pages, filters, job: (await w.call("GET", `/jobs/${jobId}`)).body };
  }

  const liveDetections = async () => (await w.adminStore(NS).list()).items;
  const operatorRole = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/docverify-operator`;
  async function operatorMayDelete(allowed: boolean): Promise<void> {
    const role = (
      await apiRequest<{ rules: { resources: string[]; verbs: string[] }[] }>(w.admin, "GET", operatorRole)
    ).body;
    for (const rule of role.rules) {
      if (!rule.resources.includes("detections") || !rule.verbs.includes("create")) continue;
      rule.verbs = allowed ? ["create", "delete"] : ["create"];
    }
    await expectOk("update the operator's Role", apiRequest(w.admin, "PUT", operatorRole, role));
    const attrs = { verb: "delete", resource: "detections", group: "docverify.io", namespace: NS };
    if (allowed) await waitForPermission(w.cluster.access("operator"), attrs);
    else
      await until(
        "the operator's delete permission to go",
        async () => !(await canI(w.cluster.access("operator"), attrs)),
      );
  }

  it("a 300-page PDF completes in the cluster with its status under the size guard", async () => {
    const op = await w.newOperator("op-keep", { DOCVERIFY_ARCHIVE_AFTER_SECONDS: "0" });
    await op.waitForLog(/is the leader/, 30_000);
    const created = await w.call("POST", "/v1/detection", {
      source_url: `${w.docBase}/statement-300.pdf`,
      doc_type: "bank_statement",
      region: "GB",
    });
    expect(created.status).toBe(202);
    big = created.body.id;
    ids.push(big);
    const done = await w.waitTerminal(big, 300_000);
    expect(done, JSON.stringify(done)).toMatchObject({
      status: "COMPLETED",
      size_bytes: statement300.length,
    });
    const stored = (await w.adminStore(NS).get(big))!;
    expect(stored.status?.checks?.length).toBeGreaterThan(5);
    expect(resourceBytes(stored)).toBeLessThan(DEFAULT_MAX_RESOURCE_BYTES);
    process.stdout.write(
      `300-page statement: Detection ${resourceBytes(stored)} bytes in etcd (guard ${DEFAULT_MAX_RESOURCE_BYTES})\n`,
    );
  }, 360_000);

  it("archived detections answer GET, list, filters and the job exactly as before; kill -9 between record and deletion loses and doubles nothing", async () => {
    // 1. Archiving off: detections and a batch job finish and stay in etcd.
    const objects = w.objects();
    for (const b of [INBOX, REPORTS]) await objects.ensureBucket(b);
    await objects.put(
      INBOX,
      "batch/01.pdf",
      Buffer.from(await makeDocument({ seed: 72, docType: "invoice", region: "US" })),
    );
    await objects.put(
      INBOX,
      "batch/02.pdf",
      Buffer.from(await makeDocument({ seed: 73, docType: "invoice", region: "GB" })),
    );
    await objects.put(INBOX, "batch/03.bin", Buffer.from("not a document"));
    for (const source of ["/invoice.pdf", "/note.txt", "/invoice.pdf"]) {
      const r = await w.call("POST", "/v1/detection", {
        source_url: `${w.docBase}${source}`,
        doc_type: "invoice",
        region: "US",
      });
      expect(r.status).toBe(202);
      ids.push(r.body.id);
    }
    const job = await w.call("POST", "/jobs", {
      connector: { type: "s3", bucket_name: INBOX, prefixes: ["batch/"] },
      output: { type: "s3", bucket_name: REPORTS, prefix: "out/" },
      doc_type: "invoice",
      region: "US",
    });
    expect(job.status, JSON.stringify(job.body)).toBe(202);
    jobId = job.body.job_id;
    for (const id of ids) await w.waitTerminal(id);
    await until(
      `job ${jobId} to finish`,
      async () => (await w.call("GET", `/jobs/${jobId}`)).body.status === "COMPLETED",
      180_000,
    );
    const before = await snapshot();
    expect(before.details).toHaveLength(7);
    expect(before.details.map((d) => d.status).sort()).toEqual([
      "COMPLETED",
      "COMPLETED",
      "COMPLETED",
      "COMPLETED",
      "COMPLETED",
      "FAILED",
      "FAILED",
    ]);
    expect(before.filters[`batch_id=${jobId}`].items).toHaveLength(3);
    expect(before.filters.other.items).toEqual([]);
    expect(await liveDetections()).toHaveLength(7);

    // 2. The operator may not delete Detections: an archiving operator writes every record, removes the
    // finalizers, and stops at the deletion. Then it is killed (-9).
    await operatorMayDelete(false);
    for (const o of w.operators) await o.stop();
    const stuck = await w.newOperator("op-stuck", { DOCVERIFY_ARCHIVE_AFTER_SECONDS: "1" });
    await stuck.waitForLog(/is the leader/, 30_000);
    await until(
      "every detection archived but not deleted",
      async () => {
        const live = await liveDetections();
        if (live.length !== 7 || live.some((d) => d.metadata.finalizers?.length)) return false;
        for (const d of live)
          if (!(await isInArchive(objects, "docverify", "acme-bank", d.metadata.name))) return false;
        return true;
      },
      120_000,
    );
    expect(await stuck.stop("SIGKILL")).toBeNull();
    // Both a resource and a record for every detection: each answers and lists once, as before.
    expect(await snapshot()).toEqual(before);

    // 3. The permission back, a new operator: the resources go; everything reads as before.
    await operatorMayDelete(true);
    const archiving = await w.newOperator("op-archive", { DOCVERIFY_ARCHIVE_AFTER_SECONDS: "1" });
    await archiving.waitForLog(/is the leader/, 30_000);
    await until("etcd to hold no Detection", async () => (await liveDetections()).length === 0, 120_000);
    expect(await snapshot()).toEqual(before);
    expect((await w.call("GET", `/v1/detection/${ids[1]}`, undefined, OTHER)).status).toBe(404);

    // 4. DELETE of an archived detection: 200, 404 from then on, its files and record gone.
    const gone = ids[3]!;
    const files = async () => {
      const out: string[] = [];
      for (const p of [keys.documentPrefix(gone), keys.runPrefix(gone)])
        for await (const o of objects.list("docverify", p)) out.push(o.key);
      return out;
    };
    expect(await files()).toContain(archiveKeys.verdict(gone));
    expect((await w.call("DELETE", `/v1/detection/${gone}`, undefined, OTHER)).status).toBe(404);
    const del = await w.call("DELETE", `/v1/detection/${gone}`);
    expect(del).toMatchObject({ status: 200, body: { id: gone, deleted: true } });
    expect((await w.call("GET", `/v1/detection/${gone}`)).status).toBe(404);
    expect(await files()).toEqual([]);
    expect(await isInArchive(objects, "docverify", "acme-bank", gone)).toBe(false);
    const listed = await w.call("GET", "/v1/detection?limit=200");
    expect(listed.body.items.map((d: { id: string }) => d.id)).not.toContain(gone);
    expect(listed.body.items).toHaveLength(6);

    // 5. Retention of 1 s: archived verdicts read null, scores and statuses stay, the files go.
    await archiving.stop();
    const pruning = await w.newOperator("op-prune", {
      DOCVERIFY_ARCHIVE_AFTER_SECONDS: "1",
      DOCVERIFY_RETENTION_SECONDS: "1",
      DOCVERIFY_ARCHIVE_SWEEP_SECONDS: "1",
    });
    await pruning.waitForLog(/is the leader/, 30_000);
    const first = before.details.find((d) => d.id === ids[0]);
    expect(first.verdict).not.toBeNull();
    const pruned = await until(
      "the archived verdict to be pruned",
      async () => {
        const b = (await w.call("GET", `/v1/detection/${ids[0]}`)).body;
        return b.verdict === null ? b : undefined;
      },
      60_000,
    );
    expect(pruned).toEqual({ ...first, verdict: null });
    await until(
      "the archived detections' files to go",
      async () => {
        for (const id of [ids[0]!, ids[1]!])
          for await (const _ of objects.list("docverify", keys.documentPrefix(id))) return false;
        return true;
      },
      60_000,
    );
  }, 600_000);
});
