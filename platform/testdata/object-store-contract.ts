/**
 * The behaviour every ObjectStore adapter must share (local directory, S3), as one parametrised vitest
 * suite: `describeObjectStoreContract("local", makeStore)` in each adapter's test file.
 */
import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { ObjectNotFoundError, type ObjectStore } from "../../core/ports.js";

export interface ContractStore {
  store: ObjectStore;
  /** A bucket that exists and is empty, for this test alone. */
  bucket: string;
  /** A valid bucket name that does not exist. */
  missingBucket: string;
}

export interface ContractOptions {
  /** The store implements presignPut (the presign tests run only then). */
  presign: boolean;
  /**
   * The store lists in plain UTF-8 byte order even where a character below '/' (like '-' or '.') meets
   * a '/' ("a-c" before "a/b"), as S3 and MinIO do. s3rver does not: it walks its folder tree.
   */
  byteOrderAcrossSlash: boolean;
}

async function keysOf(store: ObjectStore, bucket: string, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list(bucket, prefix)) out.push(o.key);
  return out;
}
async function readAll(s: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const byKey = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Runs `fn` over `items`, at most `limit` at a time. */
async function inParallel<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** A stream that yields `bytes` in chunks of awkward sizes, like a network body. */
function streamOf(bytes: Buffer, chunk = 65_521): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < bytes.length; i += chunk) yield bytes.subarray(i, i + chunk);
    })(),
  );
}

export function describeObjectStoreContract(
  name: string,
  makeStore: () => Promise<ContractStore>,
  options: ContractOptions,
): void {
  describe(`ObjectStore contract: ${name}`, () => {
    it("puts and gets strings, buffers and streams, with content type and metadata", async () => {
      const { store, bucket } = await makeStore();
      expect(
        await store.put(bucket, "docs/a.txt", "héllo", {
          contentType: "text/plain",
          metadata: { sha256: "abc123", who: "me" },
        }),
      ).toEqual({ size: 6 });
      expect((await store.get(bucket, "docs/a.txt")).toString()).toBe("héllo");
      await store.put(bucket, "bin", Buffer.from([0, 1, 2, 255]));
      expect([...(await store.get(bucket, "bin"))]).toEqual([0, 1, 2, 255]);
      const big = randomBytes(300_000);
      expect(await store.put(bucket, "docs/stream.bin", streamOf(big))).toEqual({ size: 300_000 });
      expect((await store.get(bucket, "docs/stream.bin")).equals(big)).toBe(true);
      expect(await store.put(bucket, "empty", Readable.from([]))).toEqual({ size: 0 });
      expect((await store.get(bucket, "empty")).length).toBe(0);

      const info = await store.stat(bucket, "docs/a.txt");
      expect(info).toMatchObject({
        key: "docs/a.txt",
        size: 6,
        contentType: "text/plain",
        metadata: { sha256: "abc123", who: "me" },
      });
      expect(info?.lastModified).toBeInstanceOf(Date);
      expect(Math.abs(info!.lastModified.getTime() - Date.now())).toBeLessThan(10 * 60_000);
      const plain = await store.stat(bucket, "bin");
      expect(plain).toMatchObject({ key: "bin", size: 4 });
      expect(plain?.metadata).toBeUndefined();
      // S3 gives every object a type; a store may report none or a generic binary one.
      expect([undefined, "application/octet-stream", "binary/octet-stream"]).toContain(plain?.contentType);
    });

    it("replaces an object and its metadata on a second put", async () => {
      const { store, bucket } = await makeStore();
      await store.put(bucket, "k", "one", { contentType: "text/plain", metadata: { v: "1" } });
      await store.put(bucket, "k", "second", { contentType: "application/json" });
      expect((await store.get(bucket, "k")).toString()).toBe("second");
      const info = await store.stat(bucket, "k");
      expect(info).toMatchObject({ size: 6, contentType: "application/json" });
      expect(info?.metadata).toBeUndefined();
    });

    it("replaces an object atomically: reads racing puts of the key see an old or a new object whole", async () => {
      // A webhook delivery record or a usage counter is rewritten while the API reads it; S3 and the
      // local store (rename into place) both answer the old or the new bytes, never a torn one or an error.
      const { store, bucket } = await makeStore();
      const body = (i: number) => JSON.stringify({ i, pad: "x".repeat(50 + ((i * 97) % 7) * 400) });
      await store.put(bucket, "rec.json", body(0));
      let writing = true;
      const writer = (async () => {
        try {
          for (let i = 1; i <= 150; i++) await store.put(bucket, "rec.json", body(i));
        } finally {
          writing = false;
        }
      })();
      const seen: number[] = [];
      const reader = async () => {
        while (writing) {
          const raw = (await store.get(bucket, "rec.json")).toString();
          const value = JSON.parse(raw) as { i: number };
          expect(raw).toBe(body(value.i));
          seen.push(value.i);
        }
      };
      await Promise.all([writer, reader(), reader(), reader()]);
      expect(seen.length).toBeGreaterThan(0);
      expect((await store.get(bucket, "rec.json")).toString()).toBe(body(150));
    });

    it("streams an object out", async () => {
      const { store, bucket } = await makeStore();
      const bytes = randomBytes(200_000);
      await store.put(bucket, "s/k", bytes);
      expect((await readAll(await store.getStream(bucket, "s/k"))).equals(bytes)).toBe(true);
    });

    it("stores a 12 MB stream (multipart where the store has it) byte for byte", async () => {
      const { store, bucket } = await makeStore();
      const big = randomBytes(12 * 1024 * 1024);
      const { size } = await store.put(bucket, "large/doc.pdf", streamOf(big), {
        contentType: "application/pdf",
      });
      expect(size).toBe(big.length);
      expect(await store.stat(bucket, "large/doc.pdf")).toMatchObject({
        size: big.length,
        contentType: "application/pdf",
      });
      expect(sha256(await store.get(bucket, "large/doc.pdf"))).toBe(sha256(big));
      expect(sha256(await readAll(await store.getStream(bucket, "large/doc.pdf")))).toBe(sha256(big));
    });

    it("answers ObjectNotFoundError from get and getStream, and undefined from stat, for a missing object", async () => {
      const { store, bucket, missingBucket } = await makeStore();
      await store.put(bucket, "dir/inner", "x");
      for (const [b, key] of [
        [bucket, "missing"],
        [bucket, "dir"],
        [bucket, "dir/inner/deeper"],
        [missingBucket, "k"],
      ] as const) {
        await expect(store.get(b, key)).rejects.toBeInstanceOf(ObjectNotFoundError);
        await expect(store.getStream(b, key)).rejects.toBeInstanceOf(ObjectNotFoundError);
        expect(await store.stat(b, key)).toBeUndefined();
      }
      const err = await store.get(bucket, "missing").catch((e: unknown) => e);
      expect((err as Error).message).toBe(`No object missing in bucket ${bucket}.`);
      expect(err).toMatchObject({ bucket, key: "missing" });
    });

    it("lists every object under a prefix in key order", async () => {
      const { store, bucket, missingBucket } = await makeStore();
      const keys = ["a/b", "a0", "a/a/z", "b", "ab/x", "a/b0", "z/y/x/w", "A", "é"];
      for (const k of keys) await store.put(bucket, k, k);
      expect(await keysOf(store, bucket, "")).toEqual([...keys].sort(byKey));
      expect(await keysOf(store, bucket, "a/")).toEqual(["a/a/z", "a/b", "a/b0"]);
      expect(await keysOf(store, bucket, "a")).toEqual(["a/a/z", "a/b", "a/b0", "a0", "ab/x"]);
      expect(await keysOf(store, bucket, "a/b")).toEqual(["a/b", "a/b0"]);
      expect(await keysOf(store, bucket, "q")).toEqual([]);
      const infos = [];
      for await (const o of store.list(bucket, "z/")) infos.push(o);
      expect(infos).toMatchObject([{ key: "z/y/x/w", size: 7 }]);
      expect(infos[0]?.lastModified).toBeInstanceOf(Date);
      expect(await keysOf(store, missingBucket, "")).toEqual([]);
    });

    it("lists after a start-after key (exclusive; need not be a key), across folders, in pages of pageSize", async () => {
      const { store, bucket } = await makeStore();
      const keys = ["p/a/1", "p/a/2", "p/b/1", "p/b/2", "p/c/1", "p/c/x/1", "p/d", "q/1"];
      for (const k of keys) await store.put(bucket, k, k);
      const listAfter = async (startAfter: string, pageSize?: number, prefix = "p/") => {
        const out: string[] = [];
        for await (const o of store.list(bucket, prefix, { startAfter, pageSize })) out.push(o.key);
        return out;
      };
      expect(await listAfter("p/a/2")).toEqual(["p/b/1", "p/b/2", "p/c/1", "p/c/x/1", "p/d"]);
      expect(await listAfter("p/b")).toEqual(["p/b/1", "p/b/2", "p/c/1", "p/c/x/1", "p/d"]);
      expect(await listAfter("p/b/2", 1)).toEqual(["p/c/1", "p/c/x/1", "p/d"]);
      expect(await listAfter("p/c/x/1", 2)).toEqual(["p/d"]);
      expect(await listAfter("a")).toEqual(["p/a/1", "p/a/2", "p/b/1", "p/b/2", "p/c/1", "p/c/x/1", "p/d"]);
      expect(await listAfter("p/d")).toEqual([]);
      expect(await listAfter("p/a/1", 2, "")).toEqual([
        "p/a/2",
        "p/b/1",
        "p/b/2",
        "p/c/1",
        "p/c/x/1",
        "p/d",
        "q/1",
      ]);
      // A caller that stops after a page gets that page.
      const firstTwo: string[] = [];
      for await (const o of store.list(bucket, "p/", { startAfter: "p/a/1", pageSize: 2 })) {
        firstTwo.push(o.key);
        if (firstTwo.length === 2) break;
      }
      expect(firstTwo).toEqual(["p/a/2", "p/b/1"]);
    });

    if (options.byteOrderAcrossSlash) {
      it("lists in UTF-8 byte order where '-' and '.' meet '/'", async () => {
        const { store, bucket } = await makeStore();
        const keys = ["a/b", "a-c", "a.txt", "a/a"];
        for (const k of keys) await store.put(bucket, k, k);
        expect(await keysOf(store, bucket, "a")).toEqual(["a-c", "a.txt", "a/a", "a/b"]);
      });
    }

    it("lists 1,500 objects in key order across pages, and deletePrefix removes them all", async () => {
      const { store, bucket } = await makeStore();
      const keys = Array.from({ length: 1500 }, (_, i) => `many/${String(i).padStart(4, "0")}.json`);
      const shuffled = [...keys].sort(() => Math.random() - 0.5);
      await inParallel(shuffled, 16, (k) => store.put(bucket, k, k));
      await store.put(bucket, "other/keep", "x");
      const listed = await keysOf(store, bucket, "many/");
      expect(listed.length).toBe(1500);
      expect(listed).toEqual(keys);
      expect(await store.deletePrefix(bucket, "many/")).toBe(1500);
      expect(await keysOf(store, bucket, "")).toEqual(["other/keep"]);
    });

    it("deletes objects; deleting a missing object or in a missing bucket is fine", async () => {
      const { store, bucket, missingBucket } = await makeStore();
      await store.put(bucket, "x/y/z", "1", { contentType: "text/plain" });
      await store.delete(bucket, "x/y/z");
      expect(await store.stat(bucket, "x/y/z")).toBeUndefined();
      await expect(store.get(bucket, "x/y/z")).rejects.toBeInstanceOf(ObjectNotFoundError);
      await store.delete(bucket, "x/y/z");
      await store.delete(missingBucket, "k");
      expect(await keysOf(store, bucket, "")).toEqual([]);
    });

    it("deletePrefix removes exactly the objects under the prefix and counts them", async () => {
      const { store, bucket, missingBucket } = await makeStore();
      for (const k of ["runs/d1/a.json", "runs/d1/b.json", "runs/d10/a.json", "runs/d2/x", "other"]) {
        await store.put(bucket, k, k, { contentType: "application/json" });
      }
      expect(await store.deletePrefix(bucket, "runs/d1/")).toBe(2);
      expect(await keysOf(store, bucket, "")).toEqual(["other", "runs/d10/a.json", "runs/d2/x"]);
      expect(await store.deletePrefix(bucket, "runs/")).toBe(2);
      expect(await store.deletePrefix(bucket, "runs/")).toBe(0);
      expect(await store.deletePrefix(missingBucket, "runs/")).toBe(0);
      expect(await keysOf(store, bucket, "")).toEqual(["other"]);
    });

    it("refuses a put into a bucket that does not exist, saying how to create it", async () => {
      const { store, missingBucket } = await makeStore();
      const err = await store.put(missingBucket, "k", "x").catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "NoSuchBucket" });
      expect((err as Error).message).toContain("ensureBucket");
      // ensureBucket creates it, twice at once is fine, and again later too.
      await Promise.all([store.ensureBucket(missingBucket), store.ensureBucket(missingBucket)]);
      await store.ensureBucket(missingBucket);
      await store.put(missingBucket, "k", "x");
      expect((await store.get(missingBucket, "k")).toString()).toBe("x");
    });

    it("leaves the previous object untouched when a put's body stream fails", async () => {
      const { store, bucket } = await makeStore();
      await store.put(bucket, "k", "committed");
      for (const size of [1000, 9 * 1024 * 1024]) {
        let sent = 0;
        const failing = new Readable({
          read() {
            if (sent >= size) {
              this.destroy(new Error("connection reset"));
              return;
            }
            const chunk = Buffer.alloc(Math.min(256 * 1024, size - sent), 1);
            sent += chunk.length;
            this.push(chunk);
          },
        });
        await expect(store.put(bucket, "k", failing)).rejects.toThrow("connection reset");
        expect((await store.get(bucket, "k")).toString()).toBe("committed");
      }
      expect(await keysOf(store, bucket, "")).toEqual(["k"]);
    });

    if (options.presign) {
      it("presigns a PUT that stores the object with a plain HTTP request", async () => {
        const { store, bucket } = await makeStore();
        const url = await store.presignPut!(bucket, "uploads/u1", 600);
        expect(new URL(url).searchParams.get("X-Amz-Expires")).toBe("600");
        const body = randomBytes(50_000);
        const res = await fetch(url, { method: "PUT", body, headers: { "content-type": "application/pdf" } });
        expect(res.status, await res.text()).toBe(200);
        expect((await store.get(bucket, "uploads/u1")).equals(body)).toBe(true);
        expect(await store.stat(bucket, "uploads/u1")).toMatchObject({ size: body.length });
        // A second PUT to the same URL replaces the object (an upload holds one document).
        const again = await fetch(url, { method: "PUT", body: "replaced" });
        expect(again.status, await again.text()).toBe(200);
        expect((await store.get(bucket, "uploads/u1")).toString()).toBe("replaced");
      });
    }
  });
}
