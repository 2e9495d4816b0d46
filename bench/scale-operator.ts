/**
 * The operator of the scale bench (bench/scale.ts), as its own process so its memory is its own: the real
 * Detection controller, reconciler (status transitions, archive), archive pruner and metrics over the real
 * Kubernetes resource store, the Redis scheduler and the S3 object store, wired as bin/cluster.ts wires
 * them, with the fast fake step runner (bench/fake-step-runner.ts) in place of step Pods. Settings come
 * from the same environment as `docverify operator`.
 *   SIGUSR2: prints {"rss":…,"heapUsed":…,"started":…} (bytes; workloads started) on stdout, after a
 *            full garbage collection when node runs with --expose-gc.
 *   SIGTERM: stops.
 */
import pino from "pino";
import { Registry } from "prom-client";
import { loadConfig } from "../core/config.js";
import { DETECTION_KIND, DETECTION_PLURAL, type Detection } from "../core/detection.js";
import { DETECTION_JOB_KIND, DETECTION_JOB_PLURAL, type DetectionJob } from "../core/detection-job.js";
import { systemClock } from "../core/ports.js";
import { loadKubeConfig, resolveNamespace } from "../bin/cluster-config.js";
import { createArchivePruner } from "../operator/archive-pruner.js";
import { createDetectionController } from "../operator/detection-controller.js";
import { createDetectionReconciler, reconcilerSettingsOf } from "../operator/detection-reconciler.js";
import { createOperatorMetrics } from "../operator/metrics.js";
import { createKubeResourceStore } from "../platform/kube/resource-store.js";
import { createRedisScheduler } from "../platform/redis/scheduler.js";
import { createS3ObjectStore, s3ConfigFromEnv } from "../platform/s3/object-store.js";
import { createFakeStepRunner } from "./fake-step-runner.js";

const config = loadConfig(process.env, { host: "127.0.0.1" });
const log = pino({ level: process.env.BENCH_OPERATOR_LOG_LEVEL ?? "warn" }, pino.destination(2));
const kc = loadKubeConfig(process.env);
const namespace = resolveNamespace(kc, process.env);
const store = createKubeResourceStore<Detection>(kc, {
  namespace,
  plural: DETECTION_PLURAL,
  kind: DETECTION_KIND,
  maxObjectBytes: config.maxResourceBytes,
});
const jobs = createKubeResourceStore<DetectionJob>(kc, {
  namespace,
  plural: DETECTION_JOB_PLURAL,
  kind: DETECTION_JOB_KIND,
  maxObjectBytes: config.maxResourceBytes,
});
const objects = createS3ObjectStore(s3ConfigFromEnv(config).options);
await objects.ensureBucket(config.bucket);
const scheduler = createRedisScheduler({
  connection: config.redisUrl ?? "",
  capacity: config.concurrency,
  log: log.child({ component: "scheduler" }),
});
const runner = createFakeStepRunner({ objects, bucket: config.bucket });
let controller: ReturnType<typeof createDetectionController> | undefined;
const metrics = createOperatorMetrics(new Registry(), {
  queueDepth: () => controller?.queue.length ?? 0,
  scheduler: () => scheduler.stats(),
});
const reconciler = createDetectionReconciler({
  store,
  objects,
  bucket: config.bucket,
  scheduler,
  runner,
  clock: systemClock,
  log: log.child({ component: "reconciler" }),
  metrics,
  jobs,
  settings: reconcilerSettingsOf(config),
});
controller = createDetectionController({
  store,
  scheduler,
  runner,
  reconciler,
  log: log.child({ component: "controller" }),
  concurrency: Math.max(4, config.concurrency),
  metrics,
});
const pruner = createArchivePruner({
  objects,
  bucket: config.bucket,
  clock: systemClock,
  log: log.child({ component: "archive-pruner" }),
  retentionSeconds: config.retentionSeconds,
  metrics,
});
await controller.start();
pruner.start(config.archiveSweepSeconds * 1000);
process.stdout.write("scale operator ready\n");

process.on("SIGUSR2", () => {
  // With --expose-gc the figures are taken after a full collection (what is still held, not garbage).
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  process.stdout.write(
    `${JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, started: runner.started() })}\n`,
  );
});
process.once("SIGTERM", () => {
  void (async () => {
    await pruner.stop();
    await controller?.stop();
    await runner.close();
    await scheduler.close();
    process.exit(0);
  })();
});
