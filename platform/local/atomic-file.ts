import { randomBytes } from "node:crypto";
import { open, rename, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";

/** Temp files of atomic writes start with this (and are never taken for real files). */
export const TEMP_PREFIX = ".tmp-";

/** A temp-file name for `pid`, unique within the process. */
export function tempName(pid = process.pid): string {
  return `${TEMP_PREFIX}${pid}-${randomBytes(6).toString("hex")}`;
}

/** The pid encoded in a temp-file name, or undefined when the name is not one. */
export function tempOwnerPid(name: string): number | undefined {
  if (!name.startsWith(TEMP_PREFIX)) return undefined;
  const pid = Number(name.slice(TEMP_PREFIX.length).split("-")[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** Flushes a directory's entries (a created, renamed or removed name) to disk. */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Writes `data` to `path` so that a crash at any moment leaves either the old file or the new one:
 * write a temp file in the same directory, fsync it, rename it over `path`, fsync the directory.
 */
export async function writeFileAtomic(path: string, data: Buffer | string): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, tempName());
  const fh = await open(tmp, "wx", 0o600);
  let written = false;
  try {
    await fh.writeFile(data);
    await fh.sync();
    written = true;
  } finally {
    await fh.close();
    if (!written) await unlink(tmp).catch(() => undefined);
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fsyncDir(dir);
}

/** Removes `path` (missing is fine) and makes the removal durable. */
export async function unlinkDurable(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  await fsyncDir(dirname(path));
}
