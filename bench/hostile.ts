/**
 * `npm run bench:hostile`: each hostile-input case (e2e/hostile-cases.ts) submitted to one running standalone
 * service (`node dist/bin/docverify.js standalone`, default settings but the loopback source), one after the
 * other, then a normal document. Prints per case the time from creation to its terminal state, the peak RSS
 * of the service's process tree (the service, its warm workers and any step process) while the case ran,
 * the state it ended in and whether that is the expected one; then the tree's RSS at rest. Asserts nothing.
 * The goal (issue 13): every case within 60 s and under 2 GB on a 2-core machine.
 *
 * BENCH_HOSTILE_ENTRY=/path/to/other/dist/bin/docverify.js measures another build (e.g. main before the
 * budgets: `git archive main | tar -x -C /tmp/before`, link node_modules, `npx tsc -p tsconfig.build.json`).
 * BENCH_HOSTILE_CASES=a,b picks cases; BENCH_HOSTILE_GUARD_SECONDS (default 300) and
 * BENCH_HOSTILE_ABORT_MB (default 14000) stop a case that runs too long or grows too large (the detection
 * is deleted, which kills its step) so a build without budgets cannot take the machine down.
 * BENCH_HOSTILE_ENV='{"DOCVERIFY_WORKERS":"0"}' adds settings.
 */
import { readFileSync, readdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { makeDocument } from "../fixtures/documents.js";
import { CLIENTS, type Service, startService } from "../e2e/harness.js";
import { HOSTILE_CASES, type HostileCase, misbehave } from "../e2e/hostile-cases.js";

const ENTRY = process.env.BENCH_HOSTILE_ENTRY || undefined;
const GUARD_MS = Number(process.env.BENCH_HOSTILE_GUARD_SECONDS ?? 300) * 1000;
const ABORT_MB = Number(process.env.BENCH_HOSTILE_ABORT_MB ?? 14_000);
const PICK = process.env.BENCH_HOSTILE_CASES?.split(",").map((s) => s.trim());
const EXTRA_ENV = JSON.parse(process.env.BENCH_HOSTILE_ENV ?? "{}") as Record<string, string>;
const PAGE = 4096;
/** The service tree's RSS before the first case. */
let restBytes = 0;

/** RSS in bytes of `root` and every process below it (from /proc). */
export function treeRss(root: number): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ppid = Number(fields[1]);
      const pid = Number(name);
      const list = children.get(ppid) ?? [];
      list.push(pid);
      children.set(ppid, list);
      rss.set(pid, Number(fields[21]) * PAGE);
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    total += rss.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

interface Row {
  name: string;
  what: string;
  seconds: number;
  peakMb: number;
  state: string;
  expected: string;
  ok: boolean;
}

async function main(): Promise<void> {
  const cases = HOSTILE_CASES.filter((c) => !PICK || PICK.includes(c.name));
  const docs = new Map<string, { bytes: Uint8Array; type: string }>();
  for (const c of cases) {
    if (c.source.kind === "document")
      docs.set(`/${c.name}`, { bytes: await c.source.bytes(), type: c.source.contentType });
  }
  docs.set("/normal.pdf", {
    bytes: await makeDocument({ seed: 1399, docType: "invoice", region: "GB" }),
    type: "application/pdf",
  });
  const server = http.createServer((req, res) => {
    const c = cases.find((x) => `/${x.name}` === req.url);
    if (c && c.source.kind !== "document") return misbehave(c.source.kind, req, res);
    const doc = docs.get(req.url ?? "");
    if (!doc) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": doc.type, "content-length": doc.bytes.length }).end(doc.bytes);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  const svc = await startService({
    ...(ENTRY ? { entry: ENTRY } : {}),
    env: {
      DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true",
      DOCVERIFY_ALLOWED_SOURCE_PORTS: String(port),
      DOCVERIFY_LOG_LEVEL: "error",
      ...EXTRA_ENV,
    },
  });
  const pid = svc.proc!.pid!;
  restBytes = treeRss(pid);
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, treeRss(pid));
  }, 100);
  const rows: Row[] = [];
  try {
    const restMb = mb(treeRss(pid));
    process.stderr.write(`service up (tree RSS ${restMb} MB); ${cases.length} cases\n`);
    for (const c of cases)
      rows.push(
        await runCase(
          svc,
          pid,
          c,
          port,
          () => peak,
          (v) => (peak = v),
        ),
      );
    const normal = await runCase(
      svc,
      pid,
      {
        name: "normal.pdf",
        what: "a normal invoice afterwards",
        source: { kind: "document", contentType: "application/pdf", bytes: async () => new Uint8Array() },
        expect: { status: "COMPLETED" },
      },
      port,
      () => peak,
      (v) => (peak = v),
    );
    rows.push(normal);
    await new Promise((r) => setTimeout(r, 3000));
    const afterMb = mb(treeRss(pid));
    print(rows, restMb, afterMb);
  } finally {
    clearInterval(sampler);
    await svc.dispose();
    server.close();
  }
}

async function runCase(
  svc: Service,
  pid: number,
  c: HostileCase,
  port: number,
  getPeak: () => number,
  setPeak: (v: number) => void,
): Promise<Row> {
  // Let the previous case's memory go first (a killed step, a replaced worker), so peaks are each case's own.
  const settleUntil = Date.now() + 30_000;
  while (treeRss(pid) > restBytes + 512 * 1024 * 1024 && Date.now() < settleUntil)
    await new Promise((r) => setTimeout(r, 250));
  setPeak(treeRss(pid));
  const started = performance.now();
  const created = await svc.create(CLIENTS.full, {
    source_url: `http://127.0.0.1:${port}/${c.name}`,
    doc_type: "invoice",
    region: "GB",
  });
  if (created.status !== 202) throw new Error(`${c.name}: create answered ${created.status}`);
  const id = created.body.id as string;
  let state = "";
  for (;;) {
    const r = await svc.call("GET", `/v1/detection/${id}`, { client: CLIENTS.full });
    const elapsed = performance.now() - started;
    if (r.body.status === "COMPLETED" || r.body.status === "FAILED") {
      state = r.body.status === "FAILED" ? `FAILED ${r.body.failure_code}` : "COMPLETED";
      break;
    }
    const peakMb = mb(getPeak());
    if (elapsed > GUARD_MS || peakMb > ABORT_MB) {
      state = `${r.body.status} (stopped: ${elapsed > GUARD_MS ? `${Math.round(elapsed / 1000)} s` : `${peakMb} MB`})`;
      await svc.call("DELETE", `/v1/detection/${id}`, { client: CLIENTS.full });
      break;
    }
    await new Promise((res) => setTimeout(res, 250));
  }
  const seconds = (performance.now() - started) / 1000;
  const expected = c.expect.status === "FAILED" ? `FAILED ${c.expect.failureCode}` : "COMPLETED";
  const row = {
    name: c.name,
    what: c.what,
    seconds: Math.round(seconds * 10) / 10,
    peakMb: mb(getPeak()),
    state,
    expected,
    ok: state === expected,
  };
  process.stderr.write(`${row.name}: ${row.state} in ${row.seconds} s, peak ${row.peakMb} MB\n`);
  return row;
}

function print(rows: Row[], restMb: number, afterMb: number): void {
  const head = ["case", "what", "time s", "peak RSS MB", "terminal state", "expected"];
  const table = rows.map((r) => [
    r.name,
    r.what,
    r.seconds.toFixed(1),
    String(r.peakMb),
    r.state,
    r.ok ? "yes" : `no (${r.expected})`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((t) => t[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  process.stdout.write(
    `\ndocverify bench:hostile — ${os.cpus().length} cores, Node ${process.version}${ENTRY ? `, entry ${ENTRY}` : ""}\n\n`,
  );
  process.stdout.write(`${line(head)}\n|${widths.map((w) => "-".repeat(w + 2)).join("|")}|\n`);
  for (const t of table) process.stdout.write(`${line(t)}\n`);
  const worstTime = rows.reduce((a, b) => (b.seconds > a.seconds ? b : a));
  const worstRss = rows.reduce((a, b) => (b.peakMb > a.peakMb ? b : a));
  process.stdout.write(
    `\nprocess tree at rest: ${restMb} MB before the cases, ${afterMb} MB 3 s after the last one\n` +
      `slowest: ${worstTime.name} ${worstTime.seconds} s; largest: ${worstRss.name} ${worstRss.peakMb} MB; ` +
      `${rows.filter((r) => r.ok).length}/${rows.length} as expected\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : err}\n`);
  process.exit(1);
});
