import type { Detection } from "../core/detection.js";
import type { DetectionJob } from "../core/detection-job.js";
import type { ResourceStore } from "../core/ports.js";
import type { Logger } from "../core/step-context.js";
import { createControllerLoop } from "./controller-loop.js";
import type { DetectionJobReconciler } from "./detection-job-reconciler.js";

export interface JobControllerOptions {
  jobs: ResourceStore<DetectionJob>;
  detections: ResourceStore<Detection>;
  reconciler: DetectionJobReconciler;
  log: Logger;
  /** Jobs reconciled at once. */
  concurrency?: number;
  /** Full relist as a safety net. */
  resyncMs?: number;
  /**
   * A detection event requeues its job after this delay, so a burst of detection updates costs one
   * job pass (the work queue collapses the adds).
   */
  detectionEventDelayMs?: number;
}

/**
 * Drives the DetectionJob reconciler on the controller loop (controller-loop.ts): job events enqueue the
 * job; events of a detection carrying a batchId enqueue that job (its counts and completion depend on
 * them). The jobs are relisted periodically as a safety net.
 */
export function createDetectionJobController(opts: JobControllerOptions) {
  const { jobs, detections, reconciler, log } = opts;
  const delay = opts.detectionEventDelayMs ?? 250;
  const loop = createControllerLoop({
    kind: "job",
    reconcile: (name) => reconciler.reconcile(name),
    concurrency: opts.concurrency ?? 2,
    log,
    resyncMs: opts.resyncMs,
  });
  const { queue } = loop;

  loop.watch(jobs, "detectionjobs", (j) => queue.add(j.metadata.name), { resync: true });
  loop.watch(detections, "detections", (d) => {
    if (d.spec.batchId) queue.addAfter(d.spec.batchId, delay);
  });

  return {
    queue,
    async start(): Promise<void> {
      await loop.start();
      log.info("detection job controller started");
    },
    stop: loop.stop,
  };
}
