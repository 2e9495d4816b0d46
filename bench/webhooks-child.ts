/**
 * The deliverer process of `npm run bench:webhooks` (bench/webhooks.ts kills it with SIGKILL and starts it
 * again): the real webhook deliverer over a local object store and the real sender, queueing one event
 * every 1/BENCH_RATE s until BENCH_END_AT as the reconciler does, printing `Q <webhook-id>` once an event
 * is in the outbox and `B <backlog>` every 200 ms.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import { systemClock } from "../core/ports.js";
import { detectionEvent, endpointsOf, type WebhookEndpointConfig } from "../core/webhooks.js";
import { createWebhookDeliverer } from "../operator/webhook-deliverer.js";
import { createWebhookSender } from "../platform/http/webhook-sender.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";

const dir = process.env.BENCH_DIR!;
const endAt = Number(process.env.BENCH_END_AT);
const rate = Number(process.env.BENCH_RATE ?? 20);
const endpoints = JSON.parse(process.env.BENCH_ENDPOINTS!) as WebhookEndpointConfig[];
const ports = endpoints.map((e) => Number(new URL(e.url).port));
const CLIENT = "bench-client";
const BUCKET = "docverify";

const objects = createLocalObjectStore(path.join(dir, "objects"));
await objects.ensureBucket(BUCKET);
const settings = {
  retryDelaysMs: [200, 500, 1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000, 8000, 8000],
  timeoutMs: 1000,
  maxResponseBytes: 64 * 1024,
  endpointConcurrency: 8,
  totalConcurrency: 32,
  circuitFailures: 25,
  circuitPauseMs: 1000,
  replayPollMs: 1000,
};
const deliverer = createWebhookDeliverer({
  objects,
  bucket: BUCKET,
  sender: createWebhookSender({
    allowPrivate: false,
    allowAddresses: ["127.0.0.1"],
    allowedPorts: ports.map((p) => [p, p] as const),
    timeoutMs: settings.timeoutMs,
    maxResponseBytes: settings.maxResponseBytes,
  }),
  endpoints: (id) => (id === CLIENT ? endpointsOf(id, endpoints) : []),
  settings,
  clock: systemClock,
  log: pino({ level: "silent" }),
});
await deliverer.start();

const counterFile = path.join(dir, "counter");
let seq = Number(await readFile(counterFile, "utf8").catch(() => "0"));
const backlogTimer = setInterval(() => process.stdout.write(`B ${deliverer.backlog()}\n`), 200);
process.once("SIGTERM", () => {
  clearInterval(backlogTimer);
  void deliverer.stop().then(() => process.exit(0));
});

const interval = 1000 / rate;
let next = Date.now();
while (Date.now() < endAt) {
  seq++;
  await writeFile(counterFile, String(seq));
  const name = `det-bench${String(seq).padStart(21, "0")}`;
  const event = detectionEvent(
    { name, clientId: CLIENT },
    { phase: "Completed", completedAt: new Date().toISOString(), score: seq % 100 },
    "https://verify.example.com",
    new Date(),
  );
  await deliverer.outbox.queue(event);
  process.stdout.write(`Q ${event.id}\n`);
  next += interval;
  await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
}
process.stdout.write("DONE\n");
