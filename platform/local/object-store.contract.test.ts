import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { describeArchiveContract } from "../testdata/archive-contract.js";
import { describeMemoryContract } from "../testdata/memory-contract.js";
import { describeObjectStoreContract } from "../testdata/object-store-contract.js";
import { createLocalObjectStore } from "./object-store.js";

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function makeStore() {
  const root = await mkdtemp(join(tmpdir(), "docverify-objects-contract-"));
  roots.push(root);
  const store = createLocalObjectStore(root);
  const bucket = `b-${randomUUID().slice(0, 8)}`;
  await store.ensureBucket(bucket);
  return { store, bucket, missingBucket: `missing-${randomUUID().slice(0, 8)}` };
}

describeObjectStoreContract("local directory", makeStore, { presign: false, byteOrderAcrossSlash: true });
describeArchiveContract("local directory", makeStore);
describeMemoryContract("local directory", makeStore);
