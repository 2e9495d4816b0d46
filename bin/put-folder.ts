import type { Dirent } from "node:fs";
import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../core/config.js";
import type { ObjectStore } from "../core/ports.js";
import { objectStoreFor } from "./object-stores.js";

const HELP = `Usage: docverify put-folder <local folder> <bucket>[/<prefix>]

Copies every file below a local folder into a bucket of the standalone object store (buckets are
folders of $DOCVERIFY_DATA_DIR/objects/), keeping the relative paths: <prefix>/<path in the folder>.
Use it to try batch jobs (POST /jobs) on one machine. The bucket must be in your client's "buckets"
list in the clients file. Existing objects of the same key are replaced.

Example:
  docverify put-folder ./applications inbox/2026-11-02
  → objects inbox: 2026-11-02/<file>, ready for a job with connector
    {"type": "s3", "bucket_name": "inbox", "prefixes": ["2026-11-02/"]}

Options:
  --data-dir <dir>   the service's data folder (default: $DOCVERIFY_DATA_DIR or .data)
`;

export interface PutFolderResult {
  bucket: string;
  prefix: string;
  keys: string[];
  bytes: number;
  /** Entries that are neither files nor folders (symbolic links, sockets, ...), not copied. */
  skipped: string[];
}

/** Splits `bucket[/prefix]`; a prefix gets a trailing '/' so it names a folder. */
export function parseTarget(target: string): { bucket: string; prefix: string } {
  const i = target.indexOf("/");
  const bucket = i < 0 ? target : target.slice(0, i);
  let prefix = i < 0 ? "" : target.slice(i + 1).replace(/^\/+/, "");
  if (prefix !== "" && !prefix.endsWith("/")) prefix += "/";
  return { bucket, prefix };
}

async function* filesBelow(root: string, rel = ""): AsyncGenerator<{ rel: string; kind: "file" | "other" }> {
  const entries: Dirent[] = await readdir(path.join(root, rel), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) yield* filesBelow(root, r);
    else yield { rel: r, kind: e.isFile() ? "file" : "other" };
  }
}

/** Copies the files below `dir` into `bucket` under `prefix` (creating the bucket). */
export async function putFolder(
  objects: ObjectStore,
  dir: string,
  bucket: string,
  prefix: string,
): Promise<PutFolderResult> {
  await objects.ensureBucket(bucket);
  const result: PutFolderResult = { bucket, prefix, keys: [], bytes: 0, skipped: [] };
  for await (const f of filesBelow(dir)) {
    if (f.kind !== "file") {
      result.skipped.push(f.rel);
      continue;
    }
    const key = prefix + f.rel;
    const { size } = await objects.put(bucket, key, createReadStream(path.join(dir, f.rel)));
    result.keys.push(key);
    result.bytes += size;
  }
  return result;
}

export async function runPutFolder(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    process.stderr.write(`docverify put-folder: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (positionals.length !== 2) {
    process.stderr.write(`docverify put-folder: give a local folder and a bucket[/prefix]\n\n${HELP}`);
    return 2;
  }
  const [dir, target] = positionals as [string, string];
  const { bucket, prefix } = parseTarget(target);
  const dataDir = path.resolve(values["data-dir"] ?? loadConfig(env).dataDir);
  const source = path.resolve(dir);
  if (!(await stat(source).catch(() => undefined))?.isDirectory()) {
    process.stderr.write(`docverify put-folder: ${dir} is not a folder that exists.\n`);
    return 1;
  }
  try {
    const r = await putFolder(objectStoreFor(dataDir), source, bucket, prefix);
    process.stdout.write(
      `Copied ${r.keys.length} files (${r.bytes} bytes) into bucket ${bucket}${prefix ? ` under ${prefix}` : ""} (${path.join(dataDir, "objects", bucket)}).\n`,
    );
    if (r.skipped.length) {
      process.stdout.write(
        `Skipped ${r.skipped.length} entries that are not regular files: ${r.skipped.join(", ")}\n`,
      );
    }
    process.stdout.write(
      `Connector for POST /jobs: ${JSON.stringify({ type: "s3", bucket_name: bucket, prefixes: [prefix] })}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`docverify put-folder: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: { "data-dir": { type: "string" }, help: { type: "boolean", short: "h" } },
  });
}
