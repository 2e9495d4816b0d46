import type { MemoryEntry, TenantMemory } from "../../core/tenant-memory.js";
import type { DocumentModel } from "../../document/model.js";
import { type Fingerprint, type FingerprintInput, fingerprint } from "./fingerprint.js";
import type { TenantKeys } from "./keys.js";
import { logoHash } from "./logo.js";

/**
 * The memory's part of the check step's inputs, gathered once before the checks run (the check itself,
 * history-matches.ts, only decides): the document's fingerprint and the tenant's earlier entries it may
 * match. Every read is bounded: a few keys under each of the document's index keys.
 */
export interface HistoryInput {
  keys: TenantKeys;
  fingerprint: Fingerprint;
  /** Earlier entries sharing the file hash, an LSH band of the content, or an identifier. */
  earlier: MemoryEntry[];
  /** One earlier entry per other claimed issuer under the same template. */
  templateElsewhere: MemoryEntry[];
  /** The templates earlier documents of the same claimed issuer used: template → how many (capped). */
  issuerTemplates: Map<string, number>;
  /** One earlier entry of the issuer's most used template, when it is not this document's. */
  issuerUsual?: MemoryEntry;
}

/** Per index key, at most this many entries are read; at most LIMIT in all. */
const PER_KEY = 6;
const LIMIT = 40;
/** Other issuers looked at under one template; documents counted per template of one issuer. */
const OTHER_ISSUERS = 6;
const PER_TEMPLATE = 50;

export async function gatherHistory(
  doc: DocumentModel,
  input: FingerprintInput,
  keys: TenantKeys,
  memory: TenantMemory,
): Promise<HistoryInput> {
  const logo = await logoHash(doc);
  const fp = fingerprint(doc, input, keys, logo ? { logo } : {});
  const tenant = keys.id;
  const { entry } = fp;
  const lookupKeys = entry.keys.filter((k) => /^(f|c\d+|i)\./.test(k));
  const exclude = input.detection;
  const [earlier, issuers, templates] = await Promise.all([
    memory.lookup(tenant, { keys: lookupKeys, perKey: PER_KEY, limit: LIMIT, exclude }),
    memory.groups(tenant, `t.${entry.template}`, { groups: OTHER_ISSUERS + 1, perGroup: 1 }),
    entry.issuer
      ? memory.groups(tenant, `it.${entry.issuer}`, { groups: 8, perGroup: PER_TEMPLATE })
      : Promise.resolve(new Map<string, string[]>()),
  ]);
  const others = [...issuers.entries()]
    .filter(([issuer, ids]) => issuer !== "-" && issuer !== entry.issuer && ids.some((id) => id !== exclude))
    .slice(0, OTHER_ISSUERS);
  const templateElsewhere = others.length
    ? await memory.lookup(tenant, {
        keys: others.map(([issuer]) => `t.${entry.template}/${issuer}`),
        perKey: 1,
        limit: OTHER_ISSUERS,
        exclude,
      })
    : [];
  const issuerTemplates = new Map<string, number>();
  for (const [template, ids] of templates) {
    const n = ids.filter((id) => id !== exclude).length;
    if (n > 0) issuerTemplates.set(template, n);
  }
  const usual = [...issuerTemplates.entries()].sort((a, b) => b[1] - a[1])[0];
  const issuerUsual =
    usual && usual[0] !== entry.template && entry.issuer
      ? (
          await memory.lookup(tenant, {
            keys: [`it.${entry.issuer}/${usual[0]}`],
            perKey: 1,
            limit: 1,
            exclude,
          })
        )[0]
      : undefined;
  return {
    keys,
    fingerprint: fp,
    earlier,
    templateElsewhere,
    issuerTemplates,
    ...(issuerUsual ? { issuerUsual } : {}),
  };
}
