import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import { collectDefaultMetrics, Registry } from "prom-client";
import { ClientsFile } from "../core/clients.js";
import { type Config, loadConfig } from "../core/config.js";
import { DETECTION_KIND, type Detection } from "../core/detection.js";
import { DETECTION_JOB_KIND, type DetectionJob } from "../core/detection-job.js";
import { DETECTION_POLICY_KIND, type DetectionPolicy } from "../core/detection-policy.js";
import { createPolicyFiles } from "../platform/local/policy-files.js";
import { createLogEventRecorder } from "../platform/local/event-recorder.js";
import { openLocalResourceStore } from "../platform/local/resource-store.js";
import { createLocalScheduler } from "../platform/local/scheduler.js";
import { createLocalUsageCounter } from "../platform/local/usage-counter.js";
import { createLocalWindowCounter } from "../platform/local/window-counter.js";
import { createLocalWorkloadRunner } from "../platform/local/workload-runner.js";
import { buildOperator, type Operator, type OperatorPorts, operatorMetrics } from "./build-operator.js";
import { jobSettingsFromEnv } from "./job-settings.js";
import { componentLogger, processLogger } from "./logging.js";
import { objectStoreFor } from "./object-stores.js";
import { loadAttestationSigner } from "./attestation-keys.js";
import { loadOrCreateDevClient, loadSigningKey } from "./secrets.js";
import { packageVersion } from "./submit.js";
import { openClients, serveApi } from "./serve-api.js";
import { storedRevocations } from "../api/auth/revocations.js";
import { envForSteps } from "./step-env.js";
import { endpointsOf } from "../core/webhooks.js";
import { webhookSettingsFrom } from "../core/webhook-settings.js";
import { webhookSenderFor } from "./webhooks.js";

/**
 * The standalone adapters of the operator's ports: resources on disk (durable, atomic writes), objects in
 * a local directory, an in-process scheduler, steps as local processes (warm workers per step kind), and
 * events as log lines. The API shares the stores and the object store.
 */
async function standalonePorts(config: Config, dataDir: string, log: Logger): Promise<OperatorPorts> {
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
  const policies = await openLocalResourceStore<DetectionPolicy>({
    dir: path.join(dataDir, "resources", "detectionpolicies"),
    kind: DETECTION_POLICY_KIND,
    revision,
    maxObjectBytes: config.maxResourceBytes,
  });
  const objects = objectStoreFor(dataDir);
  await objects.ensureBucket(config.bucket);
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
  return {
    detections,
    jobs,
    objects,
    scheduler: createLocalScheduler({ capacity: config.concurrency }),
    runner,
    events: createLogEventRecorder(componentLogger(log, "events")),
    policies,
    webhookSender: webhookSenderFor(config),
  };
}

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
  const attestation = await loadAttestationSigner(config, {
    log: apiLog,
    serviceVersion: packageVersion(),
    generateInto: dataDir,
  });
  const ports = await standalonePorts(config, dataDir, log);
  const { detections, jobs, objects } = ports;
  const revocations = storedRevocations(objects, config.bucket, apiLog);
  const clients = await openClients(clientsSource, { log: apiLog, metrics, revocations });
  const usage = createLocalUsageCounter(path.join(dataDir, "usage"));
  // Throttling counters live in memory: one standalone process serves every request.
  const counters = createLocalWindowCounter();

  // The operator, wired as in every runtime (bin/build-operator.ts); its metrics share the API's registry.
  let operatorRef: Operator | undefined;
  let boundUrl: string | undefined;
  const operator = buildOperator(ports, {
    config,
    log,
    metrics: operatorMetrics(metrics, { current: () => operatorRef, jobs, capacity: config.concurrency }),
    jobSettings: jobSettingsFromEnv(process.env),
    webhooks: {
      endpoints: (id) => endpointsOf(id, clients.clients.get(id)?.webhooks),
      settings: webhookSettingsFrom(process.env),
      publicUrl: () => config.publicUrl ?? boundUrl,
    },
  });
  operatorRef = operator;

  // Policy files (DOCVERIFY_POLICIES) are written to the policy store before the reconcilers start, so the
  // policy controller validates them first.
  const policyFiles =
    config.policiesPath && ports.policies
      ? createPolicyFiles({
          path: config.policiesPath,
          store: ports.policies,
          log: componentLogger(log, "policy-files"),
          reloadSeconds: config.policiesReloadSeconds,
        })
      : undefined;
  await policyFiles?.start();
  // The reconcilers start before the port opens, so a ready answer means work will be picked up.
  await operator.start();
  const server = serveApi(
    {
      detections,
      jobs,
      objects,
      bucket: config.bucket,
      usage,
      counters,
      revocations,
      config,
      log: apiLog,
      metrics,
      ready: async () => ({ ok: true }),
      attestation,
    },
    {
      clients: clients.clients,
      signingKey,
      log,
      banner: (url) => {
        boundUrl = url;
        return `docverify standalone listening on ${url} (data in ${dataDir})`;
      },
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
      void (policyFiles?.stop() ?? Promise.resolve()).then(() => operator.stop()).then(resolve);
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  return 0;
}
