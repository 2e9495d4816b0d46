import type { Finding } from "../core/check-result.js";
import type { CodeTable } from "../core/finding-levels.js";
import { aDocType, DOC_TYPE_WORDS, type DocType } from "../core/verdict.js";
import type { DocumentModel } from "../document/model.js";
import { rawPdfOf } from "../document/pdf-raw/cache.js";
import type { RawPdf, StructureProblem } from "../document/pdf-raw/document.js";
import { rawFeatures } from "../document/pdf-raw/features.js";
import { type Change, cachedDiff, type RevisionDiff } from "../document/pdf-raw/revision-changes.js";
import type { TextEdit } from "../document/pdf-raw/text-diff.js";
import { isAttachmentChange, updatePurpose } from "../document/pdf-raw/update-purpose.js";
import { compareRevisions, type RevisionComparison } from "../document/revision-pixels.js";
import { defineCheck, judge, skip } from "./check.js";
import { findSignatures } from "./signature-pdf/find-signatures.js";
import { cachedReview } from "./signature-pdf/modification-policy.js";

/**
 * pdf.revisions: walks every revision of the PDF on the raw bytes (our own walker, not a reader that
 * shows only the newest objects) and says, for each incremental update, what it changed — pages, text
 * (before → after), fonts, images, annotations, form fields, signatures, metadata — plus structural
 * oddities (broken or looping xref chains, a /Prev that skips a revision, objects hidden after %%EOF).
 * Also reports the raw facts signature-independent checks cannot see: JavaScript, embedded files, form
 * fields, encryption, incremental updates.
 *
 * For a file with incremental updates it also compares the pages as first saved with the pages as
 * submitted (document/revision-pixels.ts) and reports every region whose pixels differ as a
 * `revision_changed_region` finding with the text before and after: the place of each change, which the
 * reviewer sees marked on both renderings. A region changed only by revisions the modification policy
 * permits (signatures, DSS data, form filling, annotations; checks/signature-pdf/modification-policy.ts,
 * within the DocMDP level of any signature before them) has severity 0: evidence, never a score. Otherwise
 * it carries the severity of the strongest change finding on that page, and the check's own severity is
 * judged without the regions (they show where a change is, they are not a second change).
 */

export const PDF_REVISIONS_CHECK_ID = "pdf.revisions";

/** Document types issued once by a system and never legitimately edited afterwards. */
const ISSUED_ONCE = new Set<DocType>([
  "bank_statement",
  "payslip",
  "invoice",
  "utility_bill",
  "tax_return",
  "receipt",
]);
/** Document types people fill in themselves, where form-field edits are normal. */
const FILLED_IN = new Set<DocType>(["loan_application", "tax_return", "contract", "other", "id_document"]);
/** Annotations that can draw over the page and hide what is printed. */
const COVERING_ANNOTS = new Set([
  "FreeText",
  "Square",
  "Circle",
  "Polygon",
  "Ink",
  "Stamp",
  "Redact",
  "Line",
]);
/** Diff at most this many of the newest updates (a hostile file can hold hundreds). */
const MAX_DIFFED = 50;

const quote = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}…` : s);

function bboxOf(e: TextEdit): [number, number, number, number] | undefined {
  const r = e.after ?? e.before;
  if (!r) return undefined;
  const w = Math.max(1, r.text.length * r.size * 0.5);
  return [r.x, r.y, Math.round((r.x + w) * 100) / 100, Math.round((r.y + r.size) * 100) / 100];
}

function describeEdits(edits: TextEdit[]): string {
  const shown = edits.slice(0, 3).map((e) => {
    if (e.before && e.after) return `${quote(e.before.text)} → ${quote(e.after.text)}`;
    if (e.after) return `added ${quote(e.after.text)}`;
    return `removed ${quote((e.before as NonNullable<TextEdit["before"]>).text)}`;
  });
  const more = edits.length > 3 ? ` and ${edits.length - 3} more` : "";
  return `${shown.join("; ")}${more}`;
}

function changeFindings(diff: RevisionDiff, doc: DocumentModel): Finding[] {
  const n = diff.revision + 1;
  const words = DOC_TYPE_WORDS[doc.declaredDocType];
  const issued = ISSUED_ONCE.has(doc.declaredDocType);
  const where = `revision ${n} (an incremental update appended at byte ${diff.start})`;
  const base = (c: Change) => ({
    revision: n,
    objects: c.objects.slice(0, 20),
    ...(c.detail ? { detail: c.detail } : {}),
  });
  const out: Finding[] = [];
  // An update that only embedded a file and set PDF/A entries (an e-invoicing tool attaching the invoice
  // XML, an archiver) changes nothing a reader sees: one note instead of catalog and object findings.
  const attachment = updatePurpose(diff) === "attachment";
  if (attachment) {
    const objects = diff.changes.filter((c) => c.kind !== "metadata").flatMap((c) => c.objects);
    out.push({
      code: "revision_added_attachment",
      message: `${cap(where)} embedded a file and updated the catalog's attachment entries (${[
        ...new Set(diff.changes.filter((c) => c.kind !== "metadata").map((c) => c.detail)),
      ].join("; ")}), as e-invoicing and archiving tools do; no page was changed.`,
      evidence: { revision: n, objects: objects.slice(0, 20) },
      severity: 1,
    });
  }
  for (const c of diff.changes) {
    if (attachment && c.kind !== "metadata" && isAttachmentChange(c)) continue;
    const page = c.page !== undefined ? { page: c.page } : {};
    switch (c.kind) {
      case "page_content": {
        const edits = (c.text ?? []).filter((e) => e.before || e.after);
        const first = edits.find((e) => e.before && e.after) ?? edits[0];
        const bbox = first ? bboxOf(first) : undefined;
        out.push({
          code: edits.length ? "revision_changed_text" : "revision_changed_content",
          message: edits.length
            ? `${cap(where)} changed the text on page ${c.page}: ${describeEdits(edits)}; the ${words} was edited after it was first saved.`
            : `${cap(where)} redrew the content of page ${c.page} without changing its text (graphics, boxes or images); the ${words} was edited after it was first saved.`,
          ...page,
          ...(bbox ? { bbox } : {}),
          evidence: {
            ...base(c),
            edits: edits.slice(0, 10).map((e) => ({
              ...(e.before ? { before: e.before.text, font: e.before.font } : {}),
              ...(e.after
                ? { after: e.after.text, afterFont: e.after.font, at: [e.after.x, e.after.y] }
                : {}),
            })),
          },
          severity: issued ? (edits.length ? 9 : 8) : edits.length ? 7 : 6,
        });
        break;
      }
      case "page_added":
      case "page_removed":
      case "page_replaced": {
        const verb = c.kind === "page_added" ? "added" : c.kind === "page_removed" ? "removed" : "replaced";
        const text = (c.text ?? []).flatMap((e) => (e.after ? [e.after.text] : [])).slice(0, 3);
        out.push({
          code: `revision_${verb}_page`,
          message: `${cap(where)} ${verb} page ${c.page}${text.length ? ` (now showing ${text.map(quote).join(", ")})` : ""}; pages of ${aDocType(doc.declaredDocType)} are not swapped after it is issued.`,
          ...page,
          evidence: { ...base(c), ...(text.length ? { text } : {}) },
          // Other documents (reports, manuals, forms) are assembled over time: a page added later is normal.
          severity: issued ? 8 : 3,
        });
        break;
      }
      case "page_properties":
        out.push({
          code: "revision_changed_page_properties",
          message: `${cap(where)} changed page ${c.page}'s ${c.detail} (page box or rotation), which can crop or hide printed content.`,
          ...page,
          evidence: base(c),
          severity: 3,
        });
        break;
      case "annotation_added":
      case "annotation_changed": {
        const covering = COVERING_ANNOTS.has(c.detail ?? "");
        out.push({
          code: c.kind === "annotation_added" ? "revision_added_annotation" : "revision_changed_annotation",
          message: `${cap(where)} ${c.kind === "annotation_added" ? "added" : "changed"} a ${c.detail} annotation on page ${c.page}${c.after ? ` reading ${quote(c.after)}` : ""}${covering ? "; such annotations draw over the page and can cover a printed value" : ""}.`,
          ...page,
          evidence: { ...base(c), ...(c.after ? { text: c.after } : {}) },
          severity: covering ? (issued ? 6 : 4) : 2,
        });
        break;
      }
      case "annotation_removed":
        out.push({
          code: "revision_removed_annotation",
          message: `${cap(where)} removed a ${c.detail} annotation from page ${c.page}.`,
          ...page,
          evidence: base(c),
          severity: 3,
        });
        break;
      case "form_field": {
        const normal = FILLED_IN.has(doc.declaredDocType);
        out.push({
          code: "revision_changed_form_field",
          message: `${cap(where)} changed the form field "${c.detail}"${c.before !== undefined || c.after !== undefined ? `: ${quote(c.before ?? "(empty)")} → ${quote(c.after ?? "(empty)")}` : ""}${normal ? "" : `; ${aDocType(doc.declaredDocType)} is not filled in after it is issued`}.`,
          ...page,
          evidence: { ...base(c), before: c.before ?? null, after: c.after ?? null },
          severity: normal ? 1 : 6,
        });
        break;
      }
      case "form_structure": {
        const signing = diff.changes.some((x) => x.kind === "signature");
        out.push({
          code: "revision_changed_form",
          message: `${cap(where)} changed the document's form definition (AcroForm)${signing ? " to add a signature field" : ""}.`,
          evidence: base(c),
          severity: signing ? 0 : 1,
        });
        break;
      }
      case "font_added":
        out.push({
          code: "revision_added_fonts",
          message: `${cap(where)} added font${c.detail?.includes(",") ? "s" : ""} ${c.detail}${c.page ? ` to page ${c.page}` : ""}; new fonts in a later revision mean new text was typed in.`,
          ...page,
          evidence: base(c),
          severity: issued ? 5 : 3,
        });
        break;
      case "image_changed":
        out.push({
          code: "revision_changed_images",
          message: `${cap(where)} added or replaced ${c.detail} on page ${c.page}.`,
          ...page,
          evidence: base(c),
          severity: issued ? 6 : 4,
        });
        break;
      case "metadata":
        out.push({
          code: "revision_changed_metadata",
          message: `${cap(where)} changed only metadata (${c.detail}); a later save by some tool, mild on its own.`,
          evidence: base(c),
          severity: 1,
        });
        break;
      case "signature":
      case "dss":
        out.push({
          code: c.kind === "dss" ? "revision_added_validation_data" : "revision_added_signature",
          message:
            c.kind === "dss"
              ? `${cap(where)} added signature validation data (DSS), as signing software does.`
              : `${cap(where)} added a digital signature${c.detail && c.detail !== "Sig" && c.detail !== "Perms" ? ` (field "${c.detail}")` : ""}; signature.pdf verifies it.`,
          ...page,
          evidence: base(c),
          severity: 0,
        });
        break;
      case "catalog":
        out.push({
          code: "revision_changed_catalog",
          message: `${cap(where)} changed the document catalog (${c.detail}), e.g. actions or names that run when the file opens.`,
          evidence: base(c),
          severity: 3,
        });
        break;
      case "other":
        out.push({
          code: "revision_changed_objects",
          message: `${cap(where)} rewrote ${c.objects.length} other object${c.objects.length > 1 ? "s" : ""} (${c.detail}).`,
          evidence: base(c),
          severity: 2,
        });
        break;
    }
  }
  return out;
}

const PROBLEM_SEVERITY: Record<StructureProblem["code"], number> = {
  xref_broken: 3,
  xref_cycle: 4,
  // Writers that append an update without /Prev exist (e-invoicing tools); the history is still read.
  prev_mismatch: 3,
  duplicate_startxref: 2,
  xref_offset_wrong: 2,
  missing_eof: 2,
  hidden_data_after_eof: 4,
  limit_reached: 2,
};

function problemFindings(raw: RawPdf): Finding[] {
  return raw.problems.map((p) => ({
    code: p.code,
    message: p.message,
    evidence: {
      ...(p.revision !== undefined ? { revision: p.revision + 1 } : {}),
      ...(p.offset !== undefined ? { offset: p.offset } : {}),
    },
    severity: PROBLEM_SEVERITY[p.code],
  }));
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export interface RevisionsReport {
  raw: RawPdf;
  diffs: RevisionDiff[];
  /** Updates not diffed because the file has more than MAX_DIFFED. */
  skipped: number;
}

/** Splits the file into revisions and diffs each update against the one before (bounded). */
export function revisionsReport(raw: RawPdf, signal?: AbortSignal): RevisionsReport {
  const diffs: RevisionDiff[] = [];
  const first = Math.max(1, raw.revisions.length - MAX_DIFFED);
  for (let k = first; k < raw.revisions.length; k++) {
    if (signal?.aborted) break;
    diffs.push(cachedDiff(raw, k));
  }
  return { raw, diffs, skipped: first - 1 };
}

export const REGION_CODE = "revision_changed_region";

/**
 * True when revision k (0-based) makes only changes the modification policy permits: no problem at any
 * level, a complete review, and no more than the DocMDP level of a certification signature before it.
 */
export function revisionPermitted(
  raw: RawPdf,
  k: number,
  signedLevels: { revision: number; level: number }[],
): boolean {
  const review = cachedReview(raw, k);
  if (review.incomplete || review.problems.length > 0) return false;
  const limit = Math.min(3, ...signedLevels.filter((s) => s.revision < k).map((s) => s.level));
  return review.level <= limit;
}

function regionFindings(raw: RawPdf, comparison: RevisionComparison, changes: Finding[]): Finding[] {
  let signedLevels: { revision: number; level: number }[] = [];
  try {
    signedLevels = findSignatures(raw)
      .filter((s) => s.signedRevision >= 0)
      .map((s) => ({ revision: s.signedRevision, level: s.docMdp ?? 3 }));
  } catch {
    signedLevels = [];
  }
  const first = comparison.firstSaved.revision + 1;
  const out: Finding[] = [];
  for (const pc of comparison.pages) {
    const permitted = pc.revisions.every((k) => {
      try {
        return revisionPermitted(raw, k, signedLevels);
      } catch {
        return false;
      }
    });
    const strongest = Math.max(
      0,
      ...changes
        .filter(
          (f) => f.page === pc.page && pc.revisions.includes(((f.evidence?.revision as number) ?? 0) - 1),
        )
        .map((f) => f.severity ?? 0),
    );
    // Form fields and annotations draw outside the page's text layer: their values say what changed.
    const valued = pc.revisions.flatMap((k) =>
      cachedDiff(raw, k).changes.filter(
        (c) => c.page === pc.page && (c.before !== undefined || c.after !== undefined),
      ),
    );
    const revs = pc.revisions.map((k) => k + 1);
    const by = `revision${revs.length > 1 ? "s" : ""} ${revs.join(", ")}`;
    for (const region of pc.regions) {
      const r =
        region.before === undefined && region.after === undefined && valued.length === 1
          ? {
              ...region,
              ...(valued[0]?.before !== undefined ? { before: valued[0].before } : {}),
              ...(valued[0]?.after !== undefined ? { after: valued[0].after } : {}),
            }
          : region;
      const value =
        r.before !== undefined && r.after !== undefined
          ? `: ${quote(r.before)} → ${quote(r.after)}`
          : r.after !== undefined
            ? `: now showing ${quote(r.after)}`
            : r.before !== undefined
              ? `: ${quote(r.before)} is gone`
              : "";
      out.push({
        code: REGION_CODE,
        message: `Compared with the document as first saved (revision ${first}), ${by} changed what page ${pc.page} shows here${value}${permitted ? "; the change is one the document's revision policy permits (a signature, validation data, form filling or an annotation)" : ""}.`,
        page: pc.page,
        bbox: r.bbox,
        evidence: {
          firstSaved: first,
          revisions: revs,
          pixels: r.pixels,
          permitted,
          ...(r.before !== undefined ? { before: r.before } : {}),
          ...(r.after !== undefined ? { after: r.after } : {}),
        },
        severity: permitted ? 0 : strongest,
      });
    }
  }
  return out;
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  revision_added_attachment: {
    level: "note",
    kind: "structure",
    means: "A later save only embedded a file (e-invoicing, archiving).",
  },
  revision_changed_text: {
    level: "proof",
    kind: "structure",
    means: "A later save changed the text a page shows.",
  },
  revision_changed_content: {
    level: "proof",
    kind: "structure",
    means: "A later save redrew a page's content without changing its text.",
  },
  revision_added_page: {
    level: "proof",
    kind: "structure",
    means: "A later save added a page.",
  },
  revision_removed_page: {
    level: "proof",
    kind: "structure",
    means: "A later save removed a page.",
  },
  revision_replaced_page: {
    level: "proof",
    kind: "structure",
    means: "A later save replaced a page.",
  },
  revision_changed_page_properties: {
    level: "anomaly",
    kind: "structure",
    means: "A later save changed a page box or rotation.",
  },
  revision_added_annotation: {
    level: "specific",
    kind: "structure",
    means: "A later save added an annotation (covering ones can hide a value).",
  },
  revision_changed_annotation: {
    level: "specific",
    kind: "structure",
    means: "A later save changed an annotation.",
  },
  revision_removed_annotation: {
    level: "anomaly",
    kind: "structure",
    means: "A later save removed an annotation.",
  },
  revision_changed_form_field: {
    level: "specific",
    kind: "structure",
    means: "A later save changed a form field's value.",
  },
  revision_changed_form: {
    level: "note",
    kind: "structure",
    means: "A later save changed the form definition.",
  },
  revision_added_fonts: {
    level: "specific",
    kind: "structure",
    means: "A later save added fonts: new text was typed in.",
  },
  revision_changed_images: {
    level: "specific",
    kind: "structure",
    means: "A later save added or replaced images on a page.",
  },
  revision_changed_metadata: {
    level: "note",
    kind: "provenance",
    means: "A later save changed only metadata.",
  },
  revision_added_validation_data: {
    level: "note",
    kind: "signature",
    means: "A later save added signature validation data.",
  },
  revision_added_signature: {
    level: "note",
    kind: "signature",
    means: "A later save added a digital signature.",
  },
  revision_changed_catalog: {
    level: "anomaly",
    kind: "structure",
    means: "A later save changed the document catalog.",
  },
  revision_changed_objects: {
    level: "note",
    kind: "structure",
    means: "A later save rewrote other objects.",
  },
  revision_changed_region: {
    level: "proof",
    kind: "structure",
    means:
      "Where a page looks different from the document as first saved (the place of a revision's change).",
  },
  too_many_revisions: {
    level: "anomaly",
    kind: "structure",
    means: "More incremental updates than the check diffs.",
  },
  encrypted_content: {
    level: "note",
    kind: "structure",
    means: "Encrypted revisions that were not compared.",
  },
  xref_broken: {
    level: "anomaly",
    kind: "structure",
    means: "A cross-reference section cannot be read.",
  },
  xref_cycle: {
    level: "anomaly",
    kind: "structure",
    means: "The chain of cross-reference sections loops.",
  },
  prev_mismatch: {
    level: "anomaly",
    kind: "structure",
    means: "An update's /Prev does not point at the revision before it.",
  },
  duplicate_startxref: {
    level: "anomaly",
    kind: "structure",
    means: "Two startxref keywords in one revision.",
  },
  xref_offset_wrong: {
    level: "anomaly",
    kind: "structure",
    means: "startxref points at the wrong offset.",
  },
  missing_eof: {
    level: "anomaly",
    kind: "structure",
    means: "A revision lacks its %%EOF marker.",
  },
  hidden_data_after_eof: {
    level: "anomaly",
    kind: "structure",
    means: "Data hides after an %%EOF marker.",
  },
  limit_reached: {
    level: "note",
    kind: "structure",
    means: "The raw parser stopped at one of its limits.",
  },
} as const satisfies CodeTable;

export const pdfRevisionsCheck = defineCheck({
  id: PDF_REVISIONS_CHECK_ID,
  codes: CODES,
  appliesTo: (doc) => doc.contentType === "application/pdf",
  async inspect(doc, ctx) {
    const raw = rawPdfOf(doc);
    if (!raw.catalog()) {
      return skip(
        "The PDF's own structure (cross-reference sections and document catalog) cannot be read from its bytes, so its revisions cannot be compared.",
        problemFindings(raw),
      );
    }
    const features = rawFeatures(raw);
    const discovered: string[] = [];
    if (features.javascript) discovered.push("javascript_present");
    if (features.embeddedFiles) discovered.push("embedded_files");
    if (features.formFields > 0) discovered.push("form_fields");
    if (features.encrypted) discovered.push("encrypted");

    const report = revisionsReport(raw, ctx.signal);
    const findings = [...problemFindings(raw), ...report.diffs.flatMap((d) => changeFindings(d, doc))];
    if (report.skipped > 0) {
      findings.push({
        code: "too_many_revisions",
        message: `The file holds ${raw.revisions.length} revisions; only the newest ${report.diffs.length} were compared, and that many updates is itself unusual.`,
        evidence: { revisions: raw.revisions.length },
        severity: 4,
      });
    }
    if (features.encrypted && report.diffs.some((d) => d.changes.some((c) => c.kind === "page_content"))) {
      findings.push({
        code: "encrypted_content",
        message:
          "The file is encrypted, so the text of changed pages could not be compared (only which objects changed).",
        severity: 0,
      });
    }
    const updates = raw.revisions.length - 1;
    if (updates > 0) discovered.push("incremental_updates");
    if (updates > 0) {
      // Pictures of the changes: when they cannot be made (a revision pdfjs cannot render, the time
      // bound), the findings above stand without them.
      const comparison = await compareRevisions(doc, ctx.signal).catch(() => undefined);
      if (comparison) findings.push(...regionFindings(raw, comparison, findings));
    }
    return { findings, discovered, report, updates };
  },
  judge: ({ findings }) => judge(findings.filter((f) => f.code !== REGION_CODE)),
  summary({ findings, report, updates }) {
    const lin = report.raw.revisions[0]?.linearized ? " (linearized)" : "";
    const kinds = [...new Set(report.diffs.flatMap((d) => d.changes.map((c) => c.kind.replace(/_/g, " "))))];
    return updates === 0
      ? `The PDF was saved once${lin}; no incremental updates were appended${findings.length ? `, with ${findings.length} structural note${findings.length > 1 ? "s" : ""}` : ""}.`
      : `The PDF has ${updates} incremental update${updates > 1 ? "s" : ""} after its original save${lin}${kinds.length ? `, changing: ${kinds.join(", ")}` : " that change nothing"}.`;
  },
});
