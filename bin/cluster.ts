import http from "node:http";
import type { Logger } from "pino";
import { collectDefaultMetrics, Registry } from "prom-client";
import { type Config, ConfigError, loadConfig } from "../core/config.js";
import { DETECTION_KIND, DETECTION_PLURAL, type Detection } from "../core/detection.js";
import { DETECTION_JOB_KIND, DETECTION_JOB_PLURAL, type DetectionJob } from "../core/detection-job.js";
import { type ObjectStore, type Scheduler, systemClock } from "../core/ports.js";
import { createDetectionController } from "../operator/detection-controller.js";
import { createDetectionJobController } from "../operator/detection-job-controller.js";
import { createDetectionJobReconciler } from "../operator/detection-job-reconciler.js";
import { createDetectionReconciler, reconcilerSettingsOf } from "../operator/detection-reconciler.js";
import { createOperatorMetrics } from "../operator/metrics.js";
import { type ArchivePruner, createArchivePruner } from "../operator/archive-pruner.js";
import { createUploadSweeper, type UploadSweeper } from "../operator/upload-sweeper.js";
import { createKubeEventRecorder } from "../platform/kube/event-recorder.js";
import { createLeaderElector } from "../platform/kube/leader-election.js";
import { createPodRunner } from "../platform/kube/pod-runner.js";
import { createInformerStore } from "../platform/kube/informer.js";
import { createKubeResourceStore } from "../platform/kube/resource-store.js";
import { createRedisScheduler } from "../platform/redis/scheduler.js";
import { createRedisUsageCounter } from "../platform/redis/usage-counter.js";
import { createRedisWindowCounter } from "../platform/redis/window-counter.js";
import { createS3ObjectStore, s3ConfigFromEnv } from "../platform/s3/object-store.js";
import {
  leaderIdentity,
  leaderTimings,
  loadKubeConfig,
  resolveNamespace,
  stepPodOptionsFromEnv,
} from "./cluster-config.js";
import { jobSettingsFromEnv, jobsByPhase } from "./job-settings.js";
import { componentLogger, processLogger } from "./logging.js";
import { loadSigningKey } from "./secrets.js";
import { openClients, serveApi, urlFor } from "./serve-api.js";

/**
 * The cluster runtime's two mains. Wiring only: the same api (createApp) and the same reconciler and
 * controller as standalone, over the Kubernetes, S3 and Redis adapters.
 *
 *   docverify operator   leader-elected; the leader runs the Detection controller and creates step Pods
 *   docverify api        the REST API over Detections in the cluster
 */

function requireRedis(config: Config): string {
  if (!config.redisUrl)
    throw new ConfigError(
      "REDIS_URL is not set; set it to the Redis the operator and api share, e.g. redis://redis:6379.",
    );
  return config.redisUrl;
}

async function objectStore(config: Config): Promise<ObjectStore> {
  const objects = createS3ObjectStore(s3ConfigFromEnv(config).options);
  await objects.ensureBucket(config.bucket);
  return objects;
}

function stores(kc: ReturnType<typeof loadKubeConfig>, namespace: string, config: Config) {
  return {
    detections: createKubeResourceStore<Detection>(kc, {
      namespace,
      plural: DETECTION_PLURAL,
      kind: DETECTION_KIND,
      maxObjectBytes: config.maxResourceBytes,
    }),
    jobs: createKubeResourceStore<DetectionJob>(kc, {
      namespace,
      plural: DETECTION_JOB_PLURAL,
      kind: DETECTION_JOB_KIND,
      maxObjectBytes: config.maxResourceBytes,
    }),
  };
}

/** Waits for SIGTERM or SIGINT, then runs `shutdown` once. */
function onSignal(log: Logger, shutdown: (signal: string) => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, "shutting down");
      shutdown(signal).then(resolve, (err: unknown) => {
        log.error({ err }, "shutdown failed");
        resolve();
      });
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
}

/** `docverify operator`. */
export async function runOperator(): Promise<number> {
  const config = loadConfig(process.env, { host: "0.0.0.0" });
  const log = processLogger("operator", config.logLevel);
  const kc = loadKubeConfig(process.env);
  const namespace = resolveNamespace(kc, process.env);
  const redisUrl = requireRedis(config);
  const podOptions = stepPodOptionsFromEnv(process.env);
  const identity = leaderIdentity(process.env);
  const jobSettings = jobSettingsFromEnv(process.env);
  const objects = await objectStore(config);
  const { detections: store, jobs } = stores(kc, namespace, config);

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  let scheduler: Scheduler | undefined;
  let controller: ReturnType<typeof createDetectionController> | undefined;
  let jobController: ReturnType<typeof createDetectionJobController> | undefined;
  let uploadSweeper: UploadSweeper | undefined;
  let archivePruner: ArchivePruner | undefined;
  const operatorMetrics = createOperatorMetrics(metrics, {
    queueDepth: () => controller?.queue.length ?? 0,
    scheduler: async () =>
      scheduler ? scheduler.stats() : { waiting: 0, admitted: 0, capacity: config.concurrency },
    jobPhases: async () => jobsByPhase((await jobs.list()).items),
  });
  const events = createKubeEventRecorder(kc, {
    namespace,
    component: "docverify-operator",
    instance: identity,
    log: componentLogger(log, "events"),
  });

  /** Only the leader admits work and runs steps: the scheduler's worker takes slots, so it starts here. */
  let running: Promise<void> | undefined;
  let runner: ReturnType<typeof createPodRunner> | undefined;
  const startLeading = async () => {
    scheduler = createRedisScheduler({
      connection: redisUrl,
      capacity: config.concurrency,
      log: componentLogger(log, "scheduler"),
    });
    runner = createPodRunner(kc, { ...podOptions, namespace, log: componentLogger(log, "runner") });
    const reconciler = createDetectionReconciler({
      store,
      objects,
      bucket: config.bucket,
      scheduler,
      runner,
      clock: systemClock,
      log: componentLogger(log, "reconciler"),
      metrics: operatorMetrics,
      events,
      jobs,
      settings: reconcilerSettingsOf(config),
    });
    controller = createDetectionController({
      store,
      scheduler,
      runner,
      reconciler,
      log: componentLogger(log, "controller"),
      concurrency: Math.max(4, config.concurrency),
      metrics: operatorMetrics,
    });
    jobController = createDetectionJobController({
      jobs,
      detections: store,
      reconciler: createDetectionJobReconciler({
        jobs,
        detections: store,
        objects,
        clock: systemClock,
        log: componentLogger(log, "job-reconciler"),
        settings: jobSettings,
        metrics: operatorMetrics,
      }),
      log: componentLogger(log, "job-controller"),
    });
    uploadSweeper = createUploadSweeper({
      objects,
      bucket: config.bucket,
      detections: store,
      clock: systemClock,
      log: componentLogger(log, "upload-sweeper"),
      metrics: operatorMetrics,
    });
    archivePruner = createArchivePruner({
      objects,
      bucket: config.bucket,
      clock: systemClock,
      log: componentLogger(log, "archive-pruner"),
      retentionSeconds: config.retentionSeconds,
      metrics: operatorMetrics,
    });
    running = (async () => {
      await controller?.start();
      await jobController?.start();
      uploadSweeper?.start(config.uploadSweepSeconds * 1000);
      archivePruner?.start(config.archiveSweepSeconds * 1000);
    })();
    await running;
  };
  /** Stop watches → close workers → quit Redis (the scheduler's connections). */
  const stopLeading = async () => {
    await running?.catch(() => undefined);
    await uploadSweeper?.stop();
    await archivePruner?.stop();
    await jobController?.stop();
    await controller?.stop();
    await runner?.close();
    await scheduler?.close();
    controller = undefined;
    jobController = undefined;
    uploadSweeper = undefined;
    archivePruner = undefined;
    runner = undefined;
    scheduler = undefined;
  };

  let exitCode = 0;
  let shuttingDown = false;
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = leaderTimings(process.env);
  const elector = createLeaderElector(kc, {
    namespace,
    name: process.env.DOCVERIFY_LEASE_NAME || "docverify-operator",
    identity,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    log: componentLogger(log, "leader-election"),
    onStartedLeading: async () => {
      process.stderr.write(`docverify operator ${identity} is the leader in namespace ${namespace}\n`);
      await startLeading();
    },
    onStoppedLeading: async () => {
      if (shuttingDown) return;
      // Like client-go's callers: a replica that lost the Lease stops its work and exits; it is restarted
      // as a follower, so no two replicas ever reconcile at once.
      log.error("lost the leadership; stopping");
      exitCode = 1;
      process.kill(process.pid, "SIGTERM");
    },
    onNewLeader: (leader) => log.info({ leader }, "leader observed"),
  });

  const server = http.createServer((req, res) => {
    if (req.url === "/metrics") {
      metrics.metrics().then(
        (body) => {
          res.writeHead(200, { "content-type": metrics.contentType });
          res.end(body);
        },
        () => {
          res.writeHead(500).end();
        },
      );
      return;
    }
    if (req.url === "/healthz" || req.url === "/readyz") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: "ok", leader: elector.isLeader() }));
      return;
    }
    res.writeHead(404, { "content-type": "application/json" }).end('{"detail":"Not Found"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  process.stderr.write(
    `docverify operator ${identity} started in namespace ${namespace}; metrics on ${urlFor(config.host, port)}/metrics\n`,
  );
  elector.start();

  await onSignal(log, async () => {
    shuttingDown = true;
    await stopLeading();
    await elector.stop(); // releases the Lease: another replica takes over at once
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return exitCode;
}

/** `docverify api`. */
export async function runApi(): Promise<number> {
  const config = loadConfig(process.env, { host: "0.0.0.0" });
  const log = processLogger("api", config.logLevel);
  const kc = loadKubeConfig(process.env);
  const namespace = resolveNamespace(kc, process.env);
  if (!config.clientsFile) {
    throw new ConfigError(
      "DOCVERIFY_CLIENTS_FILE is not set; the api in a cluster reads its clients from that file (the chart mounts it from a Secret).",
    );
  }
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const clients = await openClients({ file: config.clientsFile }, { log, metrics });
  const signingKey = await loadSigningKey(config);
  const objects = await objectStore(config);
  const { detections: apiserverDetections, jobs } = stores(kc, namespace, config);
  // Lists are served from an informer's cache of the live Detections (list + watch), not the apiserver.
  const detections = createInformerStore(apiserverDetections, { log: componentLogger(log, "informer") });
  // Not awaited: an apiserver that does not answer yet makes the api not ready, not fail to start.
  void detections.start();
  const usage = createRedisUsageCounter({ connection: requireRedis(config) });
  // Throttling and rate-limit counters: shared by every api replica.
  const counters = createRedisWindowCounter({ connection: requireRedis(config) });

  // Readiness: the apiserver answers for Detections (a get of a name that never exists is a cheap probe).
  let readyUntil = 0;
  const ready = async (): Promise<{ ok: boolean; reason?: string }> => {
    if (Date.now() < readyUntil) return { ok: true };
    try {
      if (!detections.synced()) throw new Error("the informer has not listed the Detections yet");
      await detections.get("readiness-probe");
      readyUntil = Date.now() + 5_000;
      return { ok: true };
    } catch (err) {
      return {
        ok: false,
        reason: `the Kubernetes API is not answering: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  };

  const server = serveApi(
    {
      detections,
      jobs,
      objects,
      bucket: config.bucket,
      usage,
      counters,
      config,
      log: componentLogger(log, "api"),
      metrics,
      ready,
    },
    {
      clients: clients.clients,
      signingKey,
      log,
      banner: (url) => `docverify api listening on ${url} (namespace ${namespace})`,
    },
  );

  await onSignal(log, async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    detections.stop();
    clients.close();
    await usage.close();
    await counters.close();
  });
  return 0;
}
