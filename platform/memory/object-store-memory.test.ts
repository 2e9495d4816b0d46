import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type MemoryEntry, memoryKeys } from "../../core/tenant-memory.js";
import { createLocalObjectStore } from "../local/object-store.js";
import { createObjectStoreMemory } from "./object-store-memory.js";

/**
 * The adapter on the local data directory, beyond the contract (platform/testdata/memory-contract.ts, run on
 * both stores): the local store reads and sorts a whole folder to list it in key order, so what bounds a
 * lookup there is the size of the folders on its path. A group of one template under one issuer can hold
 * every statement of a big bank; its markers must not pile up in one folder.
 */

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const h = (s: string) => s.padEnd(22, "x").slice(0, 22);
const entry = (detection: string, keys: string[]): MemoryEntry => ({
  v: 1,
  detection,
  at: "2026-01-01T00:00:00.000Z",
  docType: "bank_statement",
  file: h(`file-${detection}`),
  identifiers: [],
  template: h("tpl"),
  templateSealed: "sealed",
  content: "",
  wording: "",
  cells: "1:10:700:abcdefghijk",
  cellsSealed: "sealed",
  keys,
});

/** Entries of every folder under `dir`. */
async function folderSizes(dir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const items = await readdir(dir, { withFileTypes: true });
  out.set(dir, items.length);
  for (const d of items)
    if (d.isDirectory()) for (const [k, v] of await folderSizes(join(dir, d.name))) out.set(k, v);
  return out;
}

describe("tenant memory on the local data directory", () => {
  it("a group of 400 members keeps every folder under 256 entries; forget keeps its count right", async () => {
    const root = await mkdtemp(join(tmpdir(), "docverify-memory-"));
    roots.push(root);
    const objects = createLocalObjectStore(root);
    const bucket = `b-${randomUUID().slice(0, 8)}`;
    await objects.ensureBucket(bucket);
    const memory = createObjectStoreMemory(objects, bucket);
    const group = `t.${h("tpl")}/${h("big-bank")}`;
    const ids = Array.from({ length: 400 }, (_, i) => `det-${String(i).padStart(3, "0")}`);
    for (let i = 0; i < ids.length; i += 20)
      await Promise.all(ids.slice(i, i + 20).map((id) => memory.remember("T", entry(id, [group]))));

    const index = join(root, bucket, ...memoryKeys.index("T", group).slice(0, -1).split("/"));
    const sizes = await folderSizes(index);
    expect(Math.max(...sizes.values())).toBeLessThanOrEqual(256);
    // Every member is still found (a member key lists its shards in order).
    const found = await memory.groups("T", `t.${h("tpl")}`, { groups: 2, perGroup: 1000 });
    expect(found.get(h("big-bank"))?.sort()).toEqual(ids);

    await Promise.all(ids.slice(0, 150).map((id) => memory.forget(id)));
    const left = await memory.groups("T", `t.${h("tpl")}`, { groups: 2, perGroup: 1000 });
    expect(left.get(h("big-bank"))?.sort()).toEqual(ids.slice(150));
    // No empty shard folder is left behind.
    for (const [dir, n] of await folderSizes(index)) expect(n, dir).toBeGreaterThan(0);
  });
});
