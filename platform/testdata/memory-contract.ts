/**
 * The tenant memory's object-store adapter (platform/memory/) on a real object store adapter, as one
 * parametrised suite: `describeMemoryContract("local", makeStore)` in each adapter's test file. Proves the
 * bounded reads (markers per key, entries in all), the group walk that skips past each group with start-after,
 * the tenant in every path, and that forget leaves nothing of the detection.
 */
import { describe, expect, it } from "vitest";
import type { ObjectStore } from "../../core/ports.js";
import { type MemoryEntry, memoryKeys } from "../../core/tenant-memory.js";
import { createObjectStoreMemory } from "../memory/object-store-memory.js";
import type { ContractStore } from "./object-store-contract.js";

const h = (s: string) => s.padEnd(22, "x").slice(0, 22);

function entry(detection: string, keys: string[]): MemoryEntry {
  return {
    v: 1,
    detection,
    at: "2026-01-01T00:00:00.000Z",
    docType: "invoice",
    file: h("file"),
    identifiers: [],
    template: h("tpl"),
    templateSealed: "sealed",
    content: "",
    wording: "",
    cells: "1:10:700:abcdefghijk 1:10:680:bcdefghijkl",
    cellsSealed: "sealed",
    keys,
  };
}

export function describeMemoryContract(name: string, make: () => Promise<ContractStore>): void {
  describe(`tenant memory on ${name}`, () => {
    it("finds entries under their keys, a bounded number per key, never another tenant's", async () => {
      const { store, bucket } = await make();
      const memory = createObjectStoreMemory(store, bucket);
      for (let i = 0; i < 12; i++)
        await memory.remember(
          "tenantA",
          entry(`det-${String(i).padStart(2, "0")}`, [`c1.${h("band")}`, `f.${h(`f${i}`)}`]),
        );
      await memory.remember("tenantB", entry("det-b", [`c1.${h("band")}`]));
      const found = await memory.lookup("tenantA", { keys: [`c1.${h("band")}`], perKey: 4, limit: 40 });
      expect(found.map((e) => e.detection)).toEqual(["det-00", "det-01", "det-02", "det-03"]);
      expect(found[0]?.cells).toBe("1:10:700:abcdefghijk 1:10:680:bcdefghijkl");
      const excluded = await memory.lookup("tenantA", {
        keys: [`c1.${h("band")}`, `f.${h("f7")}`],
        perKey: 2,
        limit: 40,
        exclude: "det-00",
      });
      expect(excluded.map((e) => e.detection)).toEqual(["det-01", "det-02", "det-07"]);
      const limited = await memory.lookup("tenantA", { keys: [`c1.${h("band")}`], perKey: 10, limit: 3 });
      expect(limited).toHaveLength(3);
      const other = await memory.lookup("tenantB", {
        keys: [`c1.${h("band")}`, `f.${h("f1")}`],
        perKey: 10,
        limit: 10,
      });
      expect(other.map((e) => e.detection)).toEqual(["det-b"]);
    });

    it("walks the groups under a key, skipping past each group's members", async () => {
      const { store, bucket } = await make();
      const memory = createObjectStoreMemory(store, bucket);
      const t = `t.${h("template")}`;
      // One big issuer (30 documents) and two small ones, in key order around it.
      for (let i = 0; i < 30; i++)
        await memory.remember("T", entry(`det-big-${String(i).padStart(2, "0")}`, [`${t}/${h("m-big")}`]));
      await memory.remember("T", entry("det-a", [`${t}/${h("a-first")}`]));
      await memory.remember("T", entry("det-z", [`${t}/${h("z-last")}`]));
      const groups = await memory.groups("T", t, { groups: 5, perGroup: 2 });
      expect([...groups.keys()]).toEqual([h("a-first"), h("m-big"), h("z-last")]);
      // A group's first members in key order: its markers are sharded, so any two of the big issuer's.
      expect(groups.get(h("m-big"))).toHaveLength(2);
      for (const id of groups.get(h("m-big")) ?? []) expect(id).toMatch(/^det-big-\d\d$/);
      expect(groups.get(h("z-last"))).toEqual(["det-z"]);
      const two = await memory.groups("T", t, { groups: 2, perGroup: 50 });
      expect([...two.keys()]).toEqual([h("a-first"), h("m-big")]);
      expect(two.get(h("m-big"))).toHaveLength(30);
      // A member key reads one group's members.
      const members = await memory.lookup("T", { keys: [`${t}/${h("z-last")}`], perKey: 1, limit: 1 });
      expect(members.map((e) => e.detection)).toEqual(["det-z"]);
    });

    it("forget removes the entry, every index marker and the owner record; twice is harmless", async () => {
      const { store, bucket } = await make();
      const memory = createObjectStoreMemory(store, bucket);
      const keys = [`f.${h("file")}`, `c3.${h("band")}`, `t.${h("tpl")}/${h("issuer")}`];
      await memory.remember("T", entry("det-gone", keys));
      await memory.remember("T", entry("det-kept", keys));
      expect(await memory.has("det-gone")).toBe(true);
      expect(await memory.forget("det-gone")).toBe(5);
      expect(await memory.has("det-gone")).toBe(false);
      const left: string[] = [];
      for await (const o of store.list(bucket, "memory/")) left.push(o.key);
      expect(left.filter((k) => k.includes("det-gone"))).toEqual([]);
      expect(left.filter((k) => k.includes("det-kept"))).toHaveLength(5);
      expect(await memory.forget("det-gone")).toBe(0);
      expect((await memory.lookup("T", { keys, perKey: 5, limit: 5 })).map((e) => e.detection)).toEqual([
        "det-kept",
      ]);
    });

    it("a group walk lists a page of small groups once, and counts a group right after forgets", async () => {
      const { store, bucket } = await make();
      let lists = 0;
      const counted: ObjectStore = {
        ...store,
        list(b, prefix, opts) {
          lists++;
          return store.list(b, prefix, opts);
        },
      };
      const memory = createObjectStoreMemory(counted, bucket);
      const it_ = `it.${h("issuer")}`;
      // Five templates of the issuer with two documents each, and one with 24.
      for (let g = 0; g < 5; g++)
        for (let i = 0; i < 2; i++)
          await memory.remember("T", entry(`det-${g}-${i}`, [`${it_}/${h(`tpl-${g}`)}`]));
      for (let i = 0; i < 24; i++)
        await memory.remember("T", entry(`det-big-${String(i).padStart(2, "0")}`, [`${it_}/${h("tpl-z")}`]));
      lists = 0;
      const all = await memory.groups("T", it_, { groups: 8, perGroup: 50 });
      expect([...all.values()].map((m) => m.length)).toEqual([2, 2, 2, 2, 2, 24]);
      // One page holds every group (34 < 50 keys); the second finds nothing after the last one.
      expect(lists).toBeLessThanOrEqual(2);
      for (let i = 0; i < 10; i++) expect(await memory.forget(`det-big-${String(i).padStart(2, "0")}`)).toBe(3);
      const after = await memory.groups("T", it_, { groups: 8, perGroup: 50 });
      expect(after.get(h("tpl-z"))?.sort()).toEqual(
        Array.from({ length: 14 }, (_, i) => `det-big-${String(i + 10).padStart(2, "0")}`),
      );
      // Capped at perGroup, whatever the group's size.
      expect((await memory.groups("T", it_, { groups: 8, perGroup: 5 })).get(h("tpl-z"))).toHaveLength(5);
    });

    it("forget also removes a group member's marker as the first layout wrote it (unsharded)", async () => {
      const { store, bucket } = await make();
      const memory = createObjectStoreMemory(store, bucket);
      const key = `t.${h("tpl")}/${h("issuer")}`;
      await memory.remember("T", entry("det-old", [key]));
      await store.put(bucket, memoryKeys.legacyMarker("T", key, "det-old"), "");
      // Read as a member either way.
      const found = await memory.lookup("T", { keys: [key], perKey: 5, limit: 5 });
      expect(found.map((e) => e.detection)).toEqual(["det-old"]);
      await memory.forget("det-old");
      const left: string[] = [];
      for await (const o of store.list(bucket, "memory/")) left.push(o.key);
      expect(left).toEqual([]);
    });
  });
}
