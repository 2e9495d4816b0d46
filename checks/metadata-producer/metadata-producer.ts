import type { Finding } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import { aDocType, DOC_TYPE_WORDS, type DocType } from "../../core/verdict.js";
import type { DocumentModel } from "../../document/model.js";
import { rawPdfOf } from "../../document/pdf-raw/cache.js";
import { infoStrings } from "../../document/pdf-raw/info.js";
import { updatesLeavePagesAlone } from "../../document/pdf-raw/update-purpose.js";
import { type HistoryEvent, historyOf } from "../../document/xmp.js";
import { defineCheck } from "../check.js";
import {
  classifyProducer,
  NATIVE_PDF_WRITERS,
  type ProducerCategory,
  type ProducerEntry,
} from "./producer-table.js";

/**
 * metadata.producer: the software a PDF names as its maker (Info Producer/Creator, XMP pdf:Producer and
 * xmp:CreatorTool, the xmpMM:History events and the Producer of earlier revisions), classified with
 * producer-table.ts and judged against the declared document type: Word is normal for a small business's
 * invoice and suspicious for a bank statement a core-banking system would generate; an online PDF editor
 * or an image editor is suspicious for any issued document.
 */

export const METADATA_PRODUCER_CHECK_ID = "metadata.producer";

/** Issued by back-end systems, never typed up by hand. */
const SYSTEM_ISSUED = new Set<DocType>(["bank_statement", "payslip", "utility_bill", "tax_return"]);
/** Issued by businesses of any size (office software and printers are normal). */
const BUSINESS_ISSUED = new Set<DocType>(["invoice", "receipt"]);

type Tier = "system" | "business" | "other";
const tierOf = (t: DocType): Tier =>
  SYSTEM_ISSUED.has(t) ? "system" : BUSINESS_ISSUED.has(t) ? "business" : "other";

/** Severity of a producer category per tier [system, business, other]. */
const SEVERITY: Record<ProducerCategory, [number, number, number]> = {
  online_editor: [7, 6, 4],
  pdf_editor: [6, 5, 3],
  image_editor: [7, 6, 4],
  design_tool: [6, 4, 2],
  acrobat_save: [5, 3, 1],
  // Small issuers make statements, payslips and bills in office software; not evidence of an edit.
  office: [1, 0, 0],
  print_to_pdf: [2, 0, 0],
  ocr: [3, 1, 1],
  scanner: [1, 1, 0],
  generator: [0, 0, 0],
};

const WHY: Record<ProducerCategory, string> = {
  online_editor: "an online PDF editor, used to change existing PDFs",
  pdf_editor: "a PDF editor, used to change existing PDFs",
  image_editor: "an image editor",
  design_tool: "a design tool, used to lay documents out by hand",
  acrobat_save: "Adobe Acrobat, which rewrites the producer when a PDF is edited and saved",
  office: "office software, in which small issuers make such documents (noted, not evidence of an edit)",
  print_to_pdf: "a print-to-PDF driver, so this is a re-printed copy rather than the issued file",
  ocr: "OCR of a scan, so this is a scanned copy rather than the issued file",
  scanner: "a scanner, so this is a scanned copy rather than the issued file",
  generator: "a document generator",
};

interface Named {
  source: string;
  value: string;
  entry: ProducerEntry;
}

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/\(.*?\)/g, "")
    .replace(/[\d.]+/g, "")
    .replace(/\s+/g, " ")
    .trim();

function severityFor(category: ProducerCategory, docType: DocType): number {
  const [s, b, o] = SEVERITY[category];
  // An identity document edited in an image editor is as suspicious as a statement.
  if (docType === "id_document" && category === "image_editor") return s;
  const tier = tierOf(docType);
  return tier === "system" ? s : tier === "business" ? b : o;
}

export function producerFindings(doc: DocumentModel): {
  findings: Finding[];
  named: Named[];
  history: HistoryEvent[];
} {
  const pdf = doc.pdf;
  if (!pdf) return { findings: [], named: [], history: [] };
  const raw = rawPdfOf(doc);
  const history = historyOf(doc);
  const sources: [string, string | undefined][] = [
    ["Info Producer", pdf.info.Producer],
    ["Info Creator", pdf.info.Creator],
    ["XMP pdf:Producer", pdf.xmp?.["pdf:Producer"]],
    ["XMP xmp:CreatorTool", pdf.xmp?.["xmp:CreatorTool"]],
  ];
  const named: Named[] = [];
  for (const [source, value] of sources) {
    if (!value?.trim()) continue;
    const entry = classifyProducer(value);
    if (entry) named.push({ source, value: value.trim(), entry });
  }
  for (const e of history) {
    if (!e.softwareAgent) continue;
    const entry = classifyProducer(e.softwareAgent);
    if (entry)
      named.push({
        source: `XMP history (${e.action ?? "event"}${e.when ? ` ${e.when}` : ""})`,
        value: e.softwareAgent,
        entry,
      });
  }

  const findings: Finding[] = [];
  const reported = new Set<string>();
  for (const n of named) {
    const sev = severityFor(n.entry.category, doc.declaredDocType);
    if (sev === 0 || reported.has(n.entry.name)) continue;
    reported.add(n.entry.name);
    const all = named.filter((x) => x.entry.name === n.entry.name);
    const fromHistory = all.every((x) => x.source.startsWith("XMP history"));
    findings.push({
      code: fromHistory ? "history_names_editor" : "producer_names_editor",
      message: `The ${all.map((x) => x.source).join(" and ")} name${all.length > 1 ? "" : "s"} ${JSON.stringify(n.value)}: ${WHY[n.entry.category]}${
        n.entry.category === "office"
          ? ""
          : n.entry.category === "print_to_pdf"
            ? `; ${aDocType(doc.declaredDocType)} is generated by the issuer's systems, not made this way`
            : `, which is not how ${aDocType(doc.declaredDocType)} is issued`
      }.`,
      evidence: {
        software: n.entry.name,
        category: n.entry.category,
        values: all.map((x) => ({ source: x.source, value: x.value })),
        declaredDocType: doc.declaredDocType,
      },
      severity: sev,
    });
  }

  // The XMP history records saves by more than one program.
  const agents = [
    ...new Set(
      history
        .filter((e) => e.softwareAgent && /save|edit|convert|derive/i.test(e.action ?? "saved"))
        .map((e) => e.softwareAgent as string),
    ),
  ];
  if (agents.length > 1) {
    findings.push({
      code: "history_multiple_tools",
      message: `The XMP edit history records saves by ${agents.length} programs (${agents
        .slice(0, 4)
        .map((a) => JSON.stringify(a))
        .join(", ")}); the file passed through several tools after it was made.`,
      evidence: { agents, events: history.slice(0, 20) },
      severity: tierOf(doc.declaredDocType) === "system" ? 3 : 1,
    });
  }

  // Info and XMP disagree about the producer: one copy was rewritten by a tool that left the other.
  const infoP = pdf.info.Producer?.trim();
  const xmpP = pdf.xmp?.["pdf:Producer"]?.trim();
  if (infoP && xmpP && norm(infoP) !== norm(xmpP)) {
    findings.push({
      code: "producer_mismatch",
      message: `The Info dictionary names the producer ${JSON.stringify(infoP)} but XMP names ${JSON.stringify(xmpP)}; one copy was rewritten by a later tool.`,
      evidence: { info: infoP, xmp: xmpP },
      severity: 3,
    });
  }

  // The producer chain: an application that writes its PDFs itself, but another program named as the
  // producer, so the file was made again after it left the issuing application (re-distilled, rewritten).
  const creator = (pdf.info.Creator ?? pdf.xmp?.["xmp:CreatorTool"])?.trim();
  const producer = (pdf.info.Producer ?? pdf.xmp?.["pdf:Producer"])?.trim();
  const writer = creator ? NATIVE_PDF_WRITERS.find((w) => w.creator.test(creator)) : undefined;
  if (writer && creator && producer && !writer.producer.test(producer) && raw.revisions.length === 1) {
    const tier = tierOf(doc.declaredDocType);
    findings.push({
      code: "producer_chain_rewritten",
      message: `The Creator names ${JSON.stringify(creator)} (${writer.name}, which writes its PDFs itself), but the Producer names ${JSON.stringify(producer)}: the PDF ${writer.name} wrote was made again by another program before it was submitted, so this is not the file the issuer's software produced.`,
      evidence: { creator, producer, application: writer.name },
      severity: tier === "other" ? 1 : 5,
    });
  }

  // The producer changed between revisions.
  if (raw.revisions.length > 1) {
    const first = infoStrings(raw, 0).Producer?.trim();
    const last = infoStrings(raw).Producer?.trim();
    if (first && last && norm(first) !== norm(last)) {
      // Software that only attached a file, signed or rewrote metadata (an e-invoicing or archiving tool)
      // is a normal second producer; one whose update changed pages is reported by pdf.revisions too.
      const benign = updatesLeavePagesAlone(raw);
      findings.push({
        code: "producer_changed_in_update",
        message: `The original save names the producer ${JSON.stringify(first)}, but a later incremental update names ${JSON.stringify(last)}; the file was saved again by other software${benign ? ", which changed no page (attachments, metadata or signatures)" : ""}.`,
        evidence: { original: first, latest: last, revisions: raw.revisions.length, pagesChanged: !benign },
        severity: benign ? 1 : tierOf(doc.declaredDocType) === "system" ? 4 : 2,
      });
    }
  }

  const anyName = sources.some(([, v]) => v?.trim());
  if (!anyName) {
    findings.push({
      code: "producer_absent",
      message:
        "The PDF names no producing software anywhere (Info or XMP); generators always write one, so it was probably removed.",
      severity: 1,
    });
  }
  return { findings, named, history };
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  history_multiple_tools: {
    level: "anomaly",
    kind: "provenance",
    means: "The XMP history names several tools.",
  },
  producer_mismatch: {
    level: "anomaly",
    kind: "provenance",
    means: "The Info dictionary and the XMP name different producers.",
  },
  producer_chain_rewritten: {
    level: "anomaly",
    kind: "provenance",
    means: "The creator and the producer are different programs: the file was converted or re-printed.",
  },
  producer_changed_in_update: {
    level: "anomaly",
    kind: "provenance",
    means: "A later save names another producer.",
  },
  producer_absent: {
    level: "note",
    kind: "provenance",
    means: "The file names no producer.",
  },
  producer_names_editor: {
    level: "anomaly",
    kind: "provenance",
    means: "The producer or creator is a PDF or image editor.",
  },
  history_names_editor: {
    level: "anomaly",
    kind: "provenance",
    means: "The XMP history names a PDF or image editor.",
  },
} as const satisfies CodeTable;

export const metadataProducerCheck = defineCheck({
  id: METADATA_PRODUCER_CHECK_ID,
  codes: CODES,
  appliesTo: (doc) => doc.pdf !== undefined,
  inspect: (doc) => producerFindings(doc),
  summary({ outcome, findings, named, history }, doc) {
    const names = [...new Set(named.map((n) => n.value))];
    return outcome === "pass"
      ? names.length
        ? `The PDF was made by ${names
            .slice(0, 3)
            .map((n) => JSON.stringify(n))
            .join(
              ", ",
            )}, as expected for a ${DOC_TYPE_WORDS[doc.declaredDocType]}${history.length ? ` (XMP history: ${history.length} events)` : ""}.`
        : "The PDF names no software this check knows; nothing points to editing."
      : // Every finding's code, repeated when several programs are named (not flaggedCodes, which lists each once).
        `The PDF's producing software points to editing or conversion: ${findings
          .filter((f) => (f.severity ?? 0) >= 2)
          .map((f) => f.code)
          .join(", ")}.`;
  },
});
