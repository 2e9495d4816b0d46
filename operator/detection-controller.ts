import type { Detection } from "../core/detection.js";
import type { ResourceStore, Scheduler, WatchHandle, WorkloadRunner } from "../core/ports.js";
import type { Logger } from "../core/step-context.js";
import type { DetectionReconciler } from "./detection-reconciler.js";
import type { OperatorMetrics } from "./metrics.js";
import { WorkQueue } from "./work-queue.js";

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
 * Drives the reconciler: watch events, runner and scheduler notifications only enqueue a detection's name;
 * the work queue runs one reconcile per name at a time, with `requeueAfter` and per-key error backoff.
 * A watch that expires (Gone) is replaced by a relist and a new watch; a periodic relist catches anything missed.
 */
export function createDetectionController(opts: ControllerOptions) {
  const { store, reconciler, log } = opts;
  const failures = new Map<string, number>();
  let watch: WatchHandle | undefined;
  let resyncTimer: NodeJS.Timeout | undefined;
  let stopped = false;

  const queue = new WorkQueue({
    concurrency: opts.concurrency,
    handler: async (name) => {
      const res = await reconciler.reconcile(name);
      failures.delete(name);
      opts.metrics?.reconciled("ok");
      if (res.requeue) queue.add(name);
      else if (res.requeueAfterMs !== undefined) queue.addAfter(name, res.requeueAfterMs);
    },
    onError: (name, err) => {
      opts.metrics?.reconciled("error");
      const n = (failures.get(name) ?? 0) + 1;
      failures.set(name, n);
      const delay = Math.min(60_000, 250 * 2 ** Math.min(n, 8));
      log.error({ detection: name, err, retryInMs: delay }, "reconcile failed; will retry");
      queue.addAfter(name, delay);
    },
  });

  opts.runner.onChange((owner) => queue.add(owner));
  opts.scheduler.onAdmitted((key) => queue.add(key));

  async function relistAndWatch(): Promise<void> {
    if (stopped) return;
    watch?.stop();
    const { items, resourceVersion } = await store.list();
    for (const d of items) queue.add(d.metadata.name);
    watch = store.watch(
      { resourceVersion },
      (ev) => queue.add(ev.object.metadata.name),
      (err) => {
        log.warn({ err: err.message }, "watch ended; relisting");
        void relistAndWatch().catch((e) => {
          log.error({ err: e }, "relist failed; retrying in 1 s");
          setTimeout(() => void relistAndWatch(), 1000).unref();
        });
      },
    );
  }

  return {
    queue,
    async start(): Promise<void> {
      await relistAndWatch();
      const resyncMs = opts.resyncMs ?? 30_000;
      resyncTimer = setInterval(() => {
        void store
          .list()
          .then(({ items }) => {
            for (const d of items) queue.add(d.metadata.name);
          })
          .catch((err) => log.error({ err }, "periodic relist failed"));
      }, resyncMs);
      resyncTimer.unref();
      log.info("detection controller started");
    },
    async stop(): Promise<void> {
      stopped = true;
      watch?.stop();
      if (resyncTimer) clearInterval(resyncTimer);
      queue.close();
      await queue.idle();
    },
  };
}
