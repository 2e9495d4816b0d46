import type { Dirent } from "node:fs";
import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rmdir,
  stat,
  unlink,
} from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { type ObjectInfo, ObjectNotFoundError, type ObjectStore, type PutOptions } from "../../core/ports.js";
import { fsyncDir, TEMP_PREFIX, tempName, tempOwnerPid } from "./atomic-file.js";

export type LocalObjectStoreErrorCode = "InvalidBucketName" | "InvalidKey" | "NoSuchBucket" | "KeyConflict";

/** A request the local object store refuses; `code` says which rule it broke. */
export class LocalObjectStoreError extends Error {
  override name = "LocalObjectStoreError";
  constructor(
    readonly code: LocalObjectStoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Folder of the sidecar metadata tree; bucket names start with a letter or digit, so none can be it. */
const META_DIR = ".meta";
/** Folder of in-progress writes (same file system as the buckets, so rename is atomic). */
const TEMP_DIR = ".tmp";
const BUCKET_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
/** Most file systems allow 255 bytes per name; the metadata sidecar adds ".json". */
const MAX_SEGMENT_BYTES = 250;
const MAX_KEY_BYTES = 1024;

interface Meta {
  contentType?: string;
  metadata?: Record<string, string>;
}

const errno = (e: unknown) => (e as NodeJS.ErrnoException).code;

function checkBucket(bucket: string): void {
  if (!BUCKET_RE.test(bucket)) {
    throw new LocalObjectStoreError(
      "InvalidBucketName",
      `Bucket name ${JSON.stringify(bucket)} is invalid: use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit.`,
    );
  }
}

function checkKey(key: string): void {
  const bad = (why: string) =>
    new LocalObjectStoreError("InvalidKey", `Object key ${JSON.stringify(key)} is invalid: ${why}.`);
  if (key.length === 0) throw bad("it is empty");
  if (key.includes("\0")) throw bad("it contains a NUL character");
  if (key.includes("\\")) throw bad("it contains a backslash; separate folders with '/'");
  if (key.startsWith("/")) throw bad("it is absolute; keys are relative to the bucket");
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw bad(`it is longer than ${MAX_KEY_BYTES} bytes`);
  for (const segment of key.split("/")) {
    if (segment === "") throw bad("it has an empty path segment ('//' or a trailing '/')");
    if (segment === "." || segment === "..") throw bad(`it has a '${segment}' path segment`);
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES)
      throw bad(`a path segment is longer than ${MAX_SEGMENT_BYTES} bytes`);
  }
}

function checkPrefix(prefix: string): void {
  if (prefix === "") return;
  // A prefix is a key, optionally ending in '/'.
  checkKey(prefix.endsWith("/") ? prefix.slice(0, -1) : prefix);
}

/** Byte order of UTF-8 keys, as S3 lists them. */
const byKey = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errno(err) === "EPERM";
  }
}

/**
 * The standalone object store: bucket `b` is the folder `<root>/b/` and key `k` the file below it;
 * content type and user metadata sit in `<root>/.meta/b/k.json`. Writes are atomic (temp file, fsync,
 * rename), so a reader or a crash never sees half an object. Buckets must exist (ensureBucket) before a
 * put, as with S3. Keys that would escape the bucket (`..`, absolute, NUL, empty segments) are refused,
 * and so is a key that needs a file where another key needs a folder (`a` next to `a/b`).
 * No presignPut: standalone, the API signs its own upload URLs.
 */
export function createLocalObjectStore(root: string): ObjectStore {
  const bucketDir = (bucket: string) => join(root, bucket);
  const dataPath = (bucket: string, key: string) => join(root, bucket, ...key.split("/"));
  const metaPath = (bucket: string, key: string) => `${join(root, META_DIR, bucket, ...key.split("/"))}.json`;
  const tempDir = join(root, TEMP_DIR);
  let tempReady: Promise<void> | undefined;

  /** Creates the temp folder once and removes temp files of processes that are gone. */
  function prepareTemp(): Promise<void> {
    tempReady ??= (async () => {
      await mkdir(tempDir, { recursive: true });
      for (const name of await readdir(tempDir)) {
        const pid = tempOwnerPid(name);
        if (name.startsWith(TEMP_PREFIX) && (pid === undefined || !isAlive(pid))) {
          await unlink(join(tempDir, name)).catch(() => undefined);
        }
      }
    })().catch((err: unknown) => {
      tempReady = undefined;
      throw err;
    });
    return tempReady;
  }

  async function requireBucket(bucket: string): Promise<void> {
    checkBucket(bucket);
    const s = await stat(bucketDir(bucket)).catch(() => undefined);
    if (!s?.isDirectory()) {
      throw new LocalObjectStoreError(
        "NoSuchBucket",
        `Bucket ${bucket} does not exist under ${root}; create it first (ensureBucket).`,
      );
    }
  }

  const conflict = (bucket: string, key: string, cause: unknown) =>
    new LocalObjectStoreError(
      "KeyConflict",
      `Cannot store ${key} in bucket ${bucket}: a key is a prefix folder of another (like "a" next to "a/b"), which a folder-backed bucket cannot hold.`,
      { cause },
    );

  /** Writes a temp file from `body`, fsynced; returns its path and size. */
  async function writeTemp(body: Buffer | string | Readable): Promise<{ tmp: string; size: number }> {
    await prepareTemp();
    const tmp = join(tempDir, tempName());
    const fh = await open(tmp, "wx", 0o600);
    let size = 0;
    let ok = false;
    try {
      if (typeof body === "string" || Buffer.isBuffer(body)) {
        const buf = typeof body === "string" ? Buffer.from(body) : body;
        await fh.writeFile(buf);
        size = buf.length;
      } else {
        for await (const chunk of body) {
          const buf = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
          await fh.write(buf);
          size += buf.length;
        }
      }
      await fh.sync();
      ok = true;
    } finally {
      await fh.close();
      if (!ok) await unlink(tmp).catch(() => undefined);
    }
    return { tmp, size };
  }

  /** Renames a temp file to `target`, creating its folders (retrying when a delete prunes them meanwhile). */
  async function place(tmp: string, target: string, bucket: string, key: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await mkdir(dirname(target), { recursive: true });
        await rename(tmp, target);
        await fsyncDir(dirname(target));
        return;
      } catch (err) {
        const code = errno(err);
        if (code === "ENOENT" && attempt < 5) continue;
        await unlink(tmp).catch(() => undefined);
        if (code === "EEXIST" || code === "ENOTDIR" || code === "EISDIR" || code === "ENOTEMPTY") {
          throw conflict(bucket, key, err);
        }
        throw err;
      }
    }
  }

  /** Removes now-empty folders from `dir` up to (not including) `stop`. */
  async function pruneEmpty(dir: string, stop: string): Promise<void> {
    for (let d = dir; d.startsWith(`${stop}/`); d = dirname(d)) {
      try {
        await rmdir(d);
      } catch {
        return;
      }
    }
  }

  async function removeFile(path: string, stop: string): Promise<boolean> {
    try {
      await unlink(path);
    } catch (err) {
      const code = errno(err);
      if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return false;
      throw err;
    }
    await pruneEmpty(dirname(path), stop);
    return true;
  }

  async function readMeta(bucket: string, key: string): Promise<Meta> {
    try {
      return JSON.parse(await readFile(metaPath(bucket, key), "utf8")) as Meta;
    } catch {
      return {};
    }
  }

  /**
   * The objects under `dir` in key order. With `startAfter`, a folder whose keys all sort at or before it
   * is not read at all and a file at or before it is not looked at (no stat), so a page deep into a large
   * listing costs the folders on its path plus the page.
   */
  async function* walk(
    bucket: string,
    dir: string,
    keyPrefix: string,
    prefix: string,
    startAfter?: string,
  ): AsyncGenerator<ObjectInfo> {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      const code = errno(err);
      if (code === "ENOENT" || code === "ENOTDIR") return;
      throw err;
    }
    // A folder's keys all start with "<name>/": sorting folders as "<name>/" gives S3's key order.
    const sorted = entries
      .filter((e) => e.isDirectory() || e.isFile())
      .map((e) => ({ entry: e, sortKey: e.isDirectory() ? `${e.name}/` : e.name }))
      .sort((a, b) => byKey(a.sortKey, b.sortKey));
    for (const { entry, sortKey } of sorted) {
      const key = keyPrefix + sortKey;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        // Every key in the folder starts with `key`: when startAfter does not, and sorts after it, the
        // whole folder sorts before startAfter.
        if (startAfter !== undefined && !startAfter.startsWith(key) && byKey(key, startAfter) < 0) continue;
        if (key.startsWith(prefix) || prefix.startsWith(key))
          yield* walk(bucket, path, key, prefix, startAfter);
      } else if (key.startsWith(prefix) && (startAfter === undefined || byKey(key, startAfter) > 0)) {
        const s = await stat(path).catch(() => undefined);
        if (s?.isFile()) yield { key, size: s.size, lastModified: s.mtime };
      }
    }
  }

  const store: ObjectStore = {
    async ensureBucket(bucket) {
      checkBucket(bucket);
      await mkdir(bucketDir(bucket), { recursive: true });
    },

    async put(bucket, key, body, opts?: PutOptions) {
      checkKey(key);
      await requireBucket(bucket);
      const { tmp, size } = await writeTemp(body);
      const meta: Meta = {
        ...(opts?.contentType ? { contentType: opts.contentType } : {}),
        ...(opts?.metadata && Object.keys(opts.metadata).length ? { metadata: { ...opts.metadata } } : {}),
      };
      await place(tmp, dataPath(bucket, key), bucket, key);
      if (meta.contentType || meta.metadata) {
        const metaTmp = await writeTemp(JSON.stringify(meta));
        await place(metaTmp.tmp, metaPath(bucket, key), bucket, key);
      } else {
        await removeFile(metaPath(bucket, key), join(root, META_DIR, bucket));
      }
      return { size };
    },

    async get(bucket, key) {
      checkBucket(bucket);
      checkKey(key);
      try {
        return await readFile(dataPath(bucket, key));
      } catch (err) {
        const code = errno(err);
        if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR")
          throw new ObjectNotFoundError(bucket, key);
        throw err;
      }
    },

    async getStream(bucket, key) {
      checkBucket(bucket);
      checkKey(key);
      const path = dataPath(bucket, key);
      let fh: FileHandle;
      try {
        fh = await open(path, "r");
        if (!(await fh.stat()).isFile()) {
          await fh.close();
          throw new ObjectNotFoundError(bucket, key);
        }
      } catch (err) {
        if (err instanceof ObjectNotFoundError) throw err;
        const code = errno(err);
        if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR")
          throw new ObjectNotFoundError(bucket, key);
        throw err;
      }
      // The open handle keeps the bytes readable even if the object is replaced or deleted meanwhile.
      return fh.createReadStream();
    },

    async stat(bucket, key) {
      checkBucket(bucket);
      checkKey(key);
      const s = await stat(dataPath(bucket, key)).catch(() => undefined);
      if (!s?.isFile()) return undefined;
      const meta = await readMeta(bucket, key);
      return {
        key,
        size: s.size,
        lastModified: s.mtime,
        ...(meta.contentType ? { contentType: meta.contentType } : {}),
        ...(meta.metadata ? { metadata: meta.metadata } : {}),
      };
    },

    list(bucket, prefix, opts) {
      checkBucket(bucket);
      checkPrefix(prefix);
      // Every key under the prefix lies in the folder its last '/' names: start there, so a listing deep in
      // a large tree (the tenant memory's index keys, platform/memory/) reads no folder above it.
      const base = prefix.slice(0, prefix.lastIndexOf("/") + 1);
      const dir = base ? join(bucketDir(bucket), ...base.slice(0, -1).split("/")) : bucketDir(bucket);
      return walk(bucket, dir, base, prefix, opts?.startAfter);
    },

    async delete(bucket, key) {
      checkBucket(bucket);
      checkKey(key);
      await removeFile(dataPath(bucket, key), bucketDir(bucket));
      await removeFile(metaPath(bucket, key), join(root, META_DIR, bucket));
    },

    async deletePrefix(bucket, prefix) {
      checkBucket(bucket);
      checkPrefix(prefix);
      const keys: string[] = [];
      for await (const o of walk(bucket, bucketDir(bucket), "", prefix)) keys.push(o.key);
      let deleted = 0;
      for (const key of keys) {
        if (await removeFile(dataPath(bucket, key), bucketDir(bucket))) deleted++;
        await removeFile(metaPath(bucket, key), join(root, META_DIR, bucket));
      }
      return deleted;
    },
  };
  return store;
}
