/**
 * `npm run bench:webhooks`: webhook delivery reliability under load with receiver failures injected and
 * the deliverer killed (SIGKILL) and restarted during the load. Prints figures; asserts nothing.
 *
 * The deliverer runs as its own process (bench/webhooks-child.ts: the real deliverer, sender and local
 * object store) queueing BENCH_RATE events a second (default 20) for BENCH_WEBHOOKS_SECONDS (default 120)
 * to two endpoints of one client. The receivers (real HTTP servers on loopback, verifying every request
 * with the standardwebhooks library) answer, at random (seeded): 200, 500 (12% / 25%), a cut connection
 * after reading the request (3%: the receiver got it but the sender never hears back), or a late answer
 * past the sender's 1 s deadline (2%). Every BENCH_KILL_SECONDS (default 30) the deliverer is killed with
 * SIGKILL and started again. After the load, the bench waits for the outbox to drain.
 *
 * Lost: an event the deliverer reported queued that an endpoint never acknowledged with a 2xx.
 * Receipts the receiver did not acknowledge (500, cut, late) are retried with the same webhook-id: the
 * at-least-once duplicates the receiver asked for. Duplicates after an ack: an event acknowledged more than
 * once (the deliverer was killed between the receiver's answer and recording it); a receiver deduplicates
 * them on webhook-id.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { newSecret, type ReceivedRequest, startReceiver } from "../operator/testdata/webhook-receiver.js";

const SECONDS = Number(process.env.BENCH_WEBHOOKS_SECONDS ?? 120);
const RATE = Number(process.env.BENCH_RATE ?? 20);
const KILL_SECONDS = Number(process.env.BENCH_KILL_SECONDS ?? 30);
const DRAIN_LIMIT_MS = 180_000;

/** A small seeded PRNG (mulberry32), so a run's failures can be told again. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function failing(seed: number, errorRate: number) {
  const r = rng(seed);
  return (): number | "drop" | { status: number; delayMs: number } => {
    const x = r();
    if (x < 0.03) return "drop";
    if (x < 0.05) return { status: 200, delayMs: 1500 };
    if (x < 0.05 + errorRate) return 500;
    return 200;
  };
}

const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-bench-webhooks-"));
const secret = newSecret();
const receivers = [
  await startReceiver({ secret, behaviour: failing(1, 0.12) }),
  await startReceiver({ secret, behaviour: failing(2, 0.25) }),
];
const endpoints = receivers.map((r) => ({ url: r.url(), events: ["detection.completed"], secret }));
const endAt = Date.now() + SECONDS * 1000;
const queued = new Set<string>();
let backlog = Number.POSITIVE_INFINITY;
let done = false;
let kills = 0;

function spawnChild(): ChildProcess {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(import.meta.dirname, "webhooks-child.ts")],
    {
      env: {
        ...process.env,
        BENCH_DIR: dir,
        BENCH_END_AT: String(endAt),
        BENCH_RATE: String(RATE),
        BENCH_ENDPOINTS: JSON.stringify(endpoints),
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let buf = "";
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split("\n");
    buf = lines.pop() ?? "";
    for (const l of lines) {
      if (l.startsWith("Q ")) queued.add(l.slice(2));
      else if (l.startsWith("B ")) backlog = Number(l.slice(2));
      else if (l === "DONE") done = true;
    }
  });
  return child;
}

const started = Date.now();
let child = spawnChild();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
while (Date.now() < endAt) {
  await sleep(Math.min(KILL_SECONDS * 1000, Math.max(0, endAt - Date.now())));
  if (Date.now() >= endAt - 1000) break;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
  kills++;
  backlog = Number.POSITIVE_INFINITY;
  child = spawnChild();
}
// Drain: wait until the child has stopped queueing and its outbox is empty.
const drainStart = Date.now();
while (!(done && backlog === 0) && Date.now() - drainStart < DRAIN_LIMIT_MS) await sleep(200);
const drainMs = Date.now() - drainStart;
await sleep(500);
const exited = new Promise((r) => child.once("exit", r));
child.kill("SIGTERM");
await exited;

console.log(
  `webhook delivery under load: ${SECONDS} s at ${RATE} events/s, 2 endpoints, ${kills} SIGKILLs of the deliverer`,
);
console.log(
  `load + drain: ${((Date.now() - started) / 1000).toFixed(1)} s (drain ${(drainMs / 1000).toFixed(1)} s)`,
);
console.log(
  "| endpoint | events queued | delivered (acked) | lost | requests | not verified | receipts the receiver did not ack (retried) | duplicates after an ack |",
);
console.log(
  "| -------- | ------------- | ----------------- | ---- | -------- | ------------ | ------------------------------------------- | ----------------------- |",
);
let lostTotal = 0;
receivers.forEach((r, i) => {
  const byId = new Map<string, ReceivedRequest[]>();
  for (const q of r.received) byId.set(q.id, [...(byId.get(q.id) ?? []), q]);
  let delivered = 0;
  let lost = 0;
  let dupUnacked = 0;
  let dupAcked = 0;
  for (const id of queued) {
    const got = byId.get(id) ?? [];
    const acked = got.filter((g) => g.answered !== undefined && g.answered < 300);
    if (acked.length === 0) {
      lost++;
      continue;
    }
    delivered++;
    // Every acknowledged receipt after the first: was the one before it left unacknowledged?
    let seenAck = false;
    for (const g of got) {
      const ok = g.answered !== undefined && g.answered < 300;
      if (ok && seenAck) dupAcked++;
      if (ok) seenAck = true;
    }
    const unackedBeforeFirstAck = got.findIndex((g) => g.answered !== undefined && g.answered < 300);
    dupUnacked += unackedBeforeFirstAck; // receipts before the ack: retries the receiver asked for
  }
  lostTotal += lost;
  const unverified = r.received.filter((q) => !q.verified).length;
  console.log(
    `| ${i + 1} (${i === 0 ? "12%" : "25%"} 500s) | ${queued.size} | ${delivered} | ${lost} | ${r.received.length} | ${unverified} | ${dupUnacked} | ${dupAcked} |`,
  );
});
console.log(lostTotal === 0 ? "lost: 0" : `LOST: ${lostTotal}`);
for (const r of receivers) await r.close();
await rm(dir, { recursive: true, force: true });
