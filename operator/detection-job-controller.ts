import type { Detection } from "../core/detection.js";
import type { DetectionJob } from "../core/detection-job.js";
import type { ResourceStore, WatchHandle } from "../core/ports.js";
import type { Resource } from "../core/resource.js";
import type { Logger } from "../core/step-context.js";
import type { DetectionJobReconciler } from "./detection-job-reconciler.js";
import { WorkQueue } from "./work-queue.js";

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
 * Keeps a watch on a store alive: list, watch from the list's version, and on Gone (or any watch error)
 * list and watch again; `onObject` gets every listed and changed object.
 */
function keepWatching<T extends Resource>(
  store: ResourceStore<T>,
  what: string,
  onObject: (obj: T) => void,
  log: Logger,
) {
  let watch: WatchHandle | undefined;
  let stopped = false;
  async function relistAndWatch(): Promise<void> {
    if (stopped) return;
    watch?.stop();
    const { items, resourceVersion } = await store.list();
    for (const o of items) onObject(o);
    if (stopped) return;
    watch = store.watch(
      { resourceVersion },
      (ev) => onObject(ev.object),
      (err) => {
        log.warn({ err: err.message, what }, "watch ended; relisting");
        void relistAndWatch().catch((e) => {
          log.error({ err: e, what }, "relist failed; retrying in 1 s");
          setTimeout(() => void relistAndWatch(), 1000).unref();
        });
      },
    );
  }
  return {
    start: relistAndWatch,
    stop() {
      stopped = true;
      watch?.stop();
    },
  };
}

/**
 * Drives the DetectionJob reconciler: job events enqueue the job; events of a detection carrying a
 * batchId enqueue that job (its counts and completion depend on them). One reconcile per job at a time,
 * with `requeueAfter` and per-job error backoff; a periodic relist of the jobs catches anything missed.
 */
export function createDetectionJobController(opts: JobControllerOptions) {
  const { jobs, detections, reconciler, log } = opts;
  const failures = new Map<string, number>();
  const delay = opts.detectionEventDelayMs ?? 250;
  let resyncTimer: NodeJS.Timeout | undefined;

  const queue = new WorkQueue({
    concurrency: opts.concurrency ?? 2,
    handler: async (name) => {
      const res = await reconciler.reconcile(name);
      failures.delete(name);
      if (res.requeue) queue.add(name);
      else if (res.requeueAfterMs !== undefined) queue.addAfter(name, res.requeueAfterMs);
    },
    onError: (name, err) => {
      const n = (failures.get(name) ?? 0) + 1;
      failures.set(name, n);
      const retryInMs = Math.min(60_000, 250 * 2 ** Math.min(n, 8));
      log.error({ job: name, err, retryInMs }, "job reconcile failed; will retry");
      queue.addAfter(name, retryInMs);
    },
  });

  const jobWatch = keepWatching(jobs, "detectionjobs", (j) => queue.add(j.metadata.name), log);
  const detectionWatch = keepWatching(
    detections,
    "detections",
    (d) => {
      if (d.spec.batchId) queue.addAfter(d.spec.batchId, delay);
    },
    log,
  );

  return {
    queue,
    async start(): Promise<void> {
      await jobWatch.start();
      await detectionWatch.start();
      resyncTimer = setInterval(() => {
        void jobs
          .list()
          .then(({ items }) => {
            for (const j of items) queue.add(j.metadata.name);
          })
          .catch((err) => log.error({ err }, "periodic relist of jobs failed"));
      }, opts.resyncMs ?? 30_000);
      resyncTimer.unref();
      log.info("detection job controller started");
    },
    async stop(): Promise<void> {
      jobWatch.stop();
      detectionWatch.stop();
      if (resyncTimer) clearInterval(resyncTimer);
      queue.close();
      await queue.idle();
    },
  };
}
