import { createHash, randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import path from "node:path";
import type { UsageCounter } from "../../core/usage-counter.js";

/** What one client's file holds. */
interface UsageFile {
  client_id: string;
  counts: Record<string, number>;
}

/**
 * UsageCounter on a directory: one JSON file per client (named by a hash of the client id, so any id is
 * a safe file name), replaced atomically (write a temp file, fsync, rename, fsync the directory).
 * Calls are serialised in-process, so a read-modify-write never interleaves with another.
 * One process owns the directory (the standalone service).
 */
export function createLocalUsageCounter(dir: string): UsageCounter {
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <R>(fn: () => Promise<R>): Promise<R> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  };
  const fileOf = (clientId: string) =>
    path.join(dir, `${createHash("sha256").update(clientId).digest("hex").slice(0, 32)}.json`);

  async function read(clientId: string): Promise<UsageFile> {
    try {
      const parsed = JSON.parse(await readFile(fileOf(clientId), "utf8")) as Partial<UsageFile>;
      const counts: Record<string, number> = {};
      for (const [k, v] of Object.entries(parsed.counts ?? {})) {
        if (Number.isInteger(v) && v >= 0) counts[k] = v;
      }
      return { client_id: clientId, counts };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { client_id: clientId, counts: {} };
      throw new Error(`Could not read the usage counters of client ${clientId} in ${dir}: ${String(err)}`, {
        cause: err,
      });
    }
  }

  async function write(data: UsageFile): Promise<void> {
    await mkdir(dir, { recursive: true });
    const target = fileOf(data.client_id);
    const tmp = `${target}.${randomBytes(6).toString("hex")}.tmp`;
    const fh = await open(tmp, "w");
    try {
      await fh.writeFile(`${JSON.stringify(data)}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await rename(tmp, target);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    const dh = await open(dir, "r");
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  }

  return {
    tryConsume: (clientId, kind, limit) =>
      serial(async () => {
        const data = await read(clientId);
        const used = data.counts[kind] ?? 0;
        if (used >= limit) return false;
        data.counts[kind] = used + 1;
        await write(data);
        return true;
      }),
    refund: (clientId, kind) =>
      serial(async () => {
        const data = await read(clientId);
        const used = data.counts[kind] ?? 0;
        if (used === 0) return;
        data.counts[kind] = used - 1;
        await write(data);
      }),
    used: (clientId, kind) => serial(async () => (await read(clientId)).counts[kind] ?? 0),
  };
}
