import { mkdir } from "node:fs/promises";
import path from "node:path";
import { collectDefaultMetrics, Registry } from "prom-client";
import { ClientsFile } from "../core/clients.js";
import { loadConfig } from "../core/config.js";
import { DETECTION_KIND, type Detection } from "../core/detection.js";
import { DETECTION_JOB_KIND, type DetectionJob } from "../core/detection-job.js";
import { systemClock } from "../core/ports.js";
import { createDetectionController } from "../operator/detection-controller.js";
import { createDetectionJobController } from "../operator/detection-job-controller.js";
import { createDetectionJobReconciler } from "../operator/detection-job-reconciler.js";
import { createDetectionReconciler, reconcilerSettingsOf } from "../operator/detection-reconciler.js";
import { createOperatorMetrics } from "../operator/metrics.js";
import { createArchivePruner } from "../operator/archive-pruner.js";
import { createUploadSweeper } from "../operator/upload-sweeper.js";
import { createLogEventRecorder } from "../platform/local/event-recorder.js";
import { openLocalResourceStore } from "../platform/local/resource-store.js";
import { createLocalScheduler } from "../platform/local/scheduler.js";
import { createLocalUsageCounter } from "../platform/local/usage-counter.js";
import { createLocalWindowCounter } from "../platform/local/window-counter.js";
import { createLocalWorkloadRunner } from "../platform/local/workload-runner.js";
import { jobSettingsFromEnv, jobsByPhase } from "./job-settings.js";
import { componentLogger, processLogger } from "./logging.js";
import { objectStoreFor } from "./object-stores.js";
import { loadOrCreateDevClient, loadSigningKey } from "./secrets.js";
import { openClients, serveApi } from "./serve-api.js";
import { envForSteps } from "./step-env.js";

/**
 * `docverify standalone`: the api, the reconciler and the steps on one machine. Data lives in
 * DOCVERIFY_DATA_DIR (resources, objects, usage counters, keys); steps run as local processes.
 */
export async function runStandalone(): Promise<number> {
  const config = loadConfig(process.env);
  const dataDir = path.resolve(config.dataDir);
  await mkdir(dataDir, { recursive: true });
  const log = processLogger("standalone", config.logLevel);

  const signingKey = await loadSigningKey(config, dataDir);
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const apiLog = componentLogger(log, "api");
  let clientsSource: Parameters<typeof openClients>[0];
  if (config.clientsFile) {
    clientsSource = { file: config.clientsFile };
  } else {
    const dev = await loadOrCreateDevClient(dataDir);
    clientsSource = { fixed: ClientsFile.parse({ clients: [dev.client] }) };
    const banner = dev.created
      ? `Created a development client (no DOCVERIFY_CLIENTS_FILE given); it is kept in ${dev.file}:\n  client_id:     ${dev.client.client_id}\n  client_secret: ${dev.client.client_secret}\n`
      : `Using the development client ${dev.client.client_id} from ${dev.file} (no DOCVERIFY_CLIENTS_FILE given).\n`;
    process.stderr.write(banner);
  }
  const clients = await openClients(clientsSource, { log: apiLog, metrics });

  const revision = { value: 0 };
  const detections = await openLocalResourceStore<Detection>({
    dir: path.join(dataDir, "resources", "detections"),
    kind: DETECTION_KIND,
    revision,
    maxObjectBytes: config.maxResourceBytes,
  });
  const jobs = await openLocalResourceStore<DetectionJob>({
    dir: path.join(dataDir, "resources", "detectionjobs"),
    kind: DETECTION_JOB_KIND,
    revision,
    maxObjectBytes: config.maxResourceBytes,
  });
  const objects = objectStoreFor(dataDir);
  await objects.ensureBucket(config.bucket);
  const scheduler = createLocalScheduler({ capacity: config.concurrency });
  const entry = process.argv[1];
  if (!entry) throw new Error("Cannot tell which script is running (process.argv[1] is empty).");
  const runner = createLocalWorkloadRunner({
    command: process.execPath,
    args: [...process.execArgv, entry],
    workers: config.workers,
    baseEnv: { ...envForSteps(process.env), DOCVERIFY_DATA_DIR: dataDir },
    log: componentLogger(log, "runner"),
    pidDir: path.join(dataDir, "workers"),
    memoryLimitMb: config.stepMemoryMb,
  });
  const usage = createLocalUsageCounter(path.join(dataDir, "usage"));
  // Throttling counters live in memory: one standalone process serves every request.
  const counters = createLocalWindowCounter();

  let controllerRef: ReturnType<typeof createDetectionController> | undefined;
  const operatorMetrics = createOperatorMetrics(metrics, {
    queueDepth: () => controllerRef?.queue.length ?? 0,
    scheduler: () => scheduler.stats(),
    jobPhases: async () => jobsByPhase((await jobs.list()).items),
  });
  const reconciler = createDetectionReconciler({
    store: detections,
    objects,
    bucket: config.bucket,
    scheduler,
    runner,
    clock: systemClock,
    log: componentLogger(log, "reconciler"),
    metrics: operatorMetrics,
    events: createLogEventRecorder(componentLogger(log, "events")),
    jobs,
    settings: reconcilerSettingsOf(config),
  });
  const controller = createDetectionController({
    store: detections,
    scheduler,
    runner,
    reconciler,
    log: componentLogger(log, "controller"),
    concurrency: Math.max(4, config.concurrency),
    metrics: operatorMetrics,
  });
  controllerRef = controller;
  const jobController = createDetectionJobController({
    jobs,
    detections,
    reconciler: createDetectionJobReconciler({
      jobs,
      detections,
      objects,
      clock: systemClock,
      log: componentLogger(log, "job-reconciler"),
      settings: jobSettingsFromEnv(process.env),
      metrics: operatorMetrics,
    }),
    log: componentLogger(log, "job-controller"),
  });

  const uploadSweeper = createUploadSweeper({
    objects,
    bucket: config.bucket,
    detections,
    clock: systemClock,
    log: componentLogger(log, "upload-sweeper"),
    metrics: operatorMetrics,
  });

  const archivePruner = createArchivePruner({
    objects,
    bucket: config.bucket,
    clock: systemClock,
    log: componentLogger(log, "archive-pruner"),
    retentionSeconds: config.retentionSeconds,
    metrics: operatorMetrics,
  });

  // The reconcilers start before the port opens, so a ready answer means work will be picked up.
  await controller.start();
  await jobController.start();
  uploadSweeper.start(config.uploadSweepSeconds * 1000);
  archivePruner.start(config.archiveSweepSeconds * 1000);
  const server = serveApi(
    {
      detections,
      jobs,
      objects,
      bucket: config.bucket,
      usage,
      counters,
      config,
      log: apiLog,
      metrics,
      ready: async () => ({ ok: true }),
    },
    {
      clients: clients.clients,
      signingKey,
      log,
      banner: (url) => `docverify standalone listening on ${url} (data in ${dataDir})`,
    },
  );

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, "shutting down");
      server.close();
      clients.close();
      void (async () => {
        await uploadSweeper.stop();
        await archivePruner.stop();
        await jobController.stop();
        await controller.stop();
        await runner.close();
        await scheduler.close();
        resolve();
      })();
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  return 0;
}
