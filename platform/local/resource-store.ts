import { mkdir, readdir, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { StoreError } from "../../core/ports.js";
import type { Resource } from "../../core/resource.js";
import { TEMP_PREFIX, tempOwnerPid, unlinkDurable, writeFileAtomic } from "./atomic-file.js";
import { MemoryResourceStore, RESOURCE_NAME_RE } from "./memory-resource-store.js";

export interface LocalResourceStoreOptions {
  /** Folder holding one `<name>.json` per object of this kind (created when missing). */
  dir: string;
  /** Kind name, used in error messages. */
  kind: string;
  /** Shared by every kind of the service, so resourceVersions grow store-wide. */
  revision?: { value: number };
  /** How many past events a watch can resume from. */
  historySize?: number;
  /** The size guard (core/resource-size.ts); default DEFAULT_MAX_RESOURCE_BYTES. */
  maxObjectBytes?: number;
  /** Told about files set aside as corrupt (pino's `warn` fits). */
  log?: { warn(obj: object, msg: string): void };
}

const FILE_SUFFIX = ".json";

/**
 * The durable standalone resource store: MemoryResourceStore's semantics, every write persisted to one
 * JSON file per object before it becomes visible (atomic: temp file, fsync, rename, fsync of the folder),
 * so a kill -9 at any moment keeps every acknowledged write.
 */
export async function openLocalResourceStore<T extends Resource>(
  opts: LocalResourceStoreOptions,
): Promise<MemoryResourceStore<T>> {
  const { dir, kind } = opts;
  await mkdir(dir, { recursive: true });
  const objects = await loadDir<T>(dir, kind, opts.log);
  const store = new MemoryResourceStore<T>(kind, {
    ...(opts.historySize !== undefined ? { historySize: opts.historySize } : {}),
    ...(opts.revision ? { revision: opts.revision } : {}),
    ...(opts.maxObjectBytes !== undefined ? { maxObjectBytes: opts.maxObjectBytes } : {}),
    persist: async ({ type, object }) => {
      const name = object.metadata.name;
      const file = join(dir, fileNameOf(name, kind));
      try {
        if (type === "put") await writeFileAtomic(file, `${JSON.stringify(object)}\n`);
        else await unlinkDurable(file);
      } catch (err) {
        throw new StoreError(
          "Unavailable",
          `Could not ${type === "put" ? "write" : "remove"} ${kind} ${name} in ${dir} (${(err as Error).message}); check that the folder is writable and the disk is not full.`,
          { cause: err },
        );
      }
    },
  });
  store.load(objects);
  return store;
}

function fileNameOf(name: string, kind: string): string {
  if (!RESOURCE_NAME_RE.test(name))
    throw new StoreError("Invalid", `${kind} name "${name}" is not a valid name`);
  return name + FILE_SUFFIX;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function loadDir<T extends Resource>(
  dir: string,
  kind: string,
  log: LocalResourceStoreOptions["log"],
): Promise<T[]> {
  const names = (await readdir(dir)).sort();
  const objects: T[] = [];
  for (const file of names) {
    if (file.startsWith(TEMP_PREFIX)) {
      // A write that never reached its rename: the committed file (if any) is still in place.
      const pid = tempOwnerPid(file);
      if (pid === undefined || pid === process.pid || !isAlive(pid))
        await unlink(join(dir, file)).catch(() => {});
      continue;
    }
    if (!file.endsWith(FILE_SUFFIX)) continue;
    const path = join(dir, file);
    const name = file.slice(0, -FILE_SUFFIX.length);
    const problem = await readObject<T>(path, name).then(
      (obj) => {
        objects.push(obj);
        return undefined;
      },
      (err: Error) => err.message,
    );
    if (problem !== undefined) {
      const aside = `${path}.corrupt-${Date.now()}`;
      await rename(path, aside);
      log?.warn({ kind, file: path, movedTo: aside, problem }, `Set aside an unreadable ${kind} file`);
    }
  }
  return objects;
}

async function readObject<T extends Resource>(path: string, name: string): Promise<T> {
  const text = await readFile(path, "utf8");
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    throw new Error(`not JSON: ${(err as Error).message}`);
  }
  if (typeof obj !== "object" || obj === null) throw new Error("not a JSON object");
  const meta = (obj as { metadata?: unknown }).metadata as Record<string, unknown> | undefined;
  if (typeof meta !== "object" || meta === null) throw new Error("no metadata");
  if (meta.name !== name) throw new Error(`metadata.name is ${JSON.stringify(meta.name)}, not ${name}`);
  if (typeof meta.resourceVersion !== "string" || !/^[1-9][0-9]*$/.test(meta.resourceVersion)) {
    throw new Error(`metadata.resourceVersion ${JSON.stringify(meta.resourceVersion)} is not a version`);
  }
  return obj as T;
}
