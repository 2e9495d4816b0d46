import { type BackoffPolicy, backoffMs } from "../core/backoff.js";
import type { ResourceStore, WatchHandle } from "../core/ports.js";
import type { Resource } from "../core/resource.js";
import type { Logger } from "../core/step-context.js";
import { WorkQueue } from "./work-queue.js";

/** What a controller does after a reconcile pass: nothing, run again now, or run again after a delay. */
export interface ReconcileResult {
  requeue?: boolean;
  requeueAfterMs?: number;
}

/** After a reconcile that threw: 0.5 s, 1 s, 2 s, ... capped at a minute (per key, reset by a success). */
export const RECONCILE_ERROR_BACKOFF: BackoffPolicy = { firstMs: 500, maxMs: 60_000 };

/** A relist after a watch could not be restarted waits this long before trying again. */
const RELIST_RETRY_MS = 1_000;

export interface ControllerLoopOptions {
  /** What a key names, used as the log field of a failed pass: "detection" or "job". */
  kind: string;
  reconcile(key: string): Promise<ReconcileResult>;
  /** Reconciles running at once (different keys). */
  concurrency: number;
  log: Logger;
  /** How often the resynced stores are listed again in full, as a safety net (default 30 s). */
  resyncMs?: number;
  /** Told the outcome of every pass (metrics). */
  onPass?(outcome: "ok" | "error"): void;
}

interface Watched {
  what: string;
  start(): Promise<void>;
  stop(): void;
  relist?(): Promise<void>;
}

/**
 * The loop both controllers run, in the manner of controller-runtime: events only enqueue keys; a keyed
 * work queue runs one reconcile per key at a time, honours `requeue` / `requeueAfterMs`, and retries a
 * pass that threw with per-key exponential backoff. Each watched store is listed, then watched from the
 * list's version; a watch that ends (410 Gone or any error) is replaced by a new list and watch, and the
 * stores marked `resync` are listed again periodically so nothing missed stays missed.
 */
export function createControllerLoop(opts: ControllerLoopOptions) {
  const { log } = opts;
  const failures = new Map<string, number>();
  const watched: Watched[] = [];
  let resyncTimer: NodeJS.Timeout | undefined;

  const queue = new WorkQueue({
    concurrency: opts.concurrency,
    handler: async (key) => {
      const res = await opts.reconcile(key);
      failures.delete(key);
      opts.onPass?.("ok");
      if (res.requeue) queue.add(key);
      else if (res.requeueAfterMs !== undefined) queue.addAfter(key, res.requeueAfterMs);
    },
    onError: (key, err) => {
      opts.onPass?.("error");
      const n = (failures.get(key) ?? 0) + 1;
      failures.set(key, n);
      const retryInMs = backoffMs(n, RECONCILE_ERROR_BACKOFF);
      log.error({ [opts.kind]: key, err, retryInMs }, "reconcile failed; will retry");
      queue.addAfter(key, retryInMs);
    },
  });

  return {
    queue,

    /**
     * Keeps a watch on `store` for the loop's lifetime; `onObject` gets every listed and changed object
     * and enqueues what it concerns. Call before start().
     */
    watch<T extends Resource>(
      store: ResourceStore<T>,
      what: string,
      onObject: (obj: T) => void,
      options: { resync?: boolean } = {},
    ): void {
      const w = keepWatching(store, what, onObject, log);
      watched.push(
        options.resync
          ? {
              ...w,
              relist: async () => {
                const { items } = await store.list();
                for (const o of items) onObject(o);
              },
            }
          : w,
      );
    },

    async start(): Promise<void> {
      for (const w of watched) await w.start();
      resyncTimer = setInterval(() => {
        for (const w of watched) {
          void w.relist?.().catch((err) => log.error({ err, what: w.what }, "periodic relist failed"));
        }
      }, opts.resyncMs ?? 30_000);
      resyncTimer.unref();
    },

    async stop(): Promise<void> {
      for (const w of watched) w.stop();
      if (resyncTimer) clearInterval(resyncTimer);
      queue.close();
      await queue.idle();
    },
  };
}

export type ControllerLoop = ReturnType<typeof createControllerLoop>;

/**
 * Keeps a watch on a store alive: list, watch from the list's version, and on Gone (or any watch error)
 * list and watch again; `onObject` gets every listed and changed object.
 */
function keepWatching<T extends Resource>(
  store: ResourceStore<T>,
  what: string,
  onObject: (obj: T) => void,
  log: Logger,
): Watched {
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
          log.error({ err: e, what }, `relist failed; retrying in ${RELIST_RETRY_MS / 1000} s`);
          setTimeout(() => void relistAndWatch(), RELIST_RETRY_MS).unref();
        });
      },
    );
  }
  return {
    what,
    start: relistAndWatch,
    stop() {
      stopped = true;
      watch?.stop();
    },
  };
}
