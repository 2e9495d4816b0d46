import { createHash } from "node:crypto";
import { z } from "zod";
import { defineStored } from "./stored.js";

/**
 * The tenant memory (issue 23): what a tenant's earlier detections looked like, so that a check can see the
 * same file submitted twice, the same document with other values, one template under several issuers, and
 * an identifier that appeared with another holder. A tenant is a client (`client_id`), or the `tenant` its
 * entry in the clients file names (several clients of one customer).
 *
 * What is kept is derived data only, computed in the check step (checks/history-matches/fingerprint.ts) and
 * keyed with the deployment's memory key (HMAC-SHA-256, a key per tenant derived from it), so it is useless
 * outside the deployment and across tenants: keyed hashes of the file, of identifiers, holder and issuer; two
 * MinHash signatures (the cells' text, the fixed wording with digits masked); the template key (producer,
 * page size, fonts); and the cells' text sealed (AES-256-GCM) so a reviewer sees the earlier value beside the
 * new one. An entry lives as long as its detection's own files: DELETE and retention remove it.
 *
 * Lookups are bounded: an entry is filed under index keys (the file hash, 16 LSH bands of the content
 * signature, each identifier, the template), and a lookup reads a few keys under each index key of the new
 * document, never the whole memory; a group's members are sharded (memberShard) so that a group of
 * thousands costs a lookup no more than a small one. Cross-tenant matching is not offered: the tenant is part of every path.
 */

/**
 * The document's cells, one string: per cell `page:x:y:hash` (position in points, rounded; keyed hash of its
 * text, 64 bits), separated by spaces. One string rather than an array of tuples: an entry is read and
 * validated on every lookup that finds it, and validating hundreds of tuples cost milliseconds each time.
 */
export const MemoryCells = z.string().regex(/^(\d+:-?\d+:-?\d+:[A-Za-z0-9_-]+( |$))*$/);

/** A keyed identifier: what it is (iban, account, invoice, customer) and its keyed hash. */
export const MemoryIdentifier = z.object({ kind: z.string(), hash: z.string(), sealed: z.string() });
export type MemoryIdentifier = z.infer<typeof MemoryIdentifier>;

export const MemoryEntry = z.object({
  v: z.literal(1),
  detection: z.string(),
  /** When the check step computed it. */
  at: z.string(),
  /** The declared document type. */
  docType: z.string(),
  /** Keyed hash of the file's SHA-256. */
  file: z.string(),
  /** Keyed hash of the claimed issuer (the first line of the first page), when one was read. */
  issuer: z.string().optional(),
  /** The claimed issuer's name, sealed (shown when a template appears under another issuer). */
  issuerSealed: z.string().optional(),
  /** Keyed hash of the holder's name, when one was read. */
  holder: z.string().optional(),
  identifiers: z.array(MemoryIdentifier),
  /** Keyed hash of the template: producer and its version, page size, fonts. */
  template: z.string(),
  /** The template's description (producer, page size, fonts), sealed: how a template differs, in words. */
  templateSealed: z.string(),
  /** MinHash signature (64 × 32 bits, base64) of the cells' text. */
  content: z.string(),
  /** MinHash signature of the cells' text with every digit masked (the fixed wording and the geometry). */
  wording: z.string(),
  cells: MemoryCells,
  /** The cells' texts, in the order of `cells`, as one sealed JSON array. */
  cellsSealed: z.string(),
  /** Index keys the entry is filed under (a key with one `/` is a group and a member). */
  keys: z.array(z.string()),
});
export type MemoryEntry = z.infer<typeof MemoryEntry>;

/** The check step's entry for its detection, kept with its results until the detection is remembered. */
export const MEMORY_ENTRY = defineStored({
  what: "the detection's tenant memory entry",
  key: (detection: string) => `runs/${detection}/memory.json`,
  schema: z.object({ tenant: z.string(), entry: MemoryEntry }),
});

/** Groups under one index key (e.g. the issuers a template appeared under) and some members of each. */
export type MemoryGroups = Map<string, string[]>;

/**
 * The port. `tenant` is the tenant's keyed id (never its name). Both runtimes use the object-store adapter
 * (platform/memory/): the step processes, which look up, see no Redis (bin/step-env.ts), only the object store.
 */
export interface TenantMemory {
  /**
   * Entries of `tenant` filed under any of `keys`, at most `perKey` per key and `limit` in all, without
   * `exclude` (the detection asking).
   */
  lookup(
    tenant: string,
    q: { keys: readonly string[]; perKey: number; limit: number; exclude?: string },
  ): Promise<MemoryEntry[]>;
  /** The groups under the group key `key` (members filed as `key/<group>`), at most `groups`, `perGroup` each. */
  groups(tenant: string, key: string, q: { groups: number; perGroup: number }): Promise<MemoryGroups>;
  /** Files the entry under its keys (idempotent). */
  remember(tenant: string, entry: MemoryEntry): Promise<void>;
  /** True when the detection is remembered. */
  has(detection: string): Promise<boolean>;
  /** Removes the detection's entry and index keys; how many objects went (idempotent). */
  forget(detection: string): Promise<number>;
}

/** The memory settings of a deployment (DOCVERIFY_MEMORY, DOCVERIFY_MEMORY_KEY[_FILE]). */
export interface MemorySettings {
  enabled: boolean;
  key?: string;
  keyFile?: string;
}

/** The tenant of a detection: the client entry's `tenant`, else the client. */
export const tenantOf = (spec: { submittedBy: string; tenant?: string }): string =>
  spec.tenant ?? spec.submittedBy;

/**
 * The shard of a group member's marker: two hex digits of the detection id's SHA-256 (256 shards). A group
 * (one template under one issuer, one issuer's documents of one template) can hold every document of a big
 * bank; its markers are spread over 256 folders so that reading a few members or counting up to a cap reads
 * one or two small folders, not one folder of thousands (the local store reads and sorts a whole folder to
 * list it in key order). The shard follows from the detection id alone, so forget finds every marker.
 */
export const memberShard = (detection: string): string =>
  createHash("sha256").update(detection).digest("hex").slice(0, 2);

/** Where the object-store adapter keeps a tenant's entries and index keys (platform/memory/). */
export const memoryKeys = {
  entry: (tenant: string, detection: string) => `memory/${tenant}/e/${detection}.json`,
  index: (tenant: string, key: string) => `memory/${tenant}/x/${key}/`,
  /**
   * The marker of a detection under an index key: `<index>/<detection>` under a plain key (file, band,
   * identifier), `<index>/<shard>/<detection>` under a group member key (`<group key>/<group>`).
   */
  marker: (tenant: string, key: string, detection: string) =>
    key.includes("/")
      ? `memory/${tenant}/x/${key}/${memberShard(detection)}/${detection}`
      : `memory/${tenant}/x/${key}/${detection}`,
  /** The marker as the first layout wrote it (group members unsharded): forget removes it too. */
  legacyMarker: (tenant: string, key: string, detection: string) => `memory/${tenant}/x/${key}/${detection}`,
  /** The tenant of a remembered detection (forget needs only the detection's id). */
  owner: (detection: string) => `memory/by-detection/${detection}`,
  tenantPrefix: (tenant: string) => `memory/${tenant}/`,
};

/** A remembered entry in the object store. */
export const TENANT_MEMORY_ENTRY = defineStored({
  what: "a tenant memory entry",
  key: memoryKeys.entry,
  schema: MemoryEntry,
});
