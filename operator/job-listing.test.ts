import { afterAll, describe, expect, it } from "vitest";
import type { ObjectInfo, ObjectStore } from "../core/ports.js";
import { tempDirs } from "../fixtures/temp-dirs.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { compareKeys, normalizePrefixes, objectsAfter } from "./job-listing.js";

const tmp = tempDirs();
afterAll(tmp.removeAll);

async function bucketWith(keys: string[]): Promise<ObjectStore> {
  const dir = await tmp.make("docverify-listing-");
  const store = createLocalObjectStore(dir);
  await store.ensureBucket("inbox");
  for (const k of keys) await store.put("inbox", k, `bytes of ${k}`);
  return store;
}

async function collect(it: AsyncIterable<ObjectInfo>): Promise<string[]> {
  const out: string[] = [];
  for await (const o of it) out.push(o.key);
  return out;
}

describe("normalizePrefixes", () => {
  it("drops duplicates and prefixes covered by a shorter one, and sorts", () => {
    expect(normalizePrefixes(["b/", "a/x/", "a/", "b/", "c"])).toEqual(["a/", "b/", "c"]);
  });

  it("keeps the whole bucket alone when one prefix is empty", () => {
    expect(normalizePrefixes(["z/", "", "a/"])).toEqual([""]);
  });

  it("sorts by UTF-8 bytes, as S3 lists keys", () => {
    expect(normalizePrefixes(["é/", "z/", "Z/"])).toEqual(["Z/", "z/", "é/"]);
    expect(compareKeys("z", "é")).toBeLessThan(0);
  });
});

describe("objectsAfter", () => {
  const KEYS = ["a/1.pdf", "a/2.pdf", "a/sub/3.pdf", "b/4.pdf", "b/5.pdf", "c/6.pdf"];

  it("lists every object under the prefixes once, in key order, and nothing outside them", async () => {
    const store = await bucketWith(KEYS);
    expect(await collect(objectsAfter(store, "inbox", ["b/", "a/", "a/sub/"]))).toEqual([
      "a/1.pdf",
      "a/2.pdf",
      "a/sub/3.pdf",
      "b/4.pdf",
      "b/5.pdf",
    ]);
  });

  it("resumes after a key, across prefixes", async () => {
    const store = await bucketWith(KEYS);
    expect(await collect(objectsAfter(store, "inbox", ["a/", "b/"], "a/sub/3.pdf"))).toEqual([
      "b/4.pdf",
      "b/5.pdf",
    ]);
    expect(await collect(objectsAfter(store, "inbox", ["a/", "b/"], "a/2.pdf"))).toEqual([
      "a/sub/3.pdf",
      "b/4.pdf",
      "b/5.pdf",
    ]);
    expect(await collect(objectsAfter(store, "inbox", ["a/", "b/"], "b/5.pdf"))).toEqual([]);
  });

  it("does not list a prefix whose keys all sort before the resume point", async () => {
    const store = await bucketWith(KEYS);
    const listed: string[] = [];
    const spy: ObjectStore = {
      ...store,
      list: (bucket, prefix) => {
        listed.push(prefix);
        return store.list(bucket, prefix);
      },
    };
    await collect(objectsAfter(spy, "inbox", ["a/", "b/", "c/"], "b/4.pdf"));
    expect(listed).toEqual(["b/", "c/"]);
  });

  it("skips folder marker objects (keys ending in /)", async () => {
    // The local store cannot hold such keys; an S3 bucket can (consoles create them for "folders").
    const objects = [
      { key: "in/", size: 0, lastModified: new Date(0) },
      { key: "in/a.pdf", size: 3, lastModified: new Date(0) },
      { key: "in/sub/", size: 0, lastModified: new Date(0) },
    ];
    const s3Like = {
      list: async function* (_bucket: string, prefix: string) {
        yield* objects.filter((o) => o.key.startsWith(prefix));
      },
    } as unknown as ObjectStore;
    expect(await collect(objectsAfter(s3Like, "b", ["in/"]))).toEqual(["in/a.pdf"]);
  });

  it("yields nothing for a bucket that does not exist", async () => {
    const store = await bucketWith([]);
    expect(await collect(objectsAfter(store, "missing", [""]))).toEqual([]);
  });
});
