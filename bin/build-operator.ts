import { createObjectStoreMemory } from "../platform/memory/object-store-memory.js";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { Config } from "../core/config.js";
import type { Detection } from "../core/detection.js";
import type { DetectionJob } from "../core/detection-job.js";
import type { DetectionPolicy } from "../core/detection-policy.js";
import type { EventRecorder } from "../core/event-recorder.js";
import {
  type Clock,
  type ObjectStore,
  type ResourceStore,
  type Scheduler,
  systemClock,
  type WebhookSender,
  type WorkloadRunner,
} from "../core/ports.js";
import type { WebhookSettings } from "../core/webhook-settings.js";
import type { WebhookEndpointLookup } from "../core/webhooks.js";
import { createWebhookDeliverer } from "../operator/webhook-deliverer.js";
import { createArchivePruner } from "../operator/archive-pruner.js";
import { createDetectionController } from "../operator/detection-controller.js";
import { createDetectionJobController } from "../operator/detection-job-controller.js";
import {
  createDetectionJobReconciler,
  type JobReconcilerSettings,
} from "../operator/detection-job-reconciler.js";
import { createDetectionReconciler, reconcilerSettingsOf } from "../operator/detection-reconciler.js";
import { createOperatorMetrics, type OperatorMetrics } from "../operator/metrics.js";
import { createPolicyController, policySourceOf } from "../operator/policy-controller.js";
import { createUploadSweeper } from "../operator/upload-sweeper.js";
import { jobsByPhase } from "./job-settings.js";
import { componentLogger } from "./logging.js";

/**
 * The one wiring of the operator, for every runtime: the standalone service (bin/standalone.ts), the
 * cluster's leader (bin/cluster.ts, once per leadership term) and the scale bench (bench/scale-operator.ts).
 * A runtime builds the adapters of the operator's ports (`OperatorPorts`: local, or Kubernetes + Redis +
 * S3, or a bench's fake step runner) and hands them here; everything else, the controllers, reconcilers and
 * periodic passes and the order they start and stop in, is built once, in `operatorComponents` below.
 *
 * Adding a part that runs in both runtimes (a webhook outbox deliverer, say): one entry in
 * `operatorComponents`, built from the ports and the configuration. If it needs an adapter that differs by
 * runtime (a tenant-memory store, say), that adapter is a new field of `OperatorPorts`, a port in
 * core/ports.ts, and each runtime's ports builder provides it (the compiler lists the builders:
 * `standalonePorts` in bin/standalone.ts, `clusterOperatorPorts` in bin/cluster.ts). Choosing another
 * way to run steps (warm workers on per-step-kind queues) is the `runner` a runtime puts in its ports.
 */

/** The adapters of the operator's ports, as one runtime provides them. */
export interface OperatorPorts {
  detections: ResourceStore<Detection>;
  jobs: ResourceStore<DetectionJob>;
  objects: ObjectStore;
  /** Admission of detections (a slot each), by priority and capacity. */
  scheduler: Scheduler;
  /** Runs the steps: child processes standalone, Pods in the cluster. */
  runner: WorkloadRunner;
  /** Events for people watching a detection (Kubernetes Events, or log lines); none in the bench. */
  events?: EventRecorder;
  /**
   * The tenants' DetectionPolicies (custom resources; standalone, the local store the policy files are
   * written to: bin/policy-files.ts). Absent (the scale bench): every detection gets the default rules.
   */
  policies?: ResourceStore<DetectionPolicy>;
  /** Sends webhook deliveries (platform/http/webhook-sender.ts); none: no webhooks (the scale bench). */
  webhookSender?: WebhookSender;
}

export interface OperatorOptions {
  config: Config;
  /** The process's logger; each part logs under its `component` (bin/logging.ts). */
  log: Logger;
  metrics: OperatorMetrics;
  jobSettings: JobReconcilerSettings;
  clock?: Clock;
  /** The clients' webhook endpoints and the deliverer's settings (with `ports.webhookSender`). */
  webhooks?: {
    endpoints: WebhookEndpointLookup;
    settings: WebhookSettings;
    /** The service's public URL for the events' `url` (standalone learns its port once listening). */
    publicUrl?: () => string | undefined;
  };
}

/** A part of the operator: started in order, stopped in reverse order. */
export interface OperatorComponent {
  /** The part's name (its log `component`). */
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface Operator {
  readonly ports: OperatorPorts;
  readonly components: readonly OperatorComponent[];
  /** Detections waiting in the Detection controller's work queue. */
  queueDepth(): number;
  /** Webhook deliveries waiting or in flight. */
  webhookBacklog(): number;
  /** Starts every part in order (the controllers first, so work is picked up before anything else). */
  start(): Promise<void>;
  /**
   * Stops the parts in reverse order, then closes the runner and the scheduler (STYLE.md's shutdown:
   * stop watches → close workers → quit Redis). Safe to call after a failed or partial start.
   */
  stop(): Promise<void>;
}

/**
 * Every part of the operator, in start order. The one list to extend: a new component here runs in the
 * standalone service, in the cluster's leader and in the scale bench alike.
 */
function operatorComponents(
  ports: OperatorPorts,
  opts: OperatorOptions,
): {
  components: OperatorComponent[];
  queueDepth: () => number;
  webhookBacklog: () => number;
} {
  const { config, log, metrics } = opts;
  const clock = opts.clock ?? systemClock;
  const { detections, jobs, objects, scheduler, runner, events, policies } = ports;
  const bucket = config.bucket;
  // The tenant memory lives in the object store in both runtimes (platform/memory/, issue 23).
  const memory = createObjectStoreMemory(objects, bucket);

  // Webhooks: the one deliverer of the runtime (only the leader's operator in the cluster), whose outbox
  // the reconcilers write to in the step that makes a detection or job terminal.
  const deliverer =
    ports.webhookSender && opts.webhooks
      ? createWebhookDeliverer({
          objects,
          bucket,
          sender: ports.webhookSender,
          endpoints: opts.webhooks.endpoints,
          settings: opts.webhooks.settings,
          clock,
          log: componentLogger(log, "webhooks"),
          metrics,
          ...(opts.webhooks.publicUrl ? { publicUrl: opts.webhooks.publicUrl } : {}),
        })
      : undefined;
  const webhooks = deliverer ? { webhooks: deliverer.outbox } : {};

  const reconciler = createDetectionReconciler({
    store: detections,
    objects,
    bucket,
    memory,
    scheduler,
    runner,
    clock,
    log: componentLogger(log, "reconciler"),
    metrics,
    ...(events ? { events } : {}),
    jobs,
    settings: reconcilerSettingsOf(config),
    ...(policies ? { policies: policySourceOf(policies) } : {}),
    ...webhooks,
  });
  const policyController = policies
    ? createPolicyController({ store: policies, clock, log: componentLogger(log, "policy-controller") })
    : undefined;
  const controller = createDetectionController({
    store: detections,
    scheduler,
    runner,
    reconciler,
    log: componentLogger(log, "controller"),
    concurrency: Math.max(4, config.concurrency),
    metrics,
  });
  const jobController = createDetectionJobController({
    jobs,
    detections,
    reconciler: createDetectionJobReconciler({
      jobs,
      detections,
      objects,
      clock,
      log: componentLogger(log, "job-reconciler"),
      settings: opts.jobSettings,
      metrics,
      ...webhooks,
    }),
    log: componentLogger(log, "job-controller"),
  });
  const uploadSweeper = createUploadSweeper({
    objects,
    bucket,
    detections,
    clock,
    log: componentLogger(log, "upload-sweeper"),
    metrics,
  });
  const archivePruner = createArchivePruner({
    memory,
    objects,
    bucket,
    clock,
    log: componentLogger(log, "archive-pruner"),
    retentionSeconds: config.retentionSeconds,
    metrics,
  });

  /** A periodic pass as a component: runs now, then every `seconds`. */
  const periodic = (
    name: string,
    pass: { start(intervalMs: number): void; stop(): Promise<void> },
    seconds: number,
  ): OperatorComponent => ({
    name,
    start: async () => pass.start(seconds * 1000),
    stop: () => pass.stop(),
  });

  return {
    components: [
      { name: "controller", start: () => controller.start(), stop: () => controller.stop() },
      { name: "job-controller", start: () => jobController.start(), stop: () => jobController.stop() },
      ...(policyController
        ? [
            {
              name: "policy-controller",
              start: () => policyController.start(),
              stop: () => policyController.stop(),
            },
          ]
        : []),
      periodic("upload-sweeper", uploadSweeper, config.uploadSweepSeconds),
      periodic("archive-pruner", archivePruner, config.archiveSweepSeconds),
      ...(deliverer
        ? [{ name: "webhook-deliverer", start: () => deliverer.start(), stop: () => deliverer.stop() }]
        : []),
    ],
    queueDepth: () => controller.queue.length,
    webhookBacklog: () => deliverer?.backlog() ?? 0,
  };
}

/** Builds the operator of one runtime from its ports (nothing starts until `start`). */
export function buildOperator(ports: OperatorPorts, opts: OperatorOptions): Operator {
  const { components, queueDepth, webhookBacklog } = operatorComponents(ports, opts);
  const started: OperatorComponent[] = [];
  let stopping: Promise<void> | undefined;
  return {
    ports,
    components,
    queueDepth,
    webhookBacklog,
    async start() {
      for (const c of components) {
        if (stopping) return;
        started.push(c);
        await c.start();
      }
    },
    stop() {
      stopping ??= (async () => {
        for (const c of [...started].reverse()) {
          try {
            await c.stop();
          } catch (err) {
            opts.log.error({ err, component: c.name }, "stopping an operator part failed");
          }
        }
        await ports.runner.close();
        await ports.scheduler.close();
      })();
      return stopping;
    },
  };
}

/**
 * The operator's Prometheus metrics, registered once per process on `registry`. Their gauges read the
 * operator running now (`current`: in the cluster, the leader's operator of this term, or none).
 */
export function operatorMetrics(
  registry: Registry,
  sources: {
    current: () => Operator | undefined;
    /** The DetectionJobs, for the jobs-by-phase gauge. */
    jobs?: ResourceStore<DetectionJob>;
    /** The capacity reported while no operator runs (a follower). */
    capacity: number;
  },
): OperatorMetrics {
  const { jobs } = sources;
  return createOperatorMetrics(registry, {
    queueDepth: () => sources.current()?.queueDepth() ?? 0,
    scheduler: async () =>
      (await sources.current()?.ports.scheduler.stats()) ?? {
        waiting: 0,
        admitted: 0,
        capacity: sources.capacity,
      },
    ...(jobs ? { jobPhases: async () => jobsByPhase((await jobs.list()).items) } : {}),
    webhookBacklog: () => sources.current()?.webhookBacklog() ?? 0,
  });
}
