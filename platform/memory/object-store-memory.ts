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
 *   memory/<tenant>/e/<detection>.json                     the entry (TENANT_MEMORY_ENTRY)
 *   memory/<tenant>/x/<index key>/<detection>              an empty marker per plain index key (LSH band,
 *                                                          file, identifier)
 *   memory/<tenant>/x/<group key>/<group>/<shard>/<detection>  a group member's marker (template under an
 *                                                          issuer, issuer's template), sharded (memberShard)
 *   memory/by-detection/<detection>                        the tenant's id, so that forget needs only the
 *                                                          detection
 *
 * A lookup lists a few markers under each index key of the new document (S3 max-keys; the local store
 * reads only the folders on the path), then reads the entries found: its cost is bounded by the number of
 * index keys, not by the size of the memory. A group walk lists each group once (a page that holds several
 * small groups serves them all) and skips past a group without reading its folders again; a group's
 * members are spread over 256 shard folders, so reading its first members reads one or two small folders
 * whatever its size (docs/decisions.md, "Tenant memory").
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
      for (const [i, list] of lists.entries()) {
        // Under a group member key the markers are `<shard>/<detection>` (or, as first written, bare);
        // under a plain key only bare markers are members (a folder below would be another key's).
        const member = (q.keys[i] as string).includes("/");
        for (const rel of list.slice(0, q.perKey + 1)) {
          if (!member && rel.includes("/")) continue;
          const id = rel.slice(rel.lastIndexOf("/") + 1);
          if (id !== q.exclude && !ids.includes(id)) ids.push(id);
        }
      }
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
        const inPage = new Map<string, string[]>();
        for (const rel of page) {
          if (rel.indexOf("/") <= 0) continue;
          const group = rel.slice(0, rel.indexOf("/"));
          const members = inPage.get(group) ?? [];
          members.push(rel.slice(rel.lastIndexOf("/") + 1));
          inPage.set(group, members);
        }
        const full = page.length >= q.perGroup;
        const names = [...inPage.keys()];
        let progressed = false;
        for (const [i, group] of names.entries()) {
          const members = inPage.get(group) as string[];
          // The page's last group may go on past the page: the next page starts at it, unless it is the
          // page's only group (then it already has perGroup members).
          if (full && i > 0 && i === names.length - 1 && members.length < q.perGroup) break;
          if (out.size >= q.groups) break;
          out.set(group, members.slice(0, q.perGroup));
          // Past every key of the group without reading its folders again: '0' follows '/' in byte order
          // and a group name holds no '/', so no other group's keys lie between `<group>/` and `<group>0`.
          startAfter = `${prefix}${group}0`;
          progressed = true;
        }
        if (!progressed) break;
      }
      return out;
    },

    async remember(tenant, entry) {
      await objects.put(bucket, memoryKeys.owner(entry.detection), tenant, { contentType: "text/plain" });
      await writeStored(objects, bucket, TENANT_MEMORY_ENTRY, entry, tenant, entry.detection);
      await Promise.all(
        entry.keys.map((k) => objects.put(bucket, memoryKeys.marker(tenant, k, entry.detection), "")),
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
          entry.keys.flatMap((k) => [
            objects.delete(bucket, memoryKeys.marker(tenant, k, detection)),
            ...(k.includes("/") ? [objects.delete(bucket, memoryKeys.legacyMarker(tenant, k, detection))] : []),
          ]),
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
