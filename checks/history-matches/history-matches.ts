import type { Finding } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import type { MemoryEntry } from "../../core/tenant-memory.js";
import { defineCheck, flaggedCodes, skip } from "../check.js";
import {
  decodeSignature,
  type FingerprintCell,
  similarity,
  type TemplateDescription,
} from "./fingerprint.js";
import type { HistoryInput } from "./gather.js";

/**
 * history.matches: what the tenant's earlier detections show about this document (issue 23). The check step
 * gathers the inputs once (gather.ts: the fingerprint, the earlier entries the bounded lookups found); this
 * decides, purely. Every finding names the earlier detections (of the same tenant) it matched.
 *
 * Corroboration (docs/calibration.md): history is evidence of its own kind, at most an anomaly. A shared
 * template is ordinary (every customer of one bank gets the same layout), so template findings are notes
 * unless the template appears under several issuers; "the same document with other values" is an anomaly
 * per changed value, placed on the value (page, bbox) with the earlier and the new text, so that it reaches
 * 50 only with an independent structural, arithmetic or pixel finding about that value (agent/score.ts).
 */

export const HISTORY_CODES = {
  duplicate_submission: {
    level: "anomaly",
    kind: "history",
    means:
      "the same file was submitted before by the tenant: a note under the same declared type, an anomaly under another",
  },
  same_document_other_values: {
    level: "anomaly",
    kind: "history",
    means:
      "an earlier document of the tenant is this one with some values changed (the same cells in the same places); the earlier and the new value side by side",
  },
  template_reuse_other_issuer: {
    level: "anomaly",
    kind: "history",
    means:
      "the document's template (producer, page size, fonts, wording and geometry) appeared earlier under another claimed issuer: a note, an anomaly under two or more",
  },
  identifier_other_holder: {
    level: "anomaly",
    kind: "history",
    means: "an account, IBAN, invoice, customer or employee number appeared earlier with another holder",
  },
  issuer_template_differs: {
    level: "anomaly",
    kind: "history",
    means:
      "earlier documents of the same claimed issuer all share one template and this one uses another (how it differs in the evidence)",
  },
} as const satisfies CodeTable;

type HistoryCode = keyof typeof HISTORY_CODES;

/** A document is "the same with other values" when this share of its cells sits unchanged in an earlier one. */
export const SAME_DOCUMENT_SHARE = 0.75;
/** Content similarity (MinHash estimate) below which an earlier document is not compared cell by cell. */
const CONTENT_MIN = 0.5;
/** The fixed wording and geometry under one template are this similar for it to count as the same template. */
const WORDING_MIN = 0.5;
/** Earlier documents of one issuer, all with one other template, before a new template is an anomaly. */
export const ISSUER_TEMPLATE_MIN = 5;
/** At most this many changed values are reported (one finding each). */
const MAX_CHANGED = 8;

interface Inspection {
  findings: Finding[];
  discovered: string[];
}

export const historyMatchesCheck = defineCheck<Inspection>({
  id: "history.matches",
  codes: HISTORY_CODES,
  appliesTo: () => true,
  inspect(_doc, ctx) {
    if (!ctx.history) return skip("The tenant memory is off, so earlier submissions were not compared.");
    return decideHistory(ctx.history);
  },
  summary(j) {
    if (j.findings.length === 0) return "Nothing the tenant submitted before matches this document.";
    const ids = [...new Set(j.findings.flatMap((f) => (f.evidence?.earlier as string[] | undefined) ?? []))];
    const codes = flaggedCodes(j.findings);
    return `The document matches earlier submissions of the tenant (${ids.join(", ")})${codes.length ? `: ${codes.join(", ")}` : ", in ways that are ordinary on their own"}.`;
  },
});

/** The decision: findings and discovered facts from the gathered history (pure). */
export function decideHistory(h: HistoryInput): Inspection {
  const fp = h.fingerprint;
  const { entry } = fp;
  const findings: Finding[] = [];
  const discovered = new Set<string>();
  const finding = (code: HistoryCode, f: Omit<Finding, "code">) => findings.push({ code, ...f });

  // 1. The same file.
  const duplicates = h.earlier.filter((e) => e.file === entry.file);
  if (duplicates.length) {
    discovered.add("duplicate_submission");
    const otherTypes = [...new Set(duplicates.map((e) => e.docType).filter((t) => t !== entry.docType))];
    const ids = duplicates.map((e) => e.detection);
    finding("duplicate_submission", {
      severity: otherTypes.length ? 3 : 2,
      message: otherTypes.length
        ? `The same file was submitted before as ${otherTypes.join(", ")} (${ids.join(", ")}) and is declared ${entry.docType} now.`
        : `The same file was submitted before (${ids.join(", ")}).`,
      evidence: {
        earlier: ids,
        declaredBefore: [...new Set(duplicates.map((e) => e.docType))],
        declaredNow: entry.docType,
      },
    });
  }
  const duplicateIds = new Set(duplicates.map((e) => e.detection));

  // 2. The same document with other values: most cells unchanged in their places, some changed.
  const content = decodeSignature(entry.content);
  let best:
    | {
        e: MemoryEntry;
        same: number;
        earlierCells: number;
        changed: { cell: FingerprintCell; before: string }[];
      }
    | undefined;
  for (const e of h.earlier) {
    if (duplicateIds.has(e.detection) || !content) continue;
    const sig = decodeSignature(e.content);
    if (!sig || similarity(content, sig) < CONTENT_MIN) continue;
    const diff = cellDiff(fp.cells, e, h);
    if (!diff) continue;
    const share = diff.same / Math.max(fp.cells.length, diff.earlierCells);
    if (share >= SAME_DOCUMENT_SHARE && diff.changed.length > 0 && (!best || diff.same > best.same))
      best = { e, ...diff };
  }
  if (best) {
    discovered.add("seen_with_other_values");
    const id = best.e.detection;
    for (const { cell, before } of best.changed.slice(0, MAX_CHANGED)) {
      const named = fp.holder?.text === cell.text || fp.identifiers.some((i) => i.text === cell.text);
      finding("same_document_other_values", {
        severity: named || /\d/.test(cell.text) ? 4 : 3,
        message: `Detection ${id} is this document with "${before}" where this one prints "${cell.text}" (page ${cell.page}).`,
        page: cell.page,
        ...(cell.bbox ? { bbox: cell.bbox } : {}),
        evidence: {
          earlier: [id],
          before,
          after: cell.text,
          unchangedCells: best.same,
          changedCells: best.changed.length,
        },
      });
    }
  }

  // 3. An identifier seen with another holder.
  if (entry.holder) {
    for (const ident of fp.identifiers) {
      const others = h.earlier.filter(
        (e) =>
          !duplicateIds.has(e.detection) &&
          e.holder !== undefined &&
          e.holder !== entry.holder &&
          e.identifiers.some((i) => i.hash === ident.hash) &&
          (ident.kind !== "invoice" || e.issuer === entry.issuer),
      );
      if (!others.length) continue;
      discovered.add("seen_with_other_values");
      const ids = others.map((e) => e.detection);
      finding("identifier_other_holder", {
        severity: 3,
        message: `The ${ident.kind} ${ident.text} appeared before with another holder (${ids.join(", ")}); here the holder is ${fp.holder?.text ?? "another"}.`,
        page: ident.page,
        ...(ident.bbox ? { bbox: ident.bbox } : {}),
        evidence: { earlier: ids, identifier: ident.kind, value: ident.text, holder: fp.holder?.text },
      });
    }
  }

  // 4. One template under other claimed issuers.
  const wording = decodeSignature(entry.wording);
  const elsewhere = h.templateElsewhere.filter((e) => {
    const sig = decodeSignature(e.wording);
    return wording && sig && similarity(wording, sig) >= WORDING_MIN;
  });
  if (elsewhere.length && fp.issuer) {
    discovered.add("template_reuse");
    const issuers = elsewhere.map(
      (e) => (e.issuerSealed && h.keys.unseal(e.issuerSealed)) || "another issuer",
    );
    const ids = elsewhere.map((e) => e.detection);
    finding("template_reuse_other_issuer", {
      severity: elsewhere.length >= 2 ? 3 : 2,
      message: `The template of this document (claimed issuer ${fp.issuer}) appeared before under ${issuers.join(", ")} (${ids.join(", ")}).`,
      evidence: { earlier: ids, issuer: fp.issuer, otherIssuers: issuers },
    });
  }

  // 5. The issuer's usual template (learnt from the tenant's earlier documents of that issuer).
  const usual = h.issuerUsual;
  const ownCount = h.issuerTemplates.get(entry.template) ?? 0;
  const total = [...h.issuerTemplates.values()].reduce((a, b) => a + b, 0);
  if (usual && ownCount === 0 && total >= ISSUER_TEMPLATE_MIN && h.issuerTemplates.size === 1) {
    const before = parseTemplate(h.keys.unseal(usual.templateSealed));
    const differs = before ? templateDifference(before, fp.template) : {};
    discovered.add("template_reuse");
    finding("issuer_template_differs", {
      severity: 3,
      message: `${total} earlier documents claiming ${fp.issuer} share one template; this one differs (${Object.keys(differs).join(", ") || "its layout"}).`,
      evidence: { earlier: [usual.detection], issuer: fp.issuer, earlierDocuments: total, ...differs },
    });
  }
  return { findings, discovered: [...discovered] };
}

/** Cells of the new document against an earlier entry's, by place: how many are the same, which changed. */
function cellDiff(
  cells: readonly FingerprintCell[],
  e: MemoryEntry,
  h: HistoryInput,
): { same: number; earlierCells: number; changed: { cell: FingerprintCell; before: string }[] } | undefined {
  // Place → index of the earlier cell, and its text's hash.
  const at = new Map<string, number>();
  const hashes: string[] = [];
  for (const [i, cell] of (e.cells ? e.cells.split(" ") : []).entries()) {
    const cut = cell.lastIndexOf(":");
    at.set(cell.slice(0, cut), i);
    hashes.push(cell.slice(cut + 1));
  }
  let texts: string[] | undefined;
  let same = 0;
  const changed: { cell: FingerprintCell; before: string }[] = [];
  for (const c of cells) {
    const i = at.get(`${c.page}:${c.x}:${c.y}`);
    if (i === undefined) continue;
    if (hashes[i] === c.hash) {
      same++;
      continue;
    }
    if (!texts) {
      const opened = h.keys.unseal(e.cellsSealed);
      if (opened === undefined) return undefined;
      texts = JSON.parse(opened) as string[];
    }
    changed.push({ cell: c, before: texts[i] ?? "" });
  }
  return { same, earlierCells: hashes.length, changed };
}

function parseTemplate(s: string | undefined): TemplateDescription | undefined {
  if (!s) return undefined;
  try {
    return JSON.parse(s) as TemplateDescription;
  } catch {
    return undefined;
  }
}

function templateDifference(before: TemplateDescription, now: TemplateDescription): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (before.producer !== now.producer) out.producer = { before: before.producer, after: now.producer };
  if (before.page !== now.page) out.pageSize = { before: before.page, after: now.page };
  const added = now.fonts.filter((f) => !before.fonts.includes(f));
  const missing = before.fonts.filter((f) => !now.fonts.includes(f));
  if (added.length || missing.length) out.fonts = { added, missing };
  if (before.logo !== now.logo) out.logo = { before: before.logo ?? null, after: now.logo ?? null };
  return out;
}
