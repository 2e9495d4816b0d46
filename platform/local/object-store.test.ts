import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { ObjectNotFoundError, type ObjectStore } from "../../core/ports.js";
import { tempName } from "./atomic-file.js";
import { createLocalObjectStore, LocalObjectStoreError } from "./object-store.js";

const roots: string[] = [];
async function newStore(): Promise<{ root: string; store: ObjectStore }> {
  const root = await mkdtemp(join(tmpdir(), "docverify-objects-"));
  roots.push(root);
  const store = createLocalObjectStore(root);
  await store.ensureBucket("b");
  return { root, store };
}
afterEach(async () => {
  await Promise.all(roots.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function keysOf(store: ObjectStore, bucket: string, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list(bucket, prefix)) out.push(o.key);
  return out;
}
const text = async (s: Readable) => {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
};
const errorCode = (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: unknown) =>
      e instanceof LocalObjectStoreError ? e.code : e instanceof ObjectNotFoundError ? "NotFound" : String(e),
  );

describe("createLocalObjectStore", () => {
  it("puts and gets strings, buffers and streams, with content type and metadata", async () => {
    const { store } = await newStore();
    expect(
      await store.put("b", "docs/a.txt", "héllo", { contentType: "text/plain", metadata: { who: "me" } }),
    ).toEqual({
      size: 6,
    });
    expect((await store.get("b", "docs/a.txt")).toString()).toBe("héllo");
    await store.put("b", "bin", Buffer.from([0, 1, 2, 255]));
    expect([...(await store.get("b", "bin"))]).toEqual([0, 1, 2, 255]);
    const big = Buffer.alloc(300_000, 7);
    const streamed = await store.put(
      "b",
      "docs/stream.bin",
      Readable.from([big.subarray(0, 100_000), big.subarray(100_000)]),
    );
    expect(streamed.size).toBe(300_000);
    expect((await store.get("b", "docs/stream.bin")).equals(big)).toBe(true);

    const info = await store.stat("b", "docs/a.txt");
    expect(info).toMatchObject({
      key: "docs/a.txt",
      size: 6,
      contentType: "text/plain",
      metadata: { who: "me" },
    });
    expect(info?.lastModified).toBeInstanceOf(Date);
    const plain = await store.stat("b", "bin");
    expect(plain).toMatchObject({ key: "bin", size: 4 });
    expect(plain?.contentType).toBeUndefined();
  });

  it("replaces an object and its metadata on a second put", async () => {
    const { store } = await newStore();
    await store.put("b", "k", "one", { contentType: "text/plain", metadata: { v: "1" } });
    await store.put("b", "k", "second");
    expect((await store.get("b", "k")).toString()).toBe("second");
    const info = await store.stat("b", "k");
    expect(info?.size).toBe(6);
    expect(info?.contentType).toBeUndefined();
    expect(info?.metadata).toBeUndefined();
  });

  it("streams an object, and a stream opened before a replacement still reads the old bytes", async () => {
    const { store } = await newStore();
    await store.put("b", "k", "old bytes");
    const s = await store.getStream("b", "k");
    await store.put("b", "k", "new bytes");
    expect(await text(s)).toBe("old bytes");
    expect(await text(await store.getStream("b", "k"))).toBe("new bytes");
  });

  it("answers ObjectNotFoundError from get and getStream, and undefined from stat, for a missing object", async () => {
    const { store } = await newStore();
    await store.put("b", "dir/inner", "x");
    for (const key of ["missing", "dir", "dir/inner/deeper", "nodir/x"]) {
      expect(await errorCode(store.get("b", key))).toBe("NotFound");
      expect(await errorCode(store.getStream("b", key))).toBe("NotFound");
      expect(await store.stat("b", key)).toBeUndefined();
    }
    const err = await store.get("b", "missing").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectNotFoundError);
    expect((err as Error).message).toBe("No object missing in bucket b.");
  });

  it("lists every object under a prefix in S3 key order, across folders", async () => {
    const { store } = await newStore();
    const keys = ["a/b", "a-c", "a/a/z", "a.txt", "b", "ab/x", "a/b0", "z/y/x/w"];
    for (const k of keys) await store.put("b", k, k);
    const sorted = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(await keysOf(store, "b", "")).toEqual(sorted);
    expect(await keysOf(store, "b", "a/")).toEqual(["a/a/z", "a/b", "a/b0"]);
    expect(await keysOf(store, "b", "a")).toEqual(["a-c", "a.txt", "a/a/z", "a/b", "a/b0", "ab/x"]);
    expect(await keysOf(store, "b", "a/b")).toEqual(["a/b", "a/b0"]);
    expect(await keysOf(store, "b", "q")).toEqual([]);
    const infos = [];
    for await (const o of store.list("b", "z/")) infos.push(o);
    expect(infos).toMatchObject([{ key: "z/y/x/w", size: 7 }]);
  });

  it("lists nothing for a bucket that does not exist, and never shows metadata or temp files", async () => {
    const { root, store } = await newStore();
    expect(await keysOf(store, "nobucket", "")).toEqual([]);
    await store.put("b", "k", "v", { contentType: "text/plain" });
    expect(await keysOf(store, "b", "")).toEqual(["k"]);
    expect((await readdir(root)).sort()).toEqual([".meta", ".tmp", "b"]);
  });

  it("deletes objects, their metadata and emptied folders; deleting a missing object is fine", async () => {
    const { root, store } = await newStore();
    await store.put("b", "x/y/z", "1", { contentType: "text/plain" });
    await store.delete("b", "x/y/z");
    expect(await store.stat("b", "x/y/z")).toBeUndefined();
    expect(await readdir(join(root, "b"))).toEqual([]);
    expect(await readdir(join(root, ".meta", "b"))).toEqual([]);
    await store.delete("b", "x/y/z");
    await store.delete("nobucket", "k");
    // The emptied folder name can now be an object.
    await store.put("b", "x", "now a file");
    expect((await store.get("b", "x")).toString()).toBe("now a file");
  });

  it("deletePrefix removes exactly the objects under the prefix and counts them", async () => {
    const { store } = await newStore();
    for (const k of ["runs/d1/a.json", "runs/d1/b.json", "runs/d10/a.json", "runs/d2/x", "other"]) {
      await store.put("b", k, k, { contentType: "application/json" });
    }
    expect(await store.deletePrefix("b", "runs/d1/")).toBe(2);
    expect(await keysOf(store, "b", "")).toEqual(["other", "runs/d10/a.json", "runs/d2/x"]);
    expect(await store.deletePrefix("b", "runs/")).toBe(2);
    expect(await store.deletePrefix("b", "runs/")).toBe(0);
    expect(await keysOf(store, "b", "")).toEqual(["other"]);
  });

  it("refuses keys and buckets that could escape the root", async () => {
    const { root, store } = await newStore();
    const badKeys = [
      "",
      "../x",
      "a/../../x",
      "/etc/passwd",
      "a//b",
      "a/",
      "./a",
      "a\0b",
      "a\\..\\b",
      "x".repeat(251),
    ];
    for (const key of badKeys) {
      expect(await errorCode(store.put("b", key, "x")), key).toBe("InvalidKey");
      expect(await errorCode(store.get("b", key)), key).toBe("InvalidKey");
      expect(await errorCode(store.delete("b", key)), key).toBe("InvalidKey");
    }
    await expect(store.stat("b", "../b")).rejects.toThrow(/is invalid: it has a '\.\.' path segment/);
    for (const bucket of ["", "..", ".meta", ".tmp", "a/b", "/abs", "a\0"]) {
      expect(await errorCode(store.put(bucket, "k", "x")), bucket).toBe("InvalidBucketName");
      expect(await errorCode(store.ensureBucket(bucket)), bucket).toBe("InvalidBucketName");
    }
    expect(() => store.list("b", "../")).toThrow(LocalObjectStoreError);
    expect((await readdir(root)).sort()).toEqual(["b"]);
  });

  it("refuses a put into a bucket that does not exist, saying how to create it", async () => {
    const { store } = await newStore();
    const err = await store.put("nobucket", "k", "x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LocalObjectStoreError);
    expect((err as LocalObjectStoreError).code).toBe("NoSuchBucket");
    expect((err as Error).message).toContain("ensureBucket");
  });

  it("refuses a key that needs a file where another key needs a folder", async () => {
    const { store } = await newStore();
    await store.put("b", "a/b", "1");
    expect(await errorCode(store.put("b", "a", "2"))).toBe("KeyConflict");
    await store.put("b", "f", "3");
    expect(await errorCode(store.put("b", "f/g", "4"))).toBe("KeyConflict");
    expect((await store.get("b", "a/b")).toString()).toBe("1");
    expect((await store.get("b", "f")).toString()).toBe("3");
    expect(await keysOf(store, "b", "")).toEqual(["a/b", "f"]);
  });

  it("leaves no trace of a put whose body stream fails", async () => {
    const { root, store } = await newStore();
    await store.put("b", "k", "committed");
    const failing = new Readable({
      read() {
        this.push(Buffer.from("partial"));
        this.destroy(new Error("connection reset"));
      },
    });
    await expect(store.put("b", "k", failing)).rejects.toThrow("connection reset");
    expect((await store.get("b", "k")).toString()).toBe("committed");
    expect(await readdir(join(root, ".tmp"))).toEqual([]);
  });

  it("removes temp files left by a dead process, and keeps those of live ones", async () => {
    const root = await mkdtemp(join(tmpdir(), "docverify-objects-"));
    roots.push(root);
    const first = createLocalObjectStore(root);
    await first.ensureBucket("b");
    await first.put("b", "k", "v");
    const dead = tempName(4_194_305); // above Linux's pid_max: no such process
    const live = tempName(process.pid);
    await writeFile(join(root, ".tmp", dead), "half");
    await writeFile(join(root, ".tmp", live), "in progress");
    const second = createLocalObjectStore(root);
    await second.put("b", "k2", "v2");
    expect(await readdir(join(root, ".tmp"))).toEqual([live]);
    expect((await stat(join(root, "b", "k2"))).size).toBe(2);
  });
});
