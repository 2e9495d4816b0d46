import { describe, expect, it } from "vitest";
import { isStoreError, type StoreError, type WatchEvent } from "../../core/ports.js";
import type { Resource } from "../../core/resource.js";
import { MemoryResourceStore } from "./memory-resource-store.js";

interface Thing extends Resource {
  spec: { size: number };
  status?: { phase: string };
}

const thing = (name: string, size = 1, labels?: Record<string, string>): Thing => ({
  apiVersion: "test.io/v1",
  kind: "Thing",
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { size },
});

const reason = (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: unknown) => (isStoreError(e) ? e.reason : `other: ${String(e)}`),
  );

/** Collects watch events until stopped; `next(n)` waits for n events in total. */
function collect(store: MemoryResourceStore<Thing>, resourceVersion?: string) {
  const events: WatchEvent<Thing>[] = [];
  const errors: StoreError[] = [];
  let wake: () => void = () => {};
  const handle = store.watch(
    resourceVersion === undefined ? {} : { resourceVersion },
    (e) => {
      events.push(e);
      wake();
    },
    (e) => {
      errors.push(e);
      wake();
    },
  );
  const until = async (ok: () => boolean) => {
    while (!ok()) await new Promise<void>((r) => (wake = r));
  };
  return {
    events,
    errors,
    handle,
    next: (n: number) => until(() => events.length >= n),
    failed: () => until(() => errors.length > 0),
  };
}

describe("MemoryResourceStore", () => {
  it("create sets uid, resourceVersion, generation and creationTimestamp", async () => {
    const now = new Date("2025-01-02T03:04:05.000Z");
    const store = new MemoryResourceStore<Thing>("Thing", { now: () => now });
    const created = await store.create(thing("a"));
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.resourceVersion).toBe("1");
    expect(created.metadata.generation).toBe(1);
    expect(created.metadata.creationTimestamp).toBe(now.toISOString());
    expect(await store.get("a")).toEqual(created);
    expect(await store.get("missing")).toBeUndefined();
  });

  it("rejects a taken name with AlreadyExists and an invalid name with Invalid", async () => {
    const store = new MemoryResourceStore<Thing>("Thing");
    await store.create(thing("a"));
    expect(await reason(store.create(thing("a")))).toBe("AlreadyExists");
    expect(await reason(store.create(thing("")))).toBe("Invalid");
    expect(await reason(store.create(thing("Upper")))).toBe("Invalid");
    expect(await reason(store.create(thing("../x")))).toBe("Invalid");
    expect(await reason(store.create(thing("x".repeat(254))))).toBe("Invalid");
  });

  it("no caller can change the store through a returned object: writes answer copies, reads frozen snapshots", async () => {
    const store = new MemoryResourceStore<Thing>("Thing");
    const created = await store.create(thing("a", 1));
    created.spec.size = 99;
    const got = await store.get("a");
    expect(Object.isFrozen(got!.spec)).toBe(true);
    expect(() => {
      got!.spec.size = 98;
    }).toThrow(TypeError);
    const [listed] = (await store.list()).items;
    expect(() => {
      listed!.spec.size = 97;
    }).toThrow(TypeError);
    expect((await store.get("a"))?.spec.size).toBe(1);
    // One snapshot per version, shared by readers; a write makes a new one.
    expect(await store.get("a")).toBe(got);
    await store.updateStatus({ ...structuredClone(got!), status: { phase: "Seen" } });
    expect(await store.get("a")).not.toBe(got);
  });

  it("lists in name order, filtered by every given label", async () => {
    const store = new MemoryResourceStore<Thing>("Thing");
    await store.create(thing("c", 1, { team: "x", tier: "1" }));
    await store.create(thing("a", 1, { team: "x" }));
    await store.create(thing("b", 1, { team: "y" }));
    const all = await store.list();
    expect(all.items.map((o) => o.metadata.name)).toEqual(["a", "b", "c"]);
    expect(all.resourceVersion).toBe("3");
    expect((await store.list({ labels: { team: "x" } })).items.map((o) => o.metadata.name)).toEqual([
      "a",
      "c",
    ]);
    expect(
      (await store.list({ labels: { team: "x", tier: "1" } })).items.map((o) => o.metadata.name),
    ).toEqual(["c"]);
    expect((await store.list({ labels: { team: "z" } })).items).toEqual([]);
  });

  it("update writes spec and metadata, ignores status, and bumps generation only when spec changes", async () => {
    const store = new MemoryResourceStore<Thing>("Thing");
    const v1 = await store.create(thing("a", 1));
    const v2 = await store.update({
      ...v1,
      metadata: { ...v1.metadata, labels: { k: "v" } },
      status: { phase: "ignored" },
    });
    expect(v2.metadata.generation).toBe(1);
    expect(v2.metadata.labels).toEqual({ k: "v" });
    expect(v2.status).toBeUndefined();
    expect(Number(v2.metadata.resourceVersion)).toBeGreaterThan(Number(v1.metadata.resourceVersion));
    const v3 = await store.update({ ...v2, spec: { size: 2 } });
    expect(v3.metadata.generation).toBe(2);
    expect(v3.spec.size).toBe(2);
    expect(v3.metadata.uid).toBe(v1.metadata.uid);
    expect(v3.metadata.creationTimestamp).toBe(v1.metadata.creationTimestamp);
  });

  it("updateStatus writes status only", async () => {
    const store = new MemoryResourceStore<Thing>("Thing");
    const v1 = await store.create(thing("a", 1));
    const v2 = await store.updateStatus({ ...v1, spec: { size: 5 }, status: { phase: "Running" } });
    expect(v2.status).toEqual({ phase: "Running" });
    expect(v2.spec.size).toBe(1);
    expect(v2.metadata.generation).toBe(1);
  });

  it("refuses an object over the size guard with TooLarge on create, update and updateStatus, changing nothing", async () => {
    const store = new MemoryResourceStore<Thing>("Thing", { maxObjectBytes: 2048 });
    const big = "x".repeat(4096);
    const tooBig = store.create({ ...thing("a"), metadata: { name: "a", annotations: { big } } });
    expect(await reason(tooBig)).toBe("TooLarge");
    expect((await tooBig.catch((e: Error) => e)) as Error).toHaveProperty(
      "message",
      expect.stringMatching(/^Thing a would be \d+ bytes, over the 2048-byte limit of one resource/),
    );
    expect(await store.get("a")).toBeUndefined();
    const v1 = await store.create(thing("a"));
    expect(await reason(store.updateStatus({ ...v1, status: { phase: big } }))).toBe("TooLarge");
    expect(await reason(store.update({ ...v1, metadata: { ...v1.metadata, annotations: { big } } }))).toBe(
      "TooLarge",
    );
    const after = await store.get("a");
    expect(after?.metadata.resourceVersion).toBe(v1.metadata.resourceVersion);
    expect(after?.status).toBeUndefined();
    // Just under the limit is fine; the default guard is 512 KiB.
    const room = 2048 - Buffer.byteLength(JSON.stringify({ ...v1, status: { phase: "" } })) - 64;
    await store.updateStatus({ ...v1, status: { phase: "y".repeat(room) } });
    const dflt = new MemoryResourceStore<Thing>("Thing");
    const d1 = await dflt.create(thing("b"));
    const d2 = await dflt.updateStatus({ ...d1, status: { phase: "z".repeat(400_000) } });
    expect(await reason(dflt.updateStatus({ ...d2, status: { phase: "z".repeat(600_000) } }))).toBe(
      "TooLarge",
    );
  });

  it("answers Conflict to a write with a stale resourceVersion and accepts one without it", async () => {
    const store = new MemoryResourceStore<Thing>("Thing");
    const v1 = await store.create(thing("a", 1));
    await store.updateStatus({ ...v1, status: { phase: "Running" } });
    expect(await reason(store.update({ ...v1, spec: { size: 2 } }))).toBe("Conflict");
    expect(await reason(store.updateStatus({ ...v1, status: { phase: "Failed" } }))).toBe("Conflict");
    const { resourceVersion: _, ...meta } = v1.metadata;
    const forced = await store.updateStatus({ ...v1, metadata: meta, status: { phase: "Completed" } });
    expect(forced.status?.phase).toBe("Completed");
    expect(await reason(store.update(thing("missing")))).toBe("NotFound");
    expect(await reason(store.updateStatus(thing("missing")))).toBe("NotFound");
  });

  it("deletes at once without finalizers, and with them sets deletionTimestamp until they are emptied", async () => {
    const store = new MemoryResourceStore<Thing>("Thing");
    await store.create(thing("plain"));
    await store.delete("plain");
    expect(await store.get("plain")).toBeUndefined();
    expect(await reason(store.delete("plain"))).toBe("NotFound");

    const v1 = await store.create({
      ...thing("guarded"),
      metadata: { name: "guarded", finalizers: ["x/cleanup"] },
    });
    await store.delete("guarded");
    const marked = await store.get("guarded");
    expect(marked?.metadata.deletionTimestamp).toBeDefined();
    expect(Number(marked?.metadata.resourceVersion)).toBeGreaterThan(Number(v1.metadata.resourceVersion));
    // A second delete changes nothing.
    await store.delete("guarded");
    expect((await store.get("guarded"))?.metadata.resourceVersion).toBe(marked?.metadata.resourceVersion);
    // An update cannot clear deletionTimestamp; emptying the finalizers removes the object.
    const kept = await store.update({
      ...marked!,
      metadata: { ...marked!.metadata, deletionTimestamp: undefined },
    });
    expect(kept.metadata.deletionTimestamp).toBe(marked?.metadata.deletionTimestamp);
    await store.update({ ...kept, metadata: { ...kept.metadata, finalizers: [] } });
    expect(await store.get("guarded")).toBeUndefined();
  });

  it("resourceVersions grow across stores sharing a revision", async () => {
    const revision = { value: 0 };
    const a = new MemoryResourceStore<Thing>("A", { revision });
    const b = new MemoryResourceStore<Thing>("B", { revision });
    const rvs = [
      (await a.create(thing("x"))).metadata.resourceVersion,
      (await b.create(thing("x"))).metadata.resourceVersion,
      (await a.create(thing("y"))).metadata.resourceVersion,
    ];
    expect(rvs).toEqual(["1", "2", "3"]);
    expect(revision.value).toBe(3);
  });

  it("watch without a version replays current objects as ADDED, then every change in order", async () => {
    const store = new MemoryResourceStore<Thing>("Thing");
    await store.create(thing("a"));
    const w = collect(store);
    const b = await store.create(thing("b"));
    await store.updateStatus({ ...b, status: { phase: "Running" } });
    await store.delete("a");
    await w.next(4);
    expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      "ADDED a",
      "ADDED b",
      "MODIFIED b",
      "DELETED a",
    ]);
    w.handle.stop();
    await store.create(thing("c"));
    await Promise.resolve();
    expect(w.events).toHaveLength(4);
  });

  it("watch from a version delivers exactly the changes after it", async () => {
    const store = new MemoryResourceStore<Thing>("Thing");
    await store.create(thing("a"));
    const listed = await store.list();
    const b = await store.create(thing("b"));
    await store.update({ ...b, spec: { size: 7 } });
    const w = collect(store, listed.resourceVersion);
    await store.delete("b");
    await w.next(3);
    expect(
      w.events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`),
    ).toEqual(["ADDED b 2", "MODIFIED b 3", "DELETED b 4"]);
    expect(w.events[1]?.object.spec.size).toBe(7);
  });

  it("watch from a version older than the remembered history fails with Gone", async () => {
    const store = new MemoryResourceStore<Thing>("Thing", { historySize: 2 });
    for (const n of ["a", "b", "c", "d"]) await store.create(thing(n));
    const gone = collect(store, "1");
    await gone.failed();
    expect(gone.errors[0]?.reason).toBe("Gone");
    expect(gone.events).toEqual([]);
    // The oldest remembered change is still reachable.
    const ok = collect(store, "2");
    await ok.next(2);
    expect(ok.events.map((e) => e.object.metadata.name)).toEqual(["c", "d"]);
    expect(ok.errors).toEqual([]);
  });

  it("after a load, a watch must start from the loaded version", async () => {
    const first = new MemoryResourceStore<Thing>("Thing");
    await first.create(thing("a"));
    await first.create(thing("b"));
    const snapshot = (await first.list()).items;
    const second = new MemoryResourceStore<Thing>("Thing");
    second.load(snapshot);
    expect((await second.list()).resourceVersion).toBe("2");
    const gone = collect(second, "1");
    await gone.failed();
    expect(gone.errors[0]?.reason).toBe("Gone");
    const ok = collect(second, "2");
    await second.create(thing("c"));
    await ok.next(1);
    expect(ok.events[0]?.object.metadata.resourceVersion).toBe("3");
  });

  it("an unparsable watch version is Invalid", async () => {
    const store = new MemoryResourceStore<Thing>("Thing");
    const w = collect(store, "abc");
    await w.failed();
    expect(w.errors[0]?.reason).toBe("Invalid");
  });

  it("list during a write still being persisted answers a version a watch can resume from", async () => {
    let release: () => void = () => {};
    let blocked = false;
    const store = new MemoryResourceStore<Thing>("Thing", {
      persist: async () => {
        if (blocked) await new Promise<void>((r) => (release = r));
      },
    });
    await store.create(thing("a"));
    blocked = true;
    const pending = store.create(thing("b"));
    await new Promise((r) => setImmediate(r));
    const listed = await store.list();
    expect(listed.items.map((o) => o.metadata.name)).toEqual(["a"]);
    const w = collect(store, listed.resourceVersion);
    release();
    await pending;
    await w.next(1);
    expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(["ADDED b"]);
  });

  it("a failed persist leaves the object unchanged and tells the caller", async () => {
    let fail = false;
    const store = new MemoryResourceStore<Thing>("Thing", {
      persist: async () => {
        if (fail) throw new Error("disk full");
      },
    });
    const v1 = await store.create(thing("a", 1));
    fail = true;
    await expect(store.update({ ...v1, spec: { size: 2 } })).rejects.toThrow("disk full");
    expect(await store.get("a")).toEqual(v1);
    fail = false;
    const v2 = await store.update({ ...v1, spec: { size: 3 } });
    expect(v2.spec.size).toBe(3);
  });
});
