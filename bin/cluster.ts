import http from "node:http";
import type { Logger } from "pino";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { type Config, ConfigError, loadConfig } from "../core/config.js";
import { DETECTION_KIND, DETECTION_PLURAL, type Detection } from "../core/detection.js";
import { DETECTION_JOB_KIND, DETECTION_JOB_PLURAL, type DetectionJob } from "../core/detection-job.js";
import {
  DETECTION_POLICY_KIND,
  DETECTION_POLICY_PLURAL,
  type DetectionPolicy,
} from "../core/detection-policy.js";
import type { ObjectStore, WorkloadRunner } from "../core/ports.js";
import { createKubeEventRecorder } from "../platform/kube/event-recorder.js";
import { createLeaderElector } from "../platform/kube/leader-election.js";
import { createPodRunner } from "../platform/kube/pod-runner.js";
import { createInformerStore } from "../platform/kube/informer.js";
import { createKubeResourceStore } from "../platform/kube/resource-store.js";
import { createRedisScheduler } from "../platform/redis/scheduler.js";
import { createStepQueueRunner, type StepQueueRunner } from "../platform/redis/step-queues.js";
import { STEP_NAMES } from "../core/detection.js";
import { createRedisUsageCounter } from "../platform/redis/usage-counter.js";
import { createRedisWindowCounter } from "../platform/redis/window-counter.js";
import { createS3ObjectStore, s3ConfigFromEnv } from "../platform/s3/object-store.js";
import {
  leaderIdentity,
  leaderTimings,
  loadKubeConfig,
  resolveNamespace,
  stepModeFromEnv,
  stepPodOptionsFromEnv,
} from "./cluster-config.js";
import { buildOperator, type Operator, type OperatorPorts, operatorMetrics } from "./build-operator.js";
import { jobSettingsFromEnv } from "./job-settings.js";
import { componentLogger, processLogger } from "./logging.js";
import { loadAttestationSigner } from "./attestation-keys.js";
import { packageVersion } from "./submit.js";
import { loadSigningKey } from "./secrets.js";
import { storedRevocations } from "../api/auth/revocations.js";
import { openClients, serveApi, urlFor } from "./serve-api.js";
import { watchClientsFile } from "../api/auth/clients-reload.js";
import { endpointsOf } from "../core/webhooks.js";
import { webhookSettingsFrom } from "../core/webhook-settings.js";
import { webhookSenderFor } from "./webhooks.js";

/**
 * The cluster runtime's two mains. Wiring only: the same api (createApp) and the same operator as
 * standalone (bin/build-operator.ts), over the Kubernetes, S3 and Redis adapters.
 *
 *   docverify operator   leader-elected; the leader runs the Detection controller and runs steps: a Pod per
 *                        step (DOCVERIFY_STEP_MODE=pods) or a job on the step queues (workers)
 *   docverify api        the REST API over Detections in the cluster
 */

function requireRedis(config: Config): string {
  if (!config.redisUrl)
    throw new ConfigError(
      "REDIS_URL is not set; set it to the Redis the operator and api share, e.g. redis://redis:6379.",
    );
  return config.redisUrl;
}

/** The service bucket on the S3-compatible store (S3_* settings), created when missing. */
export async function clusterObjectStore(config: Config): Promise<ObjectStore> {
  const objects = createS3ObjectStore(s3ConfigFromEnv(config).options);
  await objects.ensureBucket(config.bucket);
  return objects;
}

/** The Detections and DetectionJobs of `namespace`, as custom resources on the apiserver. */
export function clusterStores(kc: ReturnType<typeof loadKubeConfig>, namespace: string, config: Config) {
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

/** The DetectionPolicies of `namespace` (the operator validates them and resolves one per detection). */
export function clusterPolicyStore(kc: ReturnType<typeof loadKubeConfig>, namespace: string, config: Config) {
  return createKubeResourceStore<DetectionPolicy>(kc, {
    namespace,
    plural: DETECTION_POLICY_PLURAL,
    kind: DETECTION_POLICY_KIND,
    maxObjectBytes: config.maxResourceBytes,
  });
}

/**
 * The cluster's adapters of the operator's ports for one leadership term: the Kubernetes stores, the S3
 * object store and events given, a Redis scheduler built here, and the step runner `runner` builds (step
 * Pods in the operator; the scale bench's fake runner).
 */
export function clusterOperatorPorts(
  base: Pick<OperatorPorts, "detections" | "jobs" | "objects" | "events" | "policies">,
  config: Config,
  log: Logger,
  runner: (log: Logger) => WorkloadRunner,
): OperatorPorts {
  return {
    ...base,
    scheduler: createRedisScheduler({
      connection: requireRedis(config),
      capacity: config.concurrency,
      log: componentLogger(log, "scheduler"),
    }),
    runner: runner(componentLogger(log, "runner")),
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
  const redisUrl = requireRedis(config); // at start, not at the first leadership
  const stepMode = stepModeFromEnv(process.env);
  // pods: a Pod per step attempt; workers: the step queues the step-worker Deployments consume.
  const podOptions = stepMode === "pods" ? stepPodOptionsFromEnv(process.env) : undefined;
  const identity = leaderIdentity(process.env);
  const jobSettings = jobSettingsFromEnv(process.env);
  const objects = await clusterObjectStore(config);
  const { detections: store, jobs } = clusterStores(kc, namespace, config);
  const policies = clusterPolicyStore(kc, namespace, config);

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const events = createKubeEventRecorder(kc, {
    namespace,
    component: "docverify-operator",
    instance: identity,
    log: componentLogger(log, "events"),
  });

  /**
   * Only the leader admits work and runs steps: the scheduler's worker takes slots, so the scheduler and
   * the runner are built when leading starts, and the operator (bin/build-operator.ts) with them.
   */
  let operator: Operator | undefined;
  const opMetrics = operatorMetrics(metrics, {
    current: () => operator,
    jobs,
    capacity: config.concurrency,
  });
  // Webhooks: the leader's operator is the one sender (API replicas never send). Endpoints and secrets
  // come from the clients file, mounted into the operator as into the api and reloaded when it changes.
  const webhookSettings = webhookSettingsFrom(process.env);
  const webhookClients = config.clientsFile
    ? await watchClientsFile(config.clientsFile, { log: componentLogger(log, "clients") })
    : undefined;
  if (!webhookClients)
    log.warn("DOCVERIFY_CLIENTS_FILE is not set for the operator: no webhooks are delivered");
  let running: Promise<void> | undefined;
  // Every replica reports the step queues' depths (leader or not): the autoscaling hook (KEDA / HPA).
  const queueCounts =
    stepMode === "workers"
      ? createStepQueueRunner({ connection: redisUrl, log: componentLogger(log, "step-queues") })
      : undefined;
  if (queueCounts) registerStepQueueGauge(metrics, queueCounts);
  const startLeading = async () => {
    const ports: OperatorPorts = {
      ...clusterOperatorPorts({ detections: store, jobs, objects, events, policies }, config, log, (l) =>
        podOptions
          ? createPodRunner(kc, { ...podOptions, namespace, log: l })
          : createStepQueueRunner({ connection: redisUrl, log: l }),
      ),
      ...(webhookClients ? { webhookSender: webhookSenderFor(config) } : {}),
    };
    operator = buildOperator(ports, {
      config,
      log,
      metrics: opMetrics,
      jobSettings,
      ...(webhookClients
        ? {
            webhooks: {
              endpoints: (id: string) => endpointsOf(id, webhookClients.get(id)?.webhooks),
              settings: webhookSettings,
              publicUrl: () => config.publicUrl,
            },
          }
        : {}),
    });
    running = operator.start();
    await running;
  };
  /** Stop watches → close workers → quit Redis (the scheduler's connections): operator.stop's order. */
  const stopLeading = async () => {
    await running?.catch(() => undefined);
    await operator?.stop();
    operator = undefined;
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
    webhookClients?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await queueCounts?.close();
  });
  return exitCode;
}

/**
 * `docverify_step_queue_jobs{step,state}`: jobs per step queue and state (waiting, prioritized, delayed,
 * active), read from Redis at each scrape. waiting + prioritized + active is the demand on a step kind's
 * workers (BullMQ keeps prioritised jobs in a set of their own, so a list-length trigger undercounts):
 * the chart's KEDA ScaledObject and the HPA example scale the step-worker Deployments on it.
 */
export function registerStepQueueGauge(metrics: Registry, queues: Pick<StepQueueRunner, "counts">): void {
  new Gauge({
    name: "docverify_step_queue_jobs",
    help: "Jobs in each step work queue by state (waiting, prioritized, delayed, active); scale step workers on waiting+prioritized+active.",
    labelNames: ["step", "state"],
    registers: [metrics],
    async collect() {
      const counts = await queues.counts();
      for (const step of STEP_NAMES)
        for (const [state, n] of Object.entries(counts[step])) this.set({ step, state }, n);
    },
  });
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
  const signingKey = await loadSigningKey(config);
  const attestation = await loadAttestationSigner(config, { log, serviceVersion: packageVersion() });
  const objects = await clusterObjectStore(config);
  const revocations = storedRevocations(objects, config.bucket, log);
  const clients = await openClients({ file: config.clientsFile }, { log, metrics, revocations });
  const { detections: apiserverDetections, jobs } = clusterStores(kc, namespace, config);
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
      revocations,
      config,
      log: componentLogger(log, "api"),
      metrics,
      ready,
      attestation,
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
