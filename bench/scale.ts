/**
 * `npm run bench:scale`: the cluster at a bank's volume, on the real test kube-apiserver + etcd (the e2e's
 * test cluster), Redis and S3 (s3rver). Prints figures; asserts nothing.
 *
 * 1. Scale: BENCH_SCALE_DETECTIONS (10 000) detections created through the real `docverify api` and
 *    completed by the real reconciler, resource store, scheduler and archive (bench/scale-operator.ts) with
 *    a fast fake step runner (bench/fake-step-runner.ts). The submitter keeps at most
 *    BENCH_SCALE_IN_FLIGHT unfinished detections, as an integrator with a bounded queue does. Sampled
 *    twice a second: the Detections etcd holds (a count-only range read on etcd itself) against the bound
 *    docs/decisions.md states: unfinished + finished in the last DOCVERIFY_ARCHIVE_AFTER_SECONDS (+ the
 *    archive's own pass). At the end: the operator's RSS and heap.
 * 2. Step start in the cluster: a few real detections through the real `docverify operator` and step Pods
 *    (played by the node player): per step, Pod creation → step code loaded, and the process's peak RSS.
 * 3. Listing: GET /v1/detection, first page and page 50 (limit 50), p50/p99 over BENCH_SCALE_LIST_RUNS
 *    requests, for a client with BENCH_SCALE_ARCHIVED (100 000) archived detections and one with 1 000,
 *    on S3 (s3rver, through the cluster api) and on the local object store (through the standalone
 *    service). The archives are written once with the real archive code (core/archive.ts) and cached in
 *    ~/.cache/docverify/bench-scale (the local one straight into the store's folder layout, without fsync).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { KubeConfig, Watch } from "@kubernetes/client-node";
import { Agent, request } from "undici";
import { archiveDetection } from "../core/archive.js";
import type { Detection } from "../core/detection.js";
import { newDetectionId } from "../core/ids.js";
import type { ObjectStore } from "../core/ports.js";
import { isTerminal } from "../core/phases.js";
import { ENTRY, ROOT } from "../e2e/cluster/runtime-process.js";
import {
  type RuntimeWorld,
  missingPrerequisites,
  startRuntimeWorld,
  until,
} from "../e2e/cluster/runtime-world.js";
import { makeDocument } from "../fixtures/documents.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createS3ObjectStore } from "../platform/s3/object-store.js";
import { type S3TestServer, startS3TestServer } from "../platform/s3/testdata/s3-test-server.js";
import { archivedFixture } from "../platform/testdata/archive-contract.js";
import { PEAK_RSS_HOOK } from "./peak-rss-hook.js";

const env = process.env;
const N = Number(env.BENCH_SCALE_DETECTIONS ?? 10_000);
const ARCHIVED = Number(env.BENCH_SCALE_ARCHIVED ?? 100_000);
const SMALL = 1_000;
const IN_FLIGHT = Number(env.BENCH_SCALE_IN_FLIGHT ?? 300);
const ARCHIVE_AFTER = Number(env.BENCH_SCALE_ARCHIVE_AFTER ?? 5);
const CONCURRENCY = Number(env.BENCH_SCALE_CONCURRENCY ?? 32);
const LIST_RUNS = Number(env.BENCH_SCALE_LIST_RUNS ?? 100);
const STEP_DETECTIONS = Number(env.BENCH_SCALE_STEP_DETECTIONS ?? 4);
const CACHE = path.join(os.homedir(), ".cache/docverify/bench-scale");
const NS = "bench-scale";
/** Bumped when the seeded archives change (2: ids carry their own times, spread over a year). */
const SEED_LAYOUT = 2;

const CLIENTS = {
  bench: { client_id: "bench", client_secret: "bench-secret-0123456789", scopes: ["DocumentVerification:*"] },
  large: {
    client_id: "bench-large",
    client_secret: "bench-large-0123456789",
    scopes: ["DocumentVerification:*"],
  },
  small: {
    client_id: "bench-small",
    client_secret: "bench-small-0123456789",
    scopes: ["DocumentVerification:*"],
  },
};

const out = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
}
const ms = (v: number) => `${v.toFixed(v < 10 ? 1 : 0)} ms`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** VmRSS and VmHWM (peak) of a process, in bytes. */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) =>
    Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/** Runs `fn` over 0..count-1 with `limit` at once. */
async function inParallel(count: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

// -------------------------------------------------------------------------------------------------
// Seeding the archives (cached)
// -------------------------------------------------------------------------------------------------

/** A small deterministic PRNG (mulberry32). */
function prng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The archived detections of a client: spread over the year before now, one in ten failed. */
function* seedDetections(client: string, count: number, seed: number): Generator<Detection> {
  const rand = prng(seed);
  const now = Date.now();
  const times = Array.from({ length: count }, () => now - Math.floor(rand() * 365 * 86_400_000)).sort(
    (a, b) => a - b,
  );
  for (const [i, t] of times.entries()) {
    const d = archivedFixture(newDetectionId(t), {
      client,
      phase: i % 10 === 3 ? "Failed" : "Completed",
      completedAt: t + 30_000,
    });
    d.metadata.creationTimestamp = new Date(t).toISOString();
    yield d;
  }
}

/** The local object store's folder layout written without fsync (seeding only; reads use the real store). */
function fastLocalWriter(root: string): ObjectStore {
  const real = createLocalObjectStore(root);
  const made = new Set<string>();
  return {
    ...real,
    async put(bucket, key, body) {
      const file = path.join(root, bucket, ...key.split("/"));
      const dir = path.dirname(file);
      if (!made.has(dir)) {
        await mkdir(dir, { recursive: true });
        made.add(dir);
      }
      const data = typeof body === "string" || Buffer.isBuffer(body) ? body : "";
      await writeFile(file, data);
      return { size: Buffer.byteLength(data) };
    },
  };
}

async function seedInto(store: ObjectStore, bucket: string, what: string): Promise<void> {
  await store.ensureBucket(bucket);
  for (const [client, count, seed] of [
    [CLIENTS.large.client_id, ARCHIVED, 1],
    [CLIENTS.small.client_id, SMALL, 2],
  ] as const) {
    const started = Date.now();
    const items = [...seedDetections(client, count, seed)];
    let done = 0;
    await inParallel(items.length, 48, async (i) => {
      await archiveDetection(store, bucket, items[i]!, { now: new Date() });
      if (++done % 10_000 === 0) out(`  ${what}: ${done} of ${count} archived for ${client}`);
    });
    out(
      `  ${what}: ${count} archived detections of ${client} written in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
  }
}

/** A cached seed folder: reused when its stamp matches, else written again by `fill`. */
async function cachedSeed(name: string, fill: (dir: string) => Promise<void>): Promise<string> {
  const dir = path.join(CACHE, name);
  const stampFile = path.join(CACHE, `${name}.stamp.json`);
  const stamp = JSON.stringify({ layout: SEED_LAYOUT, large: ARCHIVED, small: SMALL });
  if (existsSync(stampFile) && (await readFile(stampFile, "utf8")) === stamp) {
    out(`  ${name}: cached in ${dir}`);
    return dir;
  }
  await rm(dir, { recursive: true, force: true });
  await rm(stampFile, { force: true });
  await mkdir(dir, { recursive: true });
  await fill(dir);
  await writeFile(stampFile, stamp);
  return dir;
}

// -------------------------------------------------------------------------------------------------
// Listing latency
// -------------------------------------------------------------------------------------------------

async function tokenFor(base: string, client: { client_id: string; client_secret: string }): Promise<string> {
  const res = await fetch(`${base}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", ...client }),
  });
  if (res.status !== 200) throw new Error(`token for ${client.client_id}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

interface ListFigures {
  client: string;
  archived: number;
  /** The deep page measured: 50, or the last when there are fewer. */
  page: number;
  page1: number[];
  page50: number[];
  failed1: number[];
}

async function measureListing(
  base: string,
  client: { client_id: string; client_secret: string },
  archived: number,
): Promise<ListFigures> {
  const token = await tokenFor(base, client);
  const dispatcher = new Agent({ connections: 1 });
  const get = async (q: string) => {
    const t = performance.now();
    const r = await request(`${base}/v1/detection?${q}`, {
      headers: { authorization: `Bearer ${token}` },
      dispatcher,
    });
    const body = (await r.body.json()) as { items: unknown[]; next_cursor: string | null };
    if (r.statusCode !== 200)
      throw new Error(`GET /v1/detection?${q}: ${r.statusCode} ${JSON.stringify(body)}`);
    return { ms: performance.now() - t, body };
  };
  // The cursor of page 50, or of the last page when there are fewer.
  const deepest = Math.min(50, Math.ceil(archived / 50));
  let cursor: string | null = null;
  for (let page = 1; page < deepest; page++) {
    const { body } = await get(`limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    if (body.items.length !== 50 || !body.next_cursor)
      throw new Error(
        `page ${page} of ${client.client_id} holds ${body.items.length} items and no next cursor`,
      );
    cursor = body.next_cursor;
  }
  const page50q = `limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
  const figures: ListFigures = {
    client: client.client_id,
    archived,
    page: deepest,
    page1: [],
    page50: [],
    failed1: [],
  };
  for (let i = 0; i < 5; i++) await get("limit=50"); // warm-up
  for (let i = 0; i < LIST_RUNS; i++) {
    figures.page1.push((await get("limit=50")).ms);
    figures.page50.push((await get(page50q)).ms);
    figures.failed1.push((await get("limit=50&status=FAILED")).ms);
  }
  await dispatcher.close();
  return figures;
}

// -------------------------------------------------------------------------------------------------
// 1. Scale on the cluster
// -------------------------------------------------------------------------------------------------

interface ScaleFigures {
  seconds: number;
  perSecond: number;
  etcdMax: number;
  boundAtMax: number;
  overBound: number;
  etcdAtEnd: number;
  drainSeconds: number;
  operator: { rss: number; peak: number; heapUsed: number; atStart: number; heapAtStart: number };
  api: { rss: number; peak: number };
}

/** Detections etcd holds for the namespace: a count-only range read on etcd. */
async function etcdCount(etcdUrl: string): Promise<number> {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const res = await fetch(`${etcdUrl}/v3/kv/range`, {
    method: "POST",
    body: JSON.stringify({
      key: b64(`/registry/docverify.io/detections/${NS}/`),
      range_end: b64(`/registry/docverify.io/detections/${NS}0`),
      count_only: true,
    }),
  });
  const body = (await res.json()) as { count?: string };
  return Number(body.count ?? 0);
}

async function scale(w: RuntimeWorld): Promise<ScaleFigures> {
  const operator = spawn(
    process.execPath,
    ["--expose-gc", "--import", "tsx", path.join(ROOT, "bench/scale-operator.ts")],
    {
      cwd: ROOT,
      env: {
        PATH: env.PATH ?? "",
        HOME: env.HOME ?? os.tmpdir(),
        ...w.operatorEnv,
        DOCVERIFY_CONCURRENCY: String(CONCURRENCY),
        DOCVERIFY_ARCHIVE_AFTER_SECONDS: String(ARCHIVE_AFTER),
        DOCVERIFY_LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let operatorOut = "";
  operator.stdout.on("data", (d: Buffer) => (operatorOut += d.toString()));
  operator.stderr.on("data", (d: Buffer) => (operatorOut += d.toString()));
  await until("the scale operator", async () => operatorOut.includes("scale operator ready"), 60_000);
  operatorOut = "";
  operator.kill("SIGUSR2");
  await until("the operator's memory figures", async () => /"rss"/.test(operatorOut), 10_000);
  const memoryAtStart = await memoryOf(operator.pid!);
  const heapAtStart = (
    JSON.parse(operatorOut.split("\n").find((l) => l.includes('"rss"'))!) as { heapUsed: number }
  ).heapUsed;

  // Unfinished detections, from a watch on the apiserver (the integrator's view of its queue).
  const store = w.adminStore(NS);
  const unfinished = new Set<string>();
  const done = new Map<string, number>(); // name → when it was seen terminal
  const onObject = (type: string, d: Detection) => {
    const name = d.metadata.name;
    if (type === "DELETED" || isTerminal(d.status?.phase)) {
      unfinished.delete(name);
      if (!done.has(name)) done.set(name, Date.now());
    } else if (!done.has(name)) unfinished.add(name);
  };
  let watch = store.watch(
    {},
    (e) => onObject(e.type, e.object),
    function rewatch() {
      void store.list().then(({ items, resourceVersion }) => {
        const live = new Set(items.map((d) => d.metadata.name));
        for (const n of [...unfinished])
          if (!live.has(n)) onObject("DELETED", { metadata: { name: n } } as Detection);
        for (const d of items) onObject("MODIFIED", d);
        watch = store.watch({ resourceVersion }, (e) => onObject(e.type, e.object), rewatch);
      });
    },
  );

  // etcd, sampled twice a second, against the bound: unfinished + finished within the archive delay
  // (+ 5 s for the archive pass itself: its record write, finalizer update and delete).
  let etcdMax = 0;
  let boundAtMax = 0;
  let overBound = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const count = await etcdCount(w.cluster.etcdUrl);
      const now = Date.now();
      let recent = 0;
      for (const t of done.values()) if (now - t <= (ARCHIVE_AFTER + 5) * 1000) recent++;
      const bound = unfinished.size + recent + CONCURRENCY;
      if (count > bound) overBound++;
      if (count > etcdMax) {
        etcdMax = count;
        boundAtMax = bound;
      }
      await sleep(500);
    }
  })();

  const token = await tokenFor(w.apiUrl, CLIENTS.bench);
  const dispatcher = new Agent({ connections: 16 });
  const started = Date.now();
  let submitted = 0;
  let lastReport = started;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (submitted < N) {
        while (unfinished.size >= IN_FLIGHT) await sleep(5);
        if (submitted >= N) break;
        submitted++;
        const r = await request(`${w.apiUrl}/v1/detection`, {
          method: "POST",
          dispatcher,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({
            source_url: "https://bank.example/statement.pdf",
            doc_type: "bank_statement",
            region: "GB",
          }),
        });
        const body = (await r.body.json()) as { id: string };
        if (r.statusCode !== 202)
          throw new Error(`POST /v1/detection: ${r.statusCode} ${JSON.stringify(body)}`);
        if (!done.has(body.id)) unfinished.add(body.id);
        if (Date.now() - lastReport > 15_000) {
          lastReport = Date.now();
          out(
            `  ${submitted} submitted, ${done.size} finished, ${unfinished.size} unfinished, etcd max ${etcdMax}`,
          );
        }
      }
    }),
  );
  await until(`all ${N} detections to finish`, async () => done.size >= N, 30 * 60_000);
  const seconds = (Date.now() - started) / 1000;
  const drainStart = Date.now();
  await until(
    "etcd to hold no Detection (all archived)",
    async () => (await etcdCount(w.cluster.etcdUrl)) === 0,
    10 * 60_000,
  ).catch(() => undefined);
  const drainSeconds = (Date.now() - drainStart) / 1000;
  sampling = false;
  await sampler;
  watch.stop();
  await dispatcher.close();

  operatorOut = "";
  operator.kill("SIGUSR2");
  await until("the operator's memory figures", async () => /"rss"/.test(operatorOut), 10_000);
  const reported = JSON.parse(operatorOut.split("\n").find((l) => l.includes('"rss"'))!) as {
    heapUsed: number;
  };
  const operatorMemory = await memoryOf(operator.pid!);
  const apiMemory = await memoryOf(w.api!.proc!.pid!);
  operator.kill("SIGTERM");
  await new Promise((r) => operator.once("exit", r));
  return {
    seconds,
    perSecond: N / seconds,
    etcdMax,
    boundAtMax,
    overBound,
    etcdAtEnd: await etcdCount(w.cluster.etcdUrl),
    drainSeconds,
    operator: { ...operatorMemory, heapUsed: reported.heapUsed, atStart: memoryAtStart.rss, heapAtStart },
    api: apiMemory,
  };
}

// -------------------------------------------------------------------------------------------------
// 2. Step start in the cluster
// -------------------------------------------------------------------------------------------------

interface StepRun {
  pod: string;
  step: string;
  addedAt?: number;
  loadedAt?: number;
  uptimeMs?: number;
  maxRssKb?: number;
}

async function stepStart(w: RuntimeWorld, runs: Map<string, StepRun>): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromString(w.cluster.kubeconfig("admin"));
  const watch = await new Watch(kc).watch(
    `/api/v1/namespaces/${NS}/pods`,
    {},
    (type, pod: { metadata?: { name?: string } }) => {
      const name = pod.metadata?.name;
      if (type !== "ADDED" || !name) return;
      const run = runs.get(name) ?? { pod: name, step: /-(prepare|check|agent)-\d+$/.exec(name)?.[1] ?? "?" };
      run.addedAt ??= Date.now();
      runs.set(name, run);
    },
    () => {},
  );
  const op = await w.newOperator("op-steps");
  await op.waitForLog(/is the leader/, 60_000);
  for (let i = 0; i < STEP_DETECTIONS; i++) {
    const r = await w.call(
      "POST",
      "/v1/detection",
      {
        source_url: `${w.docBase}/${i % 2 ? "statement" : "invoice"}.pdf`,
        doc_type: i % 2 ? "bank_statement" : "invoice",
        region: "GB",
      },
      CLIENTS.bench,
    );
    if (r.status !== 202) throw new Error(`POST: ${r.status} ${JSON.stringify(r.body)}`);
    const d = await w.waitTerminal(r.body.id, 300_000);
    if (d.status !== "COMPLETED") throw new Error(`detection ${d.id}: ${d.status} ${d.failure_code}`);
  }
  watch.abort();
  await op.stop();
}

/** Fills `runs` from a step Pod's output lines (the peak-RSS hook and the "step code loaded" log line). */
function onStepLine(runs: Map<string, StepRun>) {
  return (pod: string, _stream: string, line: string) => {
    const run = runs.get(pod) ?? { pod, step: /-(prepare|check|agent)-\d+$/.exec(pod)?.[1] ?? "?" };
    runs.set(pod, run);
    const rss = /^MAXRSS_KB (\d+)/.exec(line);
    if (rss) run.maxRssKb = Number(rss[1]);
    if (line.includes('"step code loaded"')) {
      try {
        const j = JSON.parse(line) as { time: number; processUptimeMs: number };
        run.loadedAt = j.time;
        run.uptimeMs = j.processUptimeMs;
      } catch {
        // not the JSON log line
      }
    }
  };
}

// -------------------------------------------------------------------------------------------------

async function startStandalone(dataDir: string): Promise<{ url: string; proc: ChildProcess }> {
  const clientsFile = path.join(await mkdtemp(path.join(os.tmpdir(), "bench-scale-")), "clients.json");
  await writeFile(clientsFile, JSON.stringify({ clients: Object.values(CLIENTS) }));
  const proc = spawn(process.execPath, [ENTRY, "standalone"], {
    cwd: ROOT,
    env: {
      PATH: env.PATH ?? "",
      HOME: env.HOME ?? os.tmpdir(),
      DOCVERIFY_DATA_DIR: dataDir,
      DOCVERIFY_CLIENTS_FILE: clientsFile,
      DOCVERIFY_LOG_LEVEL: "warn",
      // The seeded detections finished up to a year ago: keep them from retention.
      DOCVERIFY_RETENTION_SECONDS: String(10 * 365 * 86_400),
      PORT: "0",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  proc.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  const url = await until(
    "the standalone service",
    async () => /listening on (http:\/\/[\d.]+:\d+)/.exec(log)?.[1],
    60_000,
  );
  return { url, proc };
}

function printList(title: string, f: ListFigures): void {
  out(
    `  ${title.padEnd(8)} ${f.client.padEnd(12)} ${String(f.archived).padStart(7)}   page 1 p50 ${ms(pct(f.page1, 50)).padStart(7)} p99 ${ms(pct(f.page1, 99)).padStart(7)}   page ${String(f.page).padStart(2)} p50 ${ms(pct(f.page50, 50)).padStart(7)} p99 ${ms(pct(f.page50, 99)).padStart(7)}   FAILED page 1 p50 ${ms(pct(f.failed1, 50)).padStart(7)} p99 ${ms(pct(f.failed1, 99)).padStart(7)}`,
  );
}

async function main(): Promise<void> {
  const missing = missingPrerequisites();
  if (missing.length)
    throw new Error(`bench:scale needs the test cluster, Redis and s3rver: ${missing.join("; ")}`);
  out(
    `bench:scale — ${N} detections (at most ${IN_FLIGHT} unfinished, archived ${ARCHIVE_AFTER} s after they finish, ${CONCURRENCY} at once); listing with ${ARCHIVED} archived`,
  );
  out("seeding the archives (cached between runs):");
  const localSeed = await cachedSeed(`local-${ARCHIVED}`, async (dir) => {
    await seedInto(fastLocalWriter(path.join(dir, "objects")), "docverify", "local");
  });
  const s3Seed = await cachedSeed(`s3rver-${ARCHIVED}`, async (dir) => {
    const server = await startS3TestServer({ directory: dir });
    try {
      await seedInto(createS3ObjectStore(s3Options(server)), "docverify", "s3rver");
    } finally {
      await server.stop();
    }
  });

  const runs = new Map<string, StepRun>();
  const docs = {
    "/invoice.pdf": Buffer.from(await makeDocument({ seed: 5, docType: "invoice", region: "GB" })),
    "/statement.pdf": Buffer.from(
      await makeDocument({ seed: 6, docType: "bank_statement", region: "GB", pages: 3 }),
    ),
  };
  const w = await startRuntimeWorld({
    namespace: NS,
    documents: docs,
    stepCommand: [process.execPath, "--import", PEAK_RSS_HOOK, ENTRY],
    onStepOutput: onStepLine(runs),
  });
  let scaleFigures: ScaleFigures;
  const lists: [string, ListFigures][] = [];
  try {
    await w.startApi(Object.values(CLIENTS));
    out(`scale: ${N} detections through the api, the reconciler and the archive`);
    scaleFigures = await scale(w);
    out("step start in the cluster: real detections, step Pods played by the node player");
    await stepStart(w, runs);
    out("listing on S3 (s3rver, through the cluster api)");
    const seeded = await startS3TestServer({ directory: s3Seed });
    try {
      await w.api?.stop();
      await w.startApi(Object.values(CLIENTS), { S3_ENDPOINT: seeded.url });
      lists.push(["S3", await measureListing(w.apiUrl, CLIENTS.large, ARCHIVED)]);
      lists.push(["S3", await measureListing(w.apiUrl, CLIENTS.small, SMALL)]);
    } finally {
      await seeded.stop();
    }
  } finally {
    await w.stop();
  }
  out("listing on the local object store (through the standalone service)");
  const standalone = await startStandalone(localSeed);
  try {
    lists.push(["local", await measureListing(standalone.url, CLIENTS.large, ARCHIVED)]);
    lists.push(["local", await measureListing(standalone.url, CLIENTS.small, SMALL)]);
  } finally {
    standalone.proc.kill("SIGTERM");
    await new Promise((r) => standalone.proc.once("exit", r));
  }

  const s = scaleFigures!;
  out("");
  out(`== scale (${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}) ==`);
  out(
    `  ${N} detections created and completed in ${s.seconds.toFixed(0)} s (${s.perSecond.toFixed(1)}/s); all archived ${s.drainSeconds.toFixed(0)} s later (etcd at the end: ${s.etcdAtEnd})`,
  );
  out(
    `  etcd Detections: max ${s.etcdMax} (bound at that moment ${s.boundAtMax} = unfinished + finished in the last ${ARCHIVE_AFTER}+5 s + ${CONCURRENCY}); samples over the bound: ${s.overBound}`,
  );
  out(
    `  operator at the end: RSS ${mb(s.operator.rss)} (peak ${mb(s.operator.peak)}, ${mb(s.operator.atStart)} when it started), heap used after a full GC ${mb(s.operator.heapUsed)} (${mb(s.operator.heapAtStart)} when it started); api RSS ${mb(s.api.rss)} (peak ${mb(s.api.peak)})`,
  );
  out("== step start in the cluster (Pod created → step code loaded; process peak RSS) ==");
  for (const step of ["prepare", "check", "agent"]) {
    const r = [...runs.values()].filter(
      (x) => x.step === step && x.loadedAt && x.addedAt && x.uptimeMs !== undefined,
    );
    if (!r.length) {
      out(`  ${step}: no complete run`);
      continue;
    }
    const total = r.map((x) => x.loadedAt! - x.addedAt!);
    const spawnToLoaded = r.map((x) => x.uptimeMs!);
    const rss = r.map((x) => (x.maxRssKb ?? Number.NaN) / 1024);
    out(
      `  ${step.padEnd(8)} ${r.length} runs   Pod → loaded p50 ${ms(pct(total, 50))} (max ${ms(Math.max(...total))}), of which process start → loaded p50 ${ms(pct(spawnToLoaded, 50))}   peak RSS p50 ${pct(rss, 50).toFixed(0)} MB (max ${Math.max(...rss).toFixed(0)} MB)`,
    );
  }
  out(`== GET /v1/detection, limit 50, ${LIST_RUNS} requests each ==`);
  for (const [title, f] of lists) printList(title, f);
}

function s3Options(server: S3TestServer) {
  return {
    endPoint: server.endPoint,
    port: server.port,
    useSSL: false,
    accessKey: server.accessKey,
    secretKey: server.secretKey,
  };
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:scale failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
