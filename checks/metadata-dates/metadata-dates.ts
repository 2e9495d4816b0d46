import type { Finding } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import { DOC_TYPE_WORDS } from "../../core/verdict.js";
import type { DocumentModel } from "../../document/model.js";
import { rawPdfOf } from "../../document/pdf-raw/cache.js";
import { updatesLeavePagesAlone } from "../../document/pdf-raw/update-purpose.js";
import {
  compareDates,
  formatParsed,
  type ParsedDate,
  parseAnyDate,
  sameMoment,
} from "../../document/values/pdf-date.js";
import { defineCheck, flaggedCodes, skip } from "../check.js";
import { historyDateFindings, printedDateFindings } from "./history-dates.js";

/**
 * metadata.dates: the creation and modification dates a PDF records about itself, in the Info
 * dictionary (CreationDate, ModDate) and in XMP (xmp:CreateDate, xmp:ModifyDate, xmp:MetadataDate).
 * Finds dates in the future, modification before creation, long gaps between creation and
 * modification, Info and XMP telling different stories, and dates that cannot be read; plus the XMP
 * edit history's dates and the dates printed in the content (history-dates.ts).
 */

export const METADATA_DATES_CHECK_ID = "metadata.dates";

const DAY = 86_400_000;
/** A date up to a day ahead of now is tolerated (time zones, clock skew). */
const FUTURE_TOLERANCE_MS = DAY;
/** Info and XMP copies of one date may differ by this much (writers stamp them separately). */
const SAME_MOMENT_TOLERANCE_MS = 2 * 60_000;
/** Modified this long after creation is worth a mild note. */
const LONG_GAP_MS = 30 * DAY;
/** A periodic statement modified this long after it was issued is suspicious. */
const STATEMENT_GAP_MS = 90 * DAY;
/** Before the first PDF software shipped. */
const EARLIEST_PLAUSIBLE = Date.UTC(1993, 0, 1);

/** Document types issued once and never legitimately edited afterwards. */
const ISSUED_ONCE = new Set([
  "bank_statement",
  "payslip",
  "utility_bill",
  "invoice",
  "tax_return",
  "receipt",
]);

type Field = "CreationDate" | "ModDate" | "xmp:CreateDate" | "xmp:ModifyDate" | "xmp:MetadataDate";

interface DateField {
  field: Field;
  where: "Info" | "XMP";
  raw: string;
  parsed?: ParsedDate;
}

function readFields(doc: DocumentModel): DateField[] {
  const pdf = doc.pdf;
  if (!pdf) return [];
  const out: DateField[] = [];
  const add = (field: Field, where: "Info" | "XMP", raw: string | undefined) => {
    if (raw === undefined || raw.trim() === "") return;
    out.push({ field, where, raw, parsed: parseAnyDate(raw) });
  };
  add("CreationDate", "Info", pdf.info.CreationDate);
  add("ModDate", "Info", pdf.info.ModDate);
  add("xmp:CreateDate", "XMP", pdf.xmp?.["xmp:CreateDate"]);
  add("xmp:ModifyDate", "XMP", pdf.xmp?.["xmp:ModifyDate"]);
  add("xmp:MetadataDate", "XMP", pdf.xmp?.["xmp:MetadataDate"]);
  return out;
}

const days = (ms: number) => Math.round(ms / DAY);
const show = (f: DateField) =>
  `${f.where} ${f.field} ${f.parsed ? formatParsed(f.parsed) : JSON.stringify(f.raw)}`;

export function dateFindings(doc: DocumentModel, now: Date): Finding[] {
  const fields = readFields(doc);
  let untouched: boolean | undefined;
  const pagesUntouched = () => {
    untouched ??= doc.pdf !== undefined && updatesLeavePagesAlone(rawPdfOf(doc));
    return untouched;
  };
  const get = (name: Field) => fields.find((f) => f.field === name && f.parsed);
  const findings: Finding[] = [];

  for (const f of fields) {
    if (!f.parsed) {
      findings.push({
        code: "date_unparseable",
        message: `The ${f.where} date ${f.field} is "${f.raw}", which is not a valid date; genuine PDF software writes valid dates, hand edits often do not.`,
        evidence: { field: f.field, raw: f.raw },
        severity: 3,
      });
      continue;
    }
    const t = f.parsed.utc.getTime();
    if (t > now.getTime() + FUTURE_TOLERANCE_MS) {
      findings.push({
        code: "date_in_future",
        message: `The ${f.where} date ${f.field} (${formatParsed(f.parsed)}) lies ${days(t - now.getTime())} days in the future; the file was stamped by a wrong clock or edited by hand.`,
        evidence: { field: f.field, raw: f.raw, now: now.toISOString() },
        severity: 7,
      });
    } else if (t < EARLIEST_PLAUSIBLE) {
      findings.push({
        code: "date_implausible",
        message: `The ${f.where} date ${f.field} (${formatParsed(f.parsed)}) is earlier than any PDF software, so it is not a real creation or modification time.`,
        evidence: { field: f.field, raw: f.raw },
        severity: 3,
      });
    }
  }

  const pairs: [Field, Field, "Info" | "XMP"][] = [
    ["CreationDate", "ModDate", "Info"],
    ["xmp:CreateDate", "xmp:ModifyDate", "XMP"],
  ];
  const gapReported = new Set<string>();
  for (const [createdName, modifiedName, where] of pairs) {
    const created = get(createdName);
    const modified = get(modifiedName);
    if (!created?.parsed || !modified?.parsed) continue;
    if (sameMoment(modified.parsed, created.parsed, SAME_MOMENT_TOLERANCE_MS)) continue;
    const { diffMs } = compareDates(modified.parsed, created.parsed);
    if (diffMs < 0) {
      findings.push({
        code: "modified_before_created",
        message: `The ${where} modification date (${formatParsed(modified.parsed)}) is ${describeGap(-diffMs)} before the creation date (${formatParsed(created.parsed)}), which software never writes; the dates were set by hand.`,
        evidence: { source: where, created: created.raw, modified: modified.raw },
        severity: 6,
      });
      continue;
    }
    if (diffMs > LONG_GAP_MS) {
      const key = `${days(diffMs)}`;
      if (gapReported.has(key)) continue;
      gapReported.add(key);
      const issuedOnce = ISSUED_ONCE.has(doc.declaredDocType);
      // The later save is in the file: incremental updates that changed no page (an e-invoicing tool
      // attaching the invoice XML, metadata, a signature) explain the modification date.
      const explained = pagesUntouched();
      const suspicious = issuedOnce && diffMs > STATEMENT_GAP_MS && !explained;
      findings.push({
        code: "long_modification_gap",
        message: explained
          ? `The document was modified ${describeGap(diffMs)} after it was created (${where}: ${formatParsed(created.parsed)} → ${formatParsed(modified.parsed)}) by incremental updates that changed no page (attachments, metadata or signatures).`
          : suspicious
            ? `This ${DOC_TYPE_WORDS[doc.declaredDocType]} was modified ${describeGap(diffMs)} after it was created (${where}: ${formatParsed(created.parsed)} → ${formatParsed(modified.parsed)}); issuers do not edit such documents months later.`
            : `The document was modified ${describeGap(diffMs)} after it was created (${where}: ${formatParsed(created.parsed)} → ${formatParsed(modified.parsed)}).`,
        evidence: {
          source: where,
          created: created.raw,
          modified: modified.raw,
          gapDays: days(diffMs),
          ...(explained ? { explainedBy: "incremental updates that changed no page" } : {}),
        },
        severity: explained ? 1 : suspicious ? 5 : 2,
      });
    }
  }

  const crossPairs: [Field, Field, string][] = [
    ["CreationDate", "xmp:CreateDate", "creation"],
    ["ModDate", "xmp:ModifyDate", "modification"],
  ];
  // A later tool that rewrote the Info dictionary names itself there as the producer while XMP keeps the
  // first one: its own date in Info is explained. Dates that differ under one producer were edited alone.
  const infoProducer = doc.pdf?.info.Producer?.trim();
  const xmpProducer = doc.pdf?.xmp?.["pdf:Producer"]?.trim();
  const rewrittenByTool =
    infoProducer !== undefined &&
    xmpProducer !== undefined &&
    producerKey(infoProducer) !== producerKey(xmpProducer);
  for (const [infoName, xmpName, what] of crossPairs) {
    const info = get(infoName);
    const xmp = get(xmpName);
    if (!info?.parsed || !xmp?.parsed) continue;
    if (sameMoment(info.parsed, xmp.parsed, SAME_MOMENT_TOLERANCE_MS)) continue;
    const { diffMs } = compareDates(info.parsed, xmp.parsed);
    const issuedOnce = ISSUED_ONCE.has(doc.declaredDocType);
    findings.push({
      code: "info_xmp_mismatch",
      message: rewrittenByTool
        ? `The ${what} date differs between the Info dictionary (${formatParsed(info.parsed)}) and XMP (${formatParsed(xmp.parsed)}) by ${describeGap(Math.abs(diffMs))}, as do the producers they name (${JSON.stringify(infoProducer)} and ${JSON.stringify(xmpProducer)}): a later tool rewrote the Info dictionary.`
        : `The ${what} date differs between the Info dictionary (${formatParsed(info.parsed)}) and XMP (${formatParsed(xmp.parsed)}) by ${describeGap(Math.abs(diffMs))}, under one producer; one copy was changed by hand or by a metadata tool and the other was not.`,
      evidence: {
        info: info.raw,
        xmp: xmp.raw,
        field: what,
        ...(rewrittenByTool ? { infoProducer, xmpProducer } : {}),
      },
      severity: rewrittenByTool ? 2 : issuedOnce ? 5 : 4,
    });
  }

  const hasCreation = fields.some((f) => f.field === "CreationDate" || f.field === "xmp:CreateDate");
  const hasModification = fields.some((f) => f.field === "ModDate" || f.field === "xmp:ModifyDate");
  if (!hasCreation && hasModification) {
    findings.push({
      code: "creation_date_missing",
      message:
        "The PDF records when it was modified but not when it was created; generators write both, so the creation date was probably removed.",
      evidence: { fields: fields.map((f) => f.field) },
      severity: 1,
    });
  }
  return findings;
}

/** A producer name without versions and parenthesised remarks, to tell two programs apart. */
const producerKey = (s: string) =>
  s
    .toLowerCase()
    .replace(/\(.*?\)/g, "")
    .replace(/[\d.]+/g, "")
    .replace(/\s+/g, " ")
    .trim();

function describeGap(ms: number): string {
  if (ms >= 2 * DAY) return `${days(ms)} days`;
  if (ms >= 2 * 3_600_000) return `${Math.round(ms / 3_600_000)} hours`;
  return `${Math.max(1, Math.round(ms / 60_000))} minutes`;
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  date_unparseable: {
    level: "anomaly",
    kind: "provenance",
    means: "A metadata date cannot be read as a date.",
  },
  date_in_future: {
    level: "anomaly",
    kind: "provenance",
    means: "A metadata date lies after the time of the check.",
  },
  date_implausible: {
    level: "anomaly",
    kind: "provenance",
    means: "A metadata date lies outside any plausible range.",
  },
  modified_before_created: {
    level: "anomaly",
    kind: "provenance",
    means: "The file says it was modified before it was created.",
  },
  long_modification_gap: {
    level: "anomaly",
    kind: "provenance",
    means: "The file was modified long after an issuer's system created it.",
  },
  info_xmp_mismatch: {
    level: "anomaly",
    kind: "provenance",
    means: "The Info dictionary and the XMP packet give different dates: one was rewritten.",
  },
  creation_date_missing: {
    level: "note",
    kind: "provenance",
    means: "The file has no creation date.",
  },
  dates_absent: {
    level: "note",
    kind: "provenance",
    means: "The file carries no metadata dates at all.",
  },
  history_date_in_future: {
    level: "anomaly",
    kind: "provenance",
    means: "An XMP history event lies in the future.",
  },
  history_after_modification: {
    level: "anomaly",
    kind: "provenance",
    means: "An XMP history event lies after the file's modification date.",
  },
  history_before_creation: {
    level: "anomaly",
    kind: "provenance",
    means: "An XMP history event lies before the file's creation date.",
  },
  created_before_printed_dates: {
    level: "anomaly",
    kind: "provenance",
    means: "The file was created before dates its pages print.",
  },
} as const satisfies CodeTable;

export const metadataDatesCheck = defineCheck({
  id: METADATA_DATES_CHECK_ID,
  codes: CODES,
  appliesTo: () => true,
  inspect(doc, ctx) {
    if (!doc.pdf) return skip("metadata.dates reads PDF metadata; image EXIF is read by image.metadata.");
    const fields = readFields(doc);
    if (fields.length === 0) {
      return skip(
        "The PDF records no creation or modification dates in its Info dictionary or XMP, so there is nothing to compare.",
        [
          {
            code: "dates_absent",
            message:
              "The PDF carries no creation or modification dates; most generators write them, and stripping metadata is a common way to hide editing.",
            severity: 1,
          },
        ],
      );
    }
    return {
      findings: [
        ...dateFindings(doc, ctx.now),
        ...historyDateFindings(doc, ctx.now),
        ...printedDateFindings(doc),
      ],
      fields,
    };
  },
  summary: ({ outcome, findings, fields }) =>
    outcome === "pass"
      ? `The PDF's ${fields.length} recorded date${fields.length > 1 ? "s" : ""} (${fields.map((f) => `${f.where} ${f.field}`).join(", ")}) are consistent.`
      : `The PDF's metadata dates are inconsistent: ${flaggedCodes(findings).join(", ")} (${fields.map(show).join("; ")}).`,
});
