/**
 * The operator of the scale bench (bench/scale.ts), as its own process so its memory is its own: the
 * operator the service runs (bin/build-operator.ts: the Detection and DetectionJob controllers and
 * reconcilers, the archive, the upload sweeper, the archive pruner, metrics) over the cluster's adapters
 * (bin/cluster.ts: the Kubernetes resource stores, the Redis scheduler, the S3 object store), with the fast
 * fake step runner (bench/fake-step-runner.ts) in place of step Pods and no Kubernetes Events. Settings
 * come from the same environment as `docverify operator`.
 *   SIGUSR2: prints {"rss":…,"heapUsed":…,"started":…} (bytes; workloads started) on stdout, after a
 *            full garbage collection when node runs with --expose-gc.
 *   SIGTERM: stops.
 */
import pino from "pino";
import { Registry } from "prom-client";
import { loadConfig } from "../core/config.js";
import { buildOperator, type Operator, operatorMetrics } from "../bin/build-operator.js";
import { clusterObjectStore, clusterOperatorPorts, clusterStores } from "../bin/cluster.js";
import { loadKubeConfig, resolveNamespace } from "../bin/cluster-config.js";
import { jobSettingsFromEnv } from "../bin/job-settings.js";
import { createFakeStepRunner } from "./fake-step-runner.js";

const config = loadConfig(process.env, { host: "127.0.0.1" });
const log = pino({ level: process.env.BENCH_OPERATOR_LOG_LEVEL ?? "warn" }, pino.destination(2));
const kc = loadKubeConfig(process.env);
const namespace = resolveNamespace(kc, process.env);
const objects = await clusterObjectStore(config);
const runner = createFakeStepRunner({ objects, bucket: config.bucket });
const ports = clusterOperatorPorts(
  { ...clusterStores(kc, namespace, config), objects },
  config,
  log,
  () => runner,
);
let operator: Operator | undefined;
operator = buildOperator(ports, {
  config,
  log,
  metrics: operatorMetrics(new Registry(), { current: () => operator, capacity: config.concurrency }),
  jobSettings: jobSettingsFromEnv(process.env),
});
await operator.start();
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
    await operator?.stop();
    process.exit(0);
  })();
});
