/**
 * `npm run bench:cluster`: the cluster runtime end to end with real steps, in both step modes, on the real
 * test kube-apiserver + etcd (the e2e's test cluster), Redis and S3 (s3rver): the real `docverify api`,
 * `docverify operator` and, in workers mode, one `docverify step-worker` per step kind; in pods mode the
 * node player runs the step Pods (no kubelet: the Pod start a real node adds is not in these figures).
 * Prints figures; asserts nothing. For a 3-page bank statement, per mode:
 *
 * - latency: p50/p95 from POST /v1/detection to the Detection's phase Completed, over
 *   BENCH_CLUSTER_LATENCY (50) detections one after another;
 * - throughput: detections per minute over BENCH_CLUSTER_WORKERS_N (1 000, workers mode) or
 *   BENCH_CLUSTER_PODS_N (200, pods mode) detections, at most BENCH_CLUSTER_IN_FLIGHT (8) unfinished;
 * - Pods created and apiserver writes (POST/PUT/PATCH/DELETE, from the apiserver's own
 *   apiserver_request_total, leases left out: leader election renews them whatever the load) per detection;
 * - workers mode: the resident memory of each kind's worker (its process and its warm children) over time.
 *
 * Each mode prints its line as soon as it is done; the last lines are one per mode:
 *   cluster: mode=workers p50_s=… p95_s=… per_min=… pods_per_detection=… apiserver_writes_per_detection=…
 * BENCH_CLUSTER_MODES (workers,pods) picks the modes.
 */
import { readFileSync, readdirSync } from "node:fs";
import { makeDocument } from "../fixtures/documents.js";
import { apiRequest } from "../e2e/cluster/api-request.js";
import type { RuntimeProcess } from "../e2e/cluster/runtime-process.js";
import { missingPrerequisites, type RuntimeWorld, startRuntimeWorld } from "../e2e/cluster/runtime-world.js";

const env = process.env;
const LATENCY_N = Number(env.BENCH_CLUSTER_LATENCY ?? 50);
const THROUGHPUT_N = {
  workers: Number(env.BENCH_CLUSTER_WORKERS_N ?? 1000),
  pods: Number(env.BENCH_CLUSTER_PODS_N ?? 200),
};
const IN_FLIGHT = Number(env.BENCH_CLUSTER_IN_FLIGHT ?? 8);
const MODES = (env.BENCH_CLUSTER_MODES ?? "workers,pods").split(",").map((m) => m.trim()) as (
  | "workers"
  | "pods"
)[];
const CLIENT = {
  client_id: "bench",
  client_secret: "bench-secret-0123456789",
  scopes: ["DocumentVerification:*"],
};

const out = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
}

/** apiserver_request_total summed by verb and resource, read from the apiserver's own /metrics. */
async function apiserverWrites(w: RuntimeWorld): Promise<{ writes: number; podCreates: number }> {
  const r = await apiRequest<string>(w.admin, "GET", "/metrics");
  const text = typeof r.body === "string" ? r.body : String(r.body);
  let writes = 0;
  let podCreates = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? "";
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? "";
    const n = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (!["POST", "PUT", "PATCH", "DELETE", "APPLY"].includes(verb) || resource === "leases") continue;
    writes += n;
    if (resource === "pods" && verb === "POST" && !/subresource="[^"]/.test(line)) podCreates += n;
  }
  return { writes, podCreates };
}

/** Resident memory (MB) of a process and all its descendants. */
function treeRssMb(pid: number | undefined): number {
  if (!pid) return 0;
  let kb = 0;
  const visit = (p: number) => {
    try {
      const m = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/status`, "latin1"));
      kb += m ? Number(m[1]) : 0;
      for (const t of readdirSync(`/proc/${p}/task`)) {
        const kids = readFileSync(`/proc/${p}/task/${t}/children`, "latin1").trim();
        for (const k of kids ? kids.split(/\s+/) : []) visit(Number(k));
      }
    } catch {
      // gone
    }
  };
  visit(pid);
  return Math.round(kb / 1024);
}

async function runMode(mode: "workers" | "pods", statement: Buffer): Promise<string> {
  const w = await startRuntimeWorld({
    namespace: `bench-cluster-${mode}`,
    documents: { "/statement.pdf": statement },
    stepMode: mode,
  });
  const rss: { t: number; kind: string; mb: number }[] = [];
  let sampler: NodeJS.Timeout | undefined;
  try {
    const op = await w.newOperator("bench-operator", {
      DOCVERIFY_STEP_MODE: mode,
      DOCVERIFY_CONCURRENCY: String(Math.max(IN_FLIGHT, 4)),
      DOCVERIFY_LOG_LEVEL: "warn",
    });
    await op.waitForLog(/is the leader/, 60_000);
    const workers: Record<string, RuntimeProcess> = {};
    if (mode === "workers") {
      for (const kind of ["prepare", "check", "agent"] as const)
        workers[kind] = await w.newStepWorker(kind, { DOCVERIFY_LOG_LEVEL: "warn" });
      const t0 = Date.now();
      sampler = setInterval(() => {
        for (const [kind, p] of Object.entries(workers))
          rss.push({ t: (Date.now() - t0) / 1000, kind, mb: treeRssMb(p.proc?.pid) });
      }, 1000);
    }
    await w.startApi([CLIENT], { DOCVERIFY_LOG_LEVEL: "warn" });
    const store = w.adminStore();

    const submit = async (): Promise<string> => {
      const r = await w.call("POST", "/v1/detection", {
        source_url: `${w.docBase}/statement.pdf`,
        doc_type: "bank_statement",
        region: "gb",
      });
      if (r.status !== 202) throw new Error(`POST /v1/detection: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.id as string;
    };
    const finished = async (id: string): Promise<string> => {
      for (;;) {
        const d = await store.get(id);
        const phase = d?.status?.phase;
        if (phase === "Completed" || phase === "Failed") return phase;
        await sleep(20);
      }
    };

    // Warm-up: the first detection loads every step's code.
    await finished(await submit());

    const before = await apiserverWrites(w);
    const latencies: number[] = [];
    let failed = 0;
    for (let i = 0; i < LATENCY_N; i++) {
      const t = Date.now();
      const phase = await finished(await submit());
      latencies.push((Date.now() - t) / 1000);
      if (phase !== "Completed") failed++;
    }
    const afterLatency = await apiserverWrites(w);
    const p50 = pct(latencies, 50);
    const p95 = pct(latencies, 95);
    out(
      `${mode}: ${LATENCY_N} sequential detections: p50 ${p50.toFixed(2)} s, p95 ${p95.toFixed(2)} s, max ${Math.max(...latencies).toFixed(2)} s (${failed} not Completed)`,
    );

    const n = THROUGHPUT_N[mode];
    const started = Date.now();
    let next = 0;
    let done = 0;
    let throughputFailed = 0;
    const lane = async () => {
      while (next < n) {
        next++;
        if ((await finished(await submit())) !== "Completed") throughputFailed++;
        done++;
        if (done % Math.max(1, Math.floor(n / 5)) === 0)
          out(`${mode}: throughput ${done}/${n} after ${((Date.now() - started) / 1000).toFixed(0)} s`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, n) }, lane));
    const seconds = (Date.now() - started) / 1000;
    const perMin = n / (seconds / 60);
    const after = await apiserverWrites(w);
    const count = LATENCY_N + n;
    const podsPer = (after.podCreates - before.podCreates) / count;
    const writesPer = (after.writes - before.writes) / count;
    out(
      `${mode}: throughput ${n} detections in ${seconds.toFixed(0)} s with ${IN_FLIGHT} in flight: ${perMin.toFixed(1)}/min (${throughputFailed} not Completed)`,
    );
    out(
      `${mode}: apiserver writes per detection ${writesPer.toFixed(1)} (latency phase alone ${((afterLatency.writes - before.writes) / LATENCY_N).toFixed(1)}), Pods created per detection ${podsPer.toFixed(2)}`,
    );
    if (mode === "workers") {
      clearInterval(sampler);
      for (const kind of ["prepare", "check", "agent"]) {
        const s = rss.filter((r) => r.kind === kind);
        if (s.length === 0) continue;
        const step = Math.max(1, Math.floor(s.length / 8));
        const timeline = s
          .filter((_, i) => i % step === 0 || i === s.length - 1)
          .map((r) => `${r.t.toFixed(0)}s:${r.mb}`)
          .join(" ");
        out(
          `workers: ${kind} worker RSS (MB, process + warm children): min ${Math.min(...s.map((r) => r.mb))} max ${Math.max(...s.map((r) => r.mb))}; ${timeline}`,
        );
      }
    }
    const line = `cluster: mode=${mode} p50_s=${p50.toFixed(2)} p95_s=${p95.toFixed(2)} per_min=${perMin.toFixed(1)} pods_per_detection=${podsPer.toFixed(2)} apiserver_writes_per_detection=${writesPer.toFixed(1)}`;
    out(line);
    return line;
  } finally {
    if (sampler) clearInterval(sampler);
    await w.stop();
  }
}

async function main(): Promise<void> {
  const missing = missingPrerequisites();
  if (missing.length) {
    out(`bench:cluster: cannot run: ${missing.join("; ")}`);
    process.exitCode = 1;
    return;
  }
  const statement = Buffer.from(
    await makeDocument({ seed: 8, docType: "bank_statement", region: "GB", pages: 3 }),
  );
  out(
    `bench:cluster: 3-page statement (${statement.length} bytes); latency ${LATENCY_N} sequential, throughput ${THROUGHPUT_N.workers} (workers) / ${THROUGHPUT_N.pods} (pods), ${IN_FLIGHT} in flight`,
  );
  const lines: string[] = [];
  for (const mode of MODES) lines.push(await runMode(mode, statement));
  for (const l of lines) out(l);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:cluster: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
