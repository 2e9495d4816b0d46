import { ObjectNotFoundError, type ObjectStore } from "../../core/ports.js";
import { readStored, writeStored } from "../../core/stored.js";
import {
  type MemoryEntry,
  type MemoryGroups,
  memoryKeys,
  TENANT_MEMORY_ENTRY,
  type TenantMemory,
} from "../../core/tenant-memory.js";

/**
 * The tenant memory in the deployment's object store (both runtimes: the local data directory standalone,
 * S3 in the cluster; the step processes that look up see only the object store). Layout:
 *
 *   memory/<tenant>/e/<detection>.json        the entry (TENANT_MEMORY_ENTRY)
 *   memory/<tenant>/x/<index key>/<detection> an empty marker per index key (LSH band, file, identifier, …)
 *   memory/by-detection/<detection>           the tenant's id, so that forget needs only the detection
 *
 * A lookup lists a few markers under each index key of the new document (S3 max-keys; the local store
 * reads only the folders on the path), then reads the entries found: its cost is bounded by the number of
 * index keys, not by the size of the memory.
 */
export function createObjectStoreMemory(objects: ObjectStore, bucket: string): TenantMemory {
  async function firstKeys(prefix: string, n: number, startAfter?: string): Promise<string[]> {
    const out: string[] = [];
    if (n <= 0) return out;
    for await (const o of objects.list(bucket, prefix, {
      pageSize: Math.min(1000, n),
      ...(startAfter ? { startAfter } : {}),
    })) {
      out.push(o.key.slice(prefix.length));
      if (out.length >= n) break;
    }
    return out;
  }

  async function readEntry(tenant: string, detection: string): Promise<MemoryEntry | undefined> {
    const read = await readStored(objects, bucket, TENANT_MEMORY_ENTRY, tenant, detection);
    return read.kind === "ok" ? read.value : undefined;
  }

  return {
    async lookup(tenant, q) {
      const lists = await Promise.all(
        q.keys.map((k) => firstKeys(memoryKeys.index(tenant, k), q.perKey + (q.exclude ? 1 : 0))),
      );
      const ids: string[] = [];
      for (const list of lists)
        for (const id of list.slice(0, q.perKey + 1))
          if (id !== q.exclude && !id.includes("/") && !ids.includes(id)) ids.push(id);
      const entries = await Promise.all(ids.slice(0, q.limit).map((id) => readEntry(tenant, id)));
      return entries.filter((e): e is MemoryEntry => e !== undefined);
    },

    async groups(tenant, key, q) {
      const prefix = memoryKeys.index(tenant, key);
      const out: MemoryGroups = new Map();
      let startAfter: string | undefined;
      while (out.size < q.groups) {
        const page = await firstKeys(prefix, q.perGroup, startAfter);
        if (page.length === 0) break;
        const group = (page[0] as string).split("/")[0] as string;
        out.set(
          group,
          page.filter((k) => k.startsWith(`${group}/`)).map((k) => k.slice(group.length + 1)),
        );
        // Jump past the rest of this group: '~' sorts after every character of a group or detection id.
        startAfter = `${prefix}${group}/~`;
      }
      return out;
    },

    async remember(tenant, entry) {
      await objects.put(bucket, memoryKeys.owner(entry.detection), tenant, { contentType: "text/plain" });
      await writeStored(objects, bucket, TENANT_MEMORY_ENTRY, entry, tenant, entry.detection);
      await Promise.all(
        entry.keys.map((k) => objects.put(bucket, `${memoryKeys.index(tenant, k)}${entry.detection}`, "")),
      );
    },

    async has(detection) {
      return (await objects.stat(bucket, memoryKeys.owner(detection))) !== undefined;
    },

    async forget(detection) {
      const owner = memoryKeys.owner(detection);
      let tenant: string;
      try {
        tenant = (await objects.get(bucket, owner)).toString("utf8").trim();
      } catch (err) {
        if (err instanceof ObjectNotFoundError) return 0;
        throw err;
      }
      let removed = 0;
      const entry = /^[A-Za-z0-9_-]+$/.test(tenant) ? await readEntry(tenant, detection) : undefined;
      if (entry) {
        await Promise.all(
          entry.keys.map((k) => objects.delete(bucket, `${memoryKeys.index(tenant, k)}${detection}`)),
        );
        removed += entry.keys.length;
        await objects.delete(bucket, memoryKeys.entry(tenant, detection));
        removed++;
      }
      await objects.delete(bucket, owner);
      return removed + 1;
    },
  };
}
