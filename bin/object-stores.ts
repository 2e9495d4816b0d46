import path from "node:path";
import type { Config } from "../core/config.js";
import type { ObjectStore } from "../core/ports.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createS3ObjectStore, s3ConfigFromEnv } from "../platform/s3/object-store.js";

/**
 * Object-store adapters by runtime, one instance per location. Kept apart from the step runtime so that a
 * process that only serves the API never loads the step code (pdfjs among it).
 */
const stores = new Map<string, ObjectStore>();

/** The standalone object store under `<dataDir>/objects`. */
export function objectStoreFor(dataDir: string): ObjectStore {
  const root = path.resolve(dataDir, "objects");
  let s = stores.get(root);
  if (!s) {
    s = createLocalObjectStore(root);
    stores.set(root, s);
  }
  return s;
}

/** The S3 object store of the cluster runtime (S3_* settings). */
export function s3ObjectStoreFor(config: Config): ObjectStore {
  const key = `s3:${config.s3.endpoint}`;
  let s = stores.get(key);
  if (!s) {
    s = createS3ObjectStore(s3ConfigFromEnv(config).options);
    stores.set(key, s);
  }
  return s;
}
