import type { Detection } from "../core/detection.js";
import type { ResourceStore, Scheduler, WorkloadRunner } from "../core/ports.js";
import type { Logger } from "../core/step-context.js";
import { createControllerLoop } from "./controller-loop.js";
import type { DetectionReconciler } from "./detection-reconciler.js";
import type { OperatorMetrics } from "./metrics.js";

export interface ControllerOptions {
  store: ResourceStore<Detection>;
  scheduler: Scheduler;
  runner: WorkloadRunner;
  reconciler: DetectionReconciler;
  log: Logger;
  /** Reconciles running at once (different detections). */
  concurrency: number;
  /** Full relist as a safety net. */
  resyncMs?: number;
  metrics?: OperatorMetrics;
}

/**
 * Drives the Detection reconciler on the controller loop (controller-loop.ts): Detection events, runner
 * notifications (a step's workload changed) and scheduler notifications (a detection was admitted) each
 * enqueue the detection's name; the Detections are relisted periodically as a safety net.
 */
export function createDetectionController(opts: ControllerOptions) {
  const { store, reconciler, log } = opts;
  const loop = createControllerLoop({
    kind: "detection",
    reconcile: (name) => reconciler.reconcile(name),
    concurrency: opts.concurrency,
    log,
    resyncMs: opts.resyncMs,
    onPass: (outcome) => opts.metrics?.reconciled(outcome),
  });
  const { queue } = loop;

  opts.runner.onChange((owner) => queue.add(owner));
  opts.scheduler.onAdmitted((key) => queue.add(key));
  loop.watch(store, "detections", (d) => queue.add(d.metadata.name), { resync: true });

  return {
    queue,
    async start(): Promise<void> {
      await loop.start();
      log.info("detection controller started");
    },
    stop: loop.stop,
  };
}
