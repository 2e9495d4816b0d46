import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type ResourceStore, StoreError } from "../core/ports.js";
import type { Resource } from "../core/resource.js";
import { MemoryResourceStore } from "../platform/local/memory-resource-store.js";
import { type ControllerLoop, createControllerLoop, type ReconcileResult } from "./controller-loop.js";

const log = pino({ level: "silent" });

const obj = (name: string): Resource => ({
  apiVersion: "test/v1",
  kind: "Thing",
  metadata: { name },
  spec: {},
});

/** A real store whose current watch the test can end with an error, as an apiserver ends one with 410 Gone. */
function storeWithBreakableWatch() {
  const raw = new MemoryResourceStore<Resource>("Thing");
  let endWatch: ((err: StoreError) => void) | undefined;
  let watches = 0;
  const store: ResourceStore<Resource> = {
    create: (o) => raw.create(o),
    get: (n) => raw.get(n),
    list: (o) => raw.list(o),
    update: (o) => raw.update(o),
    updateStatus: (o) => raw.updateStatus(o),
    delete: (n) => raw.delete(n),
    watch(opts, onEvent, onError) {
      watches++;
      let ended = false;
      const handle = raw.watch(opts, onEvent, onError);
      endWatch = (err) => {
        if (ended) return;
        ended = true;
        handle.stop();
        onError(err);
      };
      return handle;
    },
  };
  return {
    store,
    raw,
    breakWatch: (err = new StoreError("Gone", "too old resource version")) => endWatch?.(err),
    watches: () => watches,
  };
}

/** Records reconciled keys and resolves waiters when a key has been seen `times` times. */
function recorder(answer: (key: string, n: number) => ReconcileResult | Error = () => ({})) {
  const seen = new Map<string, number>();
  const waiters: { key: string; times: number; resolve: () => void }[] = [];
  return {
    seen,
    reconcile: async (key: string): Promise<ReconcileResult> => {
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      for (const w of waiters.filter((w) => w.key === key && n >= w.times)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const a = answer(key, n);
      if (a instanceof Error) throw a;
      return a;
    },
    reconciled: (key: string, times = 1) =>
      (seen.get(key) ?? 0) >= times
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.push({ key, times, resolve })),
  };
}

const loops: ControllerLoop[] = [];
afterEach(async () => {
  for (const l of loops.splice(0)) await l.stop();
});

function loopWith(reconcile: (key: string) => Promise<ReconcileResult>, resyncMs?: number) {
  const loop = createControllerLoop({ kind: "thing", reconcile, concurrency: 2, log, resyncMs });
  loops.push(loop);
  return loop;
}

describe("the controller loop", () => {
  it("reconciles every listed object and every change", async () => {
    const { store } = storeWithBreakableWatch();
    await store.create(obj("a"));
    const r = recorder();
    const loop = loopWith(r.reconcile);
    loop.watch(store, "things", (o) => loop.queue.add(o.metadata.name));
    await loop.start();
    await r.reconciled("a");
    await store.create(obj("b"));
    await r.reconciled("b");
  });

  it("replaces a watch that ended (Gone) by a relist and a new watch, missing nothing", async () => {
    const s = storeWithBreakableWatch();
    const r = recorder();
    const loop = loopWith(r.reconcile);
    loop.watch(s.store, "things", (o) => loop.queue.add(o.metadata.name));
    await loop.start();
    expect(s.watches()).toBe(1);
    s.breakWatch();
    // Created while no watch runs: the relist finds it.
    await s.raw.create(obj("made-while-unwatched"));
    await r.reconciled("made-while-unwatched");
    expect(s.watches()).toBe(2);
    await s.store.create(obj("after"));
    await r.reconciled("after");
  });

  it("retries a pass that threw, with backoff, until it succeeds", async () => {
    const { store } = storeWithBreakableWatch();
    await store.create(obj("flaky"));
    const r = recorder((_key, n) => (n < 3 ? new Error(`pass ${n} failed`) : {}));
    const loop = loopWith(r.reconcile);
    loop.watch(store, "things", (o) => loop.queue.add(o.metadata.name));
    await loop.start();
    await r.reconciled("flaky", 3);
    expect(r.seen.get("flaky")).toBe(3);
  });

  it("honours requeue and requeueAfterMs", async () => {
    const { store } = storeWithBreakableWatch();
    await store.create(obj("again"));
    await store.create(obj("later"));
    const r = recorder((key, n) =>
      key === "again" ? { requeue: n < 2 } : n < 2 ? { requeueAfterMs: 20 } : {},
    );
    const loop = loopWith(r.reconcile);
    loop.watch(store, "things", (o) => loop.queue.add(o.metadata.name));
    await loop.start();
    await Promise.all([r.reconciled("again", 2), r.reconciled("later", 2)]);
  });

  it("relists the stores marked resync, and only those", async () => {
    const resynced = storeWithBreakableWatch();
    const other = storeWithBreakableWatch();
    await resynced.store.create(obj("r"));
    await other.store.create(obj("o"));
    const r = recorder();
    const loop = loopWith(r.reconcile, 10);
    loop.watch(resynced.store, "resynced", (o) => loop.queue.add(o.metadata.name), { resync: true });
    loop.watch(other.store, "other", (o) => loop.queue.add(o.metadata.name));
    await loop.start();
    // No event happens to "r" after the first list: only the periodic relist enqueues it again.
    await r.reconciled("r", 3);
    expect(r.seen.get("o")).toBe(1);
  });
});
