/**
 * `npm run bench`: figures for the standalone service, printed as a table; asserts nothing.
 * - turnaround of one detection at a time (create → COMPLETED as seen by polling), p50/p95;
 * - throughput: a burst of detections submitted at once, detections per minute until all are terminal;
 * - GET /v1/detection/{id} requests/s next to a bare node:http server answering the same JSON, same run;
 * - each step process's start cost (bench/step-start.ts);
 * - what the reviewer's evidence (page images) adds to the check step: a 10-page statement with 3 flagged
 *   pages, and a 200-page one with 3 flagged pages (bench/ten-page.ts);
 * - the check step on a scanned statement, 1 page (JPEG) and 3 pages (image-only PDF): time per page, wall
 *   and CPU, and the OCR pass's share of it (bench/ten-page.ts, issue 21: target ≤ 3 s per page on 2 cores).
 * - what a tenant policy adds to a detection's analysis (bench/policy.ts; issue 26, target ≤ 5 ms p95).
 * The service runs as `node dist/bin/docverify.js standalone` (npm run bench builds first).
 */
import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { Agent, request } from "undici";
import { CLIENTS, startFileServer, startService } from "../e2e/harness.js";
import { makeDocument } from "../fixtures/documents.js";
import { idPhotoCheckMs } from "./id-photo.js";
import { measureStepStart } from "./step-start.js";
import { evidenceCost, scannedCheckStep } from "./ten-page.js";

const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 30);
const BURST = Number(process.env.BENCH_BURST ?? 120);
const GET_SECONDS = Number(process.env.BENCH_GET_SECONDS ?? 5);
const CONNECTIONS = 50;

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function load(
  url: string,
  headers: Record<string, string>,
  seconds: number,
): Promise<{ rps: number; errors: number }> {
  const dispatcher = new Agent({ connections: CONNECTIONS, pipelining: 1 });
  let done = 0;
  let errors = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < until) {
        const r = await request(url, { headers, dispatcher });
        await r.body.text();
        if (r.statusCode === 200) done++;
        else errors++;
      }
    }),
  );
  await dispatcher.close();
  return { rps: done / seconds, errors };
}

async function main() {
  const pdf = await makeDocument({ seed: 42, docType: "bank_statement", region: "GB", pages: 3 });
  const files = await startFileServer({ "/statement.pdf": { body: pdf } });
  const svc = await startService({
    env: {
      DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true",
      DOCVERIFY_ALLOWED_SOURCE_PORTS: String(files.port),
      DOCVERIFY_LOG_LEVEL: "error",
    },
  });
  const body = { source_url: files.url("/statement.pdf"), doc_type: "bank_statement", region: "GB" };
  const rows: [string, string][] = [];
  try {
    // Warm up (worker processes, module caches).
    for (let i = 0; i < 3; i++) {
      const c = await svc.create(CLIENTS.full, body);
      await svc.waitTerminal(CLIENTS.full, c.body.id);
    }

    const turnaround: number[] = [];
    let lastId = "";
    for (let i = 0; i < SEQUENTIAL; i++) {
      const t0 = performance.now();
      const c = await svc.create(CLIENTS.full, body);
      let d: { status: string };
      for (;;) {
        d = (await svc.call("GET", `/v1/detection/${c.body.id}`, { client: CLIENTS.full })).body;
        if (d.status === "COMPLETED" || d.status === "FAILED") break;
        await new Promise((r) => setTimeout(r, 20));
      }
      if (d.status !== "COMPLETED") throw new Error(`bench detection ${c.body.id} ended ${d.status}`);
      turnaround.push(performance.now() - t0);
      lastId = c.body.id;
    }
    turnaround.sort((a, b) => a - b);
    rows.push([
      `turnaround p50 (3-page PDF, one at a time, n=${SEQUENTIAL})`,
      `${pct(turnaround, 50).toFixed(0)} ms`,
    ]);
    rows.push(["turnaround p95", `${pct(turnaround, 95).toFixed(0)} ms`]);

    const t0 = performance.now();
    const ids = await Promise.all(
      Array.from({ length: BURST }, async () => (await svc.create(CLIENTS.full, body)).body.id as string),
    );
    const results = await Promise.all(ids.map((id) => svc.waitTerminal(CLIENTS.full, id, 600_000)));
    const seconds = (performance.now() - t0) / 1000;
    const ok = results.filter((d) => d.status === "COMPLETED").length;
    rows.push([
      `throughput (burst of ${BURST})`,
      `${((BURST / seconds) * 60).toFixed(0)} detections/min (${ok}/${BURST} completed in ${seconds.toFixed(1)} s)`,
    ]);

    const token = await svc.token(CLIENTS.full);
    const detailJson = JSON.stringify(
      (await svc.call("GET", `/v1/detection/${lastId}`, { client: CLIENTS.full })).body,
    );
    // The bare server runs in its own process, like the service, so both share the machine alike.
    const bare = spawn(
      process.execPath,
      [
        "-e",
        `const body = process.env.BODY;
require("node:http").createServer((q, r) => { r.writeHead(200, { "content-type": "application/json" }); r.end(body); })
  .listen(0, "127.0.0.1", function () { process.stdout.write(this.address().port + "\\n"); });`,
      ],
      { env: { ...process.env, BODY: detailJson }, stdio: ["ignore", "pipe", "inherit"] },
    );
    const barePort = await new Promise<number>((resolve) =>
      bare.stdout!.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    const bareRes = await load(`http://127.0.0.1:${barePort}/`, {}, GET_SECONDS);
    const apiRes = await load(
      `${svc.url}/v1/detection/${lastId}`,
      { authorization: `Bearer ${token}` },
      GET_SECONDS,
    );
    bare.kill();
    rows.push([
      `GET /v1/detection/{id} (${CONNECTIONS} connections, ${GET_SECONDS} s)`,
      `${apiRes.rps.toFixed(0)} req/s (${apiRes.errors} errors)`,
    ]);
    rows.push(["bare node:http, same JSON, same run", `${bareRes.rps.toFixed(0)} req/s`]);
    rows.push(["GET vs bare node:http", `${((apiRes.rps / bareRes.rps) * 100).toFixed(0)} %`]);
  } finally {
    await svc.dispose();
    await files.close();
  }
  for (const s of measureStepStart(path.resolve(import.meta.dirname, ".."))) {
    rows.push([
      `step process start: ${s.step} (spawn to exit, median; peak RSS)`,
      `${s.ms} ms, ${s.rssMb} MB`,
    ]);
  }
  for (const [pages, flagged] of [
    [10, [2, 5, 8]],
    [200, [17, 60, 95]],
  ] as const) {
    const e = await evidenceCost(pages, [...flagged], pages > 10 ? 3 : 5);
    rows.push([
      `check step, ${pages}-page statement, pages ${flagged.join(", ")} flagged: without → with evidence (medians, runs alternating)`,
      `${e.withoutMs} ms → ${e.withMs} ms (${e.withMs >= e.withoutMs ? "+" : ""}${e.withMs - e.withoutMs} ms; ${e.images} images, ${(e.bytes / 1024).toFixed(0)} KiB; the step's own rendering time ${e.renderMs} ms)`,
    ]);
  }
  for (const pages of [1, 3]) {
    const s = await scannedCheckStep(pages, pages === 1 ? 3 : 2);
    rows.push([
      `check step, scanned statement, ${pages} page${pages > 1 ? "s" : ""} (${s.kind}; medians of ${s.runs} cold runs)`,
      `${(s.wallMs / pages / 1000).toFixed(1)} s per page wall, ${(s.cpuMs / pages / 1000).toFixed(1)} s per page CPU (whole step ${(s.wallMs / 1000).toFixed(1)} s; OCR pass ${(s.ocrMs / 1000).toFixed(1)} s, OCR review ${(s.reviewMs / 1000).toFixed(1)} s)`,
    ]);
  }
  const id = await idPhotoCheckMs();
  rows.push([
    `id.mrz + id.barcode on a phone photo of a passport page (${id.width} × ${id.height} JPEG; median of 3, OCR start included)`,
    `${id.ms} ms wall, ${id.cpuMs} ms CPU (first run, cold process: ${id.firstMs} ms wall, ${id.firstCpuMs} ms CPU)${id.mrzRead ? "" : " (the MRZ was not read)"}`,
  ]);
  const w = Math.max(...rows.map((r) => r[0].length));
  process.stdout.write(`\ndocverify bench — ${os.cpus().length} cores, Node ${process.version}\n\n`);
  process.stdout.write(`| ${"measure".padEnd(w)} | figure |\n|${"-".repeat(w + 2)}|--------|\n`);
  for (const [k, v] of rows) process.stdout.write(`| ${k.padEnd(w)} | ${v} |\n`);
  // What a tenant policy adds per detection (bench/policy.ts prints its own lines; issue 26).
  process.stdout.write("\n");
  await import("./policy.js");
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : err}\n`);
  process.exit(1);
});
