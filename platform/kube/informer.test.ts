import { describe, expect, it } from "vitest";
import { type ResourceStore, StoreError } from "../../core/ports.js";
import type { Resource } from "../../core/resource.js";
import { MemoryResourceStore } from "../local/memory-resource-store.js";
import { createInformerStore } from "./informer.js";

interface Thing extends Resource {
  spec: { n: number };
}
const thing = (name: string, labels?: Record<string, string>): Thing => ({
  apiVersion: "test.io/v1",
  kind: "Thing",
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { n: 1 },
});

/** The memory store, counting lists, with a way to end every open watch (as a 410 Gone would). */
function backing() {
  const store = new MemoryResourceStore<Thing>("Thing");
  const errors = new Set<(e: StoreError) => void>();
  let lists = 0;
  const wrapped: ResourceStore<Thing> = {
    create: (o) => store.create(o),
    get: (n) => store.get(n),
    list: (o) => {
      lists++;
      return store.list(o);
    },
    update: (o) => store.update(o),
    updateStatus: (o) => store.updateStatus(o),
    delete: (n) => store.delete(n),
    watch(opts, onEvent, onError) {
      errors.add(onError);
      const h = store.watch(opts, onEvent, onError);
      return {
        stop() {
          errors.delete(onError);
          h.stop();
        },
      };
    },
  };
  return {
    store,
    wrapped,
    lists: () => lists,
    endWatches: () => {
      for (const e of [...errors]) e(new StoreError("Gone", "too old resource version"));
    },
  };
}

const names = async (s: ResourceStore<Thing>, labels?: Record<string, string>) =>
  (await s.list(labels ? { labels } : {})).items.map((t) => t.metadata.name);
const eventually = async (check: () => Promise<void>) => {
  const end = Date.now() + 10_000;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
};

describe("the informer store (list + watch cache)", () => {
  it("lists from its cache (no request per list), with label selectors, kept current by the watch", async () => {
    const b = backing();
    await b.store.create(thing("a", { client: "x" }));
    await b.store.create(thing("c", { client: "y" }));
    const informer = createInformerStore(b.wrapped);
    await informer.start();
    expect(informer.synced()).toBe(true);
    const listsAfterStart = b.lists();
    expect(await names(informer)).toEqual(["a", "c"]);
    expect(await names(informer, { client: "x" })).toEqual(["a"]);
    // Its own create is listed at once; another writer's arrives with the watch.
    await informer.create(thing("b", { client: "x" }));
    expect(await names(informer, { client: "x" })).toEqual(["a", "b"]);
    await b.store.create(thing("d", { client: "x" }));
    await eventually(async () => expect(await names(informer, { client: "x" })).toEqual(["a", "b", "d"]));
    await b.store.delete("a");
    await eventually(async () => expect(await names(informer)).toEqual(["b", "c", "d"]));
    const cur = (await b.store.get("c"))!;
    await b.store.update({ ...cur, metadata: { ...cur.metadata, labels: { client: "x" } } });
    await eventually(async () => expect(await names(informer, { client: "x" })).toEqual(["b", "c", "d"]));
    expect(b.lists()).toBe(listsAfterStart);
    // A get reads the store itself.
    expect((await informer.get("d"))?.metadata.name).toBe("d");
    informer.stop();
  });

  it("a watch that ends is replaced by a new list and watch: what changed meanwhile is not missed", async () => {
    const b = backing();
    await b.store.create(thing("a"));
    const informer = createInformerStore(b.wrapped);
    await informer.start();
    b.endWatches();
    await b.store.create(thing("b"));
    await b.store.delete("a");
    await eventually(async () => expect(await names(informer)).toEqual(["b"]));
    await b.store.create(thing("c"));
    await eventually(async () => expect(await names(informer)).toEqual(["b", "c"]));
    informer.stop();
  });

  it("a delete through it shows the object as being deleted at once, then as the watch tells", async () => {
    const b = backing();
    const informer = createInformerStore(b.wrapped);
    await informer.start();
    await informer.create({ ...thing("a"), metadata: { name: "a", finalizers: ["f"] } });
    await informer.create(thing("b"));
    await informer.delete("a");
    await informer.delete("b");
    const a = (await informer.list()).items.find((t) => t.metadata.name === "a");
    expect(a?.metadata.deletionTimestamp).toBeDefined();
    const b2 = (await informer.list()).items.find((t) => t.metadata.name === "b");
    expect(b2 === undefined || b2.metadata.deletionTimestamp !== undefined).toBe(true);
    await eventually(async () => expect(await names(informer)).toEqual(["a"]));
    const cur = (await b.store.get("a"))!;
    await b.store.update({ ...cur, metadata: { ...cur.metadata, finalizers: [] } });
    await eventually(async () => expect(await names(informer)).toEqual([]));
    informer.stop();
  });
});

describe("a consistent list", () => {
  it("asks the store itself, so it sees another writer's create before the watch delivers it", async () => {
    const b = backing();
    // The watch never delivers: the cache lags every write made around it (another replica's create).
    const silent: ResourceStore<Thing> = { ...b.wrapped, watch: () => ({ stop() {} }) };
    const informer = createInformerStore(silent);
    await informer.start();
    await b.store.create(thing("other-replica", { k: "v" }));
    expect(await names(informer, { k: "v" })).toEqual([]);
    const before = b.lists();
    const { items } = await informer.list({ labels: { k: "v" }, consistent: true });
    expect(items.map((t) => t.metadata.name)).toEqual(["other-replica"]);
    expect(b.lists()).toBe(before + 1);
    informer.stop();
  });
});
