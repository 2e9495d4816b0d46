/**
 * Test support: a real S3-compatible server (s3rver, a dev dependency) in its own process on 127.0.0.1,
 * a free port and its data in a temp folder, for the S3 object store tests and the cluster e2e.
 * The process runs with --openssl-legacy-provider: s3rver makes its ListObjectsV2 continuation tokens
 * with DES, which Node 20's OpenSSL 3 only offers there (without it any truncated listing answers 500).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(import.meta.url);

/**
 * The server process: starts s3rver, prints its port, and stops when its stdin closes (parent gone).
 * s3rver's multi-object delete removes objects in parallel and then races on removing the folders they
 * emptied (one delete's rmdir beats another's readdir: 500 InternalError); real S3 has no folders, so
 * the script runs s3rver's deletes one at a time.
 * s3rver also writes an object in place (truncating the old file, then its metadata file), and answers a
 * PUT before the bytes of a buffered body are flushed, so a GET racing a PUT of the same key reads a 500,
 * a reset connection, "no such key" or a torn body. S3 replaces an object atomically: a reader sees the old
 * or the new object whole. The script gives s3rver that guarantee: a PUT writes the whole body to the file
 * before it answers, and a per-key read/write lock keeps GETs (until their body is sent) apart from PUTs,
 * copies and deletes of that key.
 */
const SERVER_SCRIPT = `
const path = require("node:path");
const S3rver = require(process.env.S3RVER_MODULE);
const Store = require(path.join(path.dirname(process.env.S3RVER_MODULE), "stores", "filesystem.js"));
const crypto = require("node:crypto");
const fs = require("node:fs");
const { pipeline } = require("node:stream/promises");
const { Transform } = require("node:stream");
const locks = new Map();
function lock(id, write) {
  let l = locks.get(id);
  if (!l) locks.set(id, (l = { readers: 0, writer: false, waiting: [] }));
  return new Promise((resolve) => {
    const take = () => {
      if (l.writer || (write && l.readers > 0)) return false;
      if (write) l.writer = true;
      else l.readers++;
      resolve(() => {
        if (write) l.writer = false;
        else l.readers--;
        const waiting = l.waiting;
        l.waiting = waiting.filter((t) => !t());
        if (!l.writer && l.readers === 0 && l.waiting.length === 0) locks.delete(id);
      });
      return true;
    };
    if (!take()) l.waiting.push(take);
  });
}
async function locked(id, write, fn) {
  const release = await lock(id, write);
  try { return await fn(); } finally { release(); }
}
const deleteObject = Store.prototype.deleteObject;
let queue = Promise.resolve();
Store.prototype.deleteObject = function (bucket, key) {
  const run = queue.then(() => locked(bucket + "/" + key, true, () => deleteObject.call(this, bucket, key)));
  queue = run.catch(() => undefined);
  return run;
};
Store.prototype.putObject = function (object) {
  return locked(object.bucket + "/" + object.key, true, async () => {
    const objectPath = this.getResourcePath(object.bucket, object.key, "object");
    await fs.promises.mkdir(path.dirname(objectPath), { recursive: true });
    const md5 = crypto.createHash("md5");
    let size = 0;
    if (Buffer.isBuffer(object.content)) {
      md5.update(object.content);
      size = object.content.length;
      await fs.promises.writeFile(objectPath, object.content);
    } else {
      const count = new Transform({
        transform(chunk, encoding, callback) { md5.update(chunk); size += chunk.length; callback(null, chunk); },
      });
      await pipeline(object.content, count, fs.createWriteStream(objectPath));
    }
    const digest = md5.digest("hex");
    await this.putMetadata(object.bucket, object.key, object.metadata, digest);
    return { size, md5: digest };
  });
};
const copyObject = Store.prototype.copyObject;
Store.prototype.copyObject = function (srcBucket, srcKey, destBucket, destKey, ...rest) {
  return locked(destBucket + "/" + destKey, true, () => copyObject.call(this, srcBucket, srcKey, destBucket, destKey, ...rest));
};
const getObject = Store.prototype.getObject;
Store.prototype.getObject = async function (bucket, key, options) {
  const release = await lock(bucket + "/" + key, false);
  let object;
  try { object = await getObject.call(this, bucket, key, options); } catch (e) { release(); throw e; }
  const body = object && object.content;
  if (body && typeof body.once === "function" && !body.destroyed) {
    let done = false;
    const once = () => { if (!done) { done = true; release(); } };
    body.once("close", once);
    body.once("error", once);
  } else release();
  return object;
};
const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: process.env.S3RVER_DIR });
server.run().then(
  (a) => process.stdout.write(JSON.stringify({ port: a.port }) + "\\n"),
  (e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); },
);
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
`;

export interface S3TestServer {
  endPoint: string;
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  accessKey: string;
  secretKey: string;
  /** Stops the server and removes its data folder. Idempotent. */
  stop(): Promise<void>;
}

/** Whether s3rver is installed; `reason` says how to get it. */
export function s3TestServerAvailable(): { ok: boolean; reason?: string } {
  try {
    require.resolve("s3rver");
    return { ok: true };
  } catch {
    return { ok: false, reason: "the s3rver dev dependency is not installed; run `npm install`." };
  }
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

/**
 * Starts s3rver on 127.0.0.1 with a free port; credentials are s3rver's fixed S3RVER / S3RVER.
 * s3rver checks access key ids but not V4 signatures.
 */
export async function startS3TestServer(
  opts: {
    timeoutMs?: number;
    /** Keep the data in this folder (created when missing) and leave it on stop: a seeded store for a bench. */
    directory?: string;
  } = {},
): Promise<S3TestServer> {
  const keep = opts.directory !== undefined;
  const directory = opts.directory ?? (await mkdtemp(join(tmpdir(), "docverify-s3rver-")));
  const child = spawn(process.execPath, ["--openssl-legacy-provider", "-e", SERVER_SCRIPT], {
    env: { ...process.env, S3RVER_MODULE: require.resolve("s3rver"), S3RVER_DIR: directory },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.on("data", (d) => (err = (err + d.toString()).slice(-4000)));
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`s3rver did not start within ${opts.timeoutMs ?? 20_000} ms: ${err}`)),
        opts.timeoutMs ?? 20_000,
      );
      child.stdout?.on("data", (d) => {
        out += d.toString();
        const line = out.split("\n")[0];
        if (out.includes("\n") && line) {
          clearTimeout(timer);
          resolve((JSON.parse(line) as { port: number }).port);
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`s3rver exited (${code}) before it started: ${err}`));
      });
    });
  } catch (e) {
    await kill(child);
    if (!keep) await rm(directory, { recursive: true, force: true });
    throw e;
  }
  let stopped = false;
  return {
    endPoint: "127.0.0.1",
    port,
    url: `http://127.0.0.1:${port}`,
    accessKey: "S3RVER",
    secretKey: "S3RVER",
    async stop() {
      if (stopped) return;
      stopped = true;
      await kill(child);
      if (!keep) await rm(directory, { recursive: true, force: true });
    },
  };
}
