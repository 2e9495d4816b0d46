import { createHash } from "node:crypto";
import type { Finding } from "../core/check-result.js";
import type { CodeTable } from "../core/finding-levels.js";
import { aDocType, type DocType } from "../core/verdict.js";
import type { DocumentModel } from "../document/model.js";
import { rawPdfOf } from "../document/pdf-raw/cache.js";
import type { RawPdf } from "../document/pdf-raw/document.js";
import { embeddedFonts } from "../document/pdf-raw/font-programs.js";
import { infoStrings } from "../document/pdf-raw/info.js";
import { get, isString, nameOf, type PdfValue } from "../document/pdf-raw/objects.js";
import { defineCheck, flaggedCodes, skip } from "./check.js";

/**
 * pdf.structure: who wrote the file's bytes, against the producer its metadata names. Every PDF writer
 * leaves conventions in the bytes it writes (the binary comment after the header, how it fills the
 * trailer's /ID pair, a checksum of its own); a file whose original save was written by a tool that
 * rewrites PDFs without naming itself (qpdf, MuPDF and the libraries built on it), or whose producer's
 * own seal no longer matches its bytes, was rewritten after the named producer made it: edited, or at
 * least not the file the issuer's software produced.
 *
 * Knowledge, not learnt constants: each entry was read from the tools' own output (Debian's LibreOffice
 * 7.4, Chromium, Ghostscript 10, qpdf 11, MuPDF 1.21) and checked against the public PDFs of
 * ../shared/realworld-dev, none of which it flags. Incremental updates are pdf.revisions' concern; this
 * check reads the original save.
 */

export const PDF_STRUCTURE_CHECK_ID = "pdf.structure";

/** Tools that rewrite a whole PDF and keep its Producer, recognised by the binary comment they write. */
const SILENT_REWRITERS: readonly { name: string; comment: Uint8Array; producer: RegExp; use: string }[] = [
  {
    name: "qpdf",
    comment: Uint8Array.from([0x25, 0xbf, 0xf7, 0xa2, 0xfe]),
    producer: /qpdf/i,
    use: "a command-line tool that rewrites PDFs (and exposes their content streams for editing)",
  },
  {
    name: "MuPDF",
    comment: Uint8Array.from([0x25, 0xc2, 0xb5, 0xc2, 0xb6]),
    producer: /mupdf|pymupdf|fitz/i,
    use: "the engine of mutool and PyMuPDF, used to redact and insert text",
  },
];

/** Producers whose original save writes the two /ID strings equal (a new document, never modified). */
const EQUAL_ID_WRITERS = /libreoffice|openoffice|ghostscript|microsoft.*(word|excel|powerpoint)/i;
/** LibreOffice seals its save with /DocChecksum: the MD5 of every byte before the trailer. */
const LIBREOFFICE = /^libreoffice\b/i;

/**
 * Ghostscript copies a font file's FontInfo (Notice, FullName, FamilyName) into the CFF it embeds when it
 * distils PostScript with real fonts; fonts it takes from another PDF's embedded subsets come out without
 * them. A Ghostscript file all of whose CFF fonts lack FontInfo was distilled from an existing PDF.
 */
const GHOSTSCRIPT = /ghostscript/i;
/** Creators of a re-printed copy (viewers and print pipelines), as opposed to an issuing application. */
const PRINT_PIPELINE =
  /cairo|poppler|pdftops|evince|okular|(acrobat|adobe|foxit|sumatra)\s*(pdf\s*)?reader|^preview$|pdfcreator|cups-?pdf|print to pdf|ghostscript|pdf24|bullzip|cutepdf/i;

/** Document types issued by a system or a business: a rewrite of the issued file matters. */
const ISSUED = new Set<DocType>([
  "bank_statement",
  "payslip",
  "utility_bill",
  "tax_return",
  "invoice",
  "receipt",
]);

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

function startsWith(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (at + prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

/** Offset of the line after the `%PDF-x.y` header (where writers put their binary comment). */
function secondLine(bytes: Uint8Array, headerOffset: number): number {
  for (let i = headerOffset; i < Math.min(bytes.length, headerOffset + 32); i++) {
    if (bytes[i] === 0x0a) return i + 1;
    if (bytes[i] === 0x0d) return bytes[i + 1] === 0x0a ? i + 2 : i + 1;
  }
  return -1;
}

const stringBytes = (v: PdfValue | undefined) => (isString(v) ? hex(v.bytes) : undefined);

/** The /ID pair of a revision's trailer, as hex. */
function idPair(raw: RawPdf, rev: number): [string, string] | undefined {
  const trailer = raw.revisions[rev]?.trailer;
  const id = trailer ? get(trailer, "ID") : undefined;
  if (!Array.isArray(id) || id.length !== 2) return undefined;
  const [a, b] = id.map((x) => stringBytes(x));
  return a !== undefined && b !== undefined ? [a, b] : undefined;
}

/**
 * LibreOffice's /DocChecksum of the original save against the bytes before its trailer: "match",
 * "mismatch", or undefined when the save carries none (or has no classic trailer to measure up to).
 */
function docChecksum(raw: RawPdf): { state: "match" | "mismatch"; value: string } | undefined {
  const rev = raw.revisions[0];
  const trailer = rev?.trailer;
  const value = trailer ? nameOf(get(trailer, "DocChecksum")) : undefined;
  const section = rev?.sections.find((s) => s.kind === "table");
  if (!rev || !value || !section) return undefined;
  const text = Buffer.from(raw.bytes.buffer, raw.bytes.byteOffset, raw.bytes.byteLength);
  const at = text.indexOf("trailer", section.offset, "latin1");
  if (at < 0 || at > rev.end) return undefined;
  const md5 = createHash("md5").update(raw.bytes.subarray(0, at)).digest("hex");
  return { state: md5.toUpperCase() === value.toUpperCase() ? "match" : "mismatch", value };
}

export interface StructureReport {
  findings: Finding[];
  producer?: string;
  writer?: string;
}

export function structureFindings(doc: DocumentModel): StructureReport {
  const raw = rawPdfOf(doc);
  const info = infoStrings(raw, 0);
  const producer = (info.Producer ?? doc.pdf?.xmp?.["pdf:Producer"] ?? "").trim();
  const named = [producer, info.Creator ?? ""].join(" ");
  const issued = ISSUED.has(doc.declaredDocType);
  // Bytes rewritten under the issuer's producer name: proof on an issued document (docs/calibration.md).
  const severity = issued ? 8 : 2;
  const findings: Finding[] = [];
  const headerOffset = doc.pdf?.raw.headerOffset ?? 0;
  const line2 = secondLine(raw.bytes, headerOffset);
  const writer = SILENT_REWRITERS.find((w) => line2 >= 0 && startsWith(raw.bytes, line2, w.comment));
  const ids = idPair(raw, 0);
  const idsDiffer = ids !== undefined && ids[0] !== ids[1];

  if (writer && !writer.producer.test(named)) {
    findings.push({
      code: "rewritten_by_other_tool",
      message: `The file's bytes were written by ${writer.name} (${writer.use}), but its metadata names ${producer ? JSON.stringify(producer) : "no producer"}: ${writer.name} rewrote the file after it was made and left the producer as it was${idsDiffer ? "; the trailer's second /ID differs from the first, as it does after a modification" : ""}. This is not the file ${issued ? `the issuer's software produced for ${aDocType(doc.declaredDocType)}` : "its producer wrote"}.`,
      evidence: {
        writer: writer.name,
        producer: producer || null,
        headerComment: hex(raw.bytes.subarray(line2, line2 + writer.comment.length)),
        ...(ids ? { id: ids } : {}),
      },
      severity,
    });
  }

  if (LIBREOFFICE.test(producer)) {
    const seal = docChecksum(raw);
    if (seal?.state === "mismatch") {
      findings.push({
        code: "producer_checksum_broken",
        message: `LibreOffice, the named producer, seals every PDF it saves with a checksum of the bytes it wrote (/DocChecksum ${seal.value}); this file's bytes no longer match it, so they were changed after LibreOffice saved them.`,
        evidence: { producer, docChecksum: seal.value },
        severity: issued ? 8 : 3,
      });
    } else if (!seal && !writer && raw.revisions[0]?.sections.some((s) => s.kind === "table")) {
      findings.push({
        code: "producer_checksum_missing",
        message: `The metadata names LibreOffice (${JSON.stringify(producer)}), which seals every PDF it saves with a /DocChecksum in the trailer; this file's original save has none, so another program wrote these bytes.`,
        evidence: { producer },
        severity: issued ? 4 : 1,
      });
    }
  }

  if (!writer && idsDiffer && raw.revisions.length === 1 && EQUAL_ID_WRITERS.test(producer)) {
    findings.push({
      code: "id_pair_modified",
      message: `The named producer (${JSON.stringify(producer)}) writes the two /ID strings of a new file equal, but this file, saved once, carries two different ones: it was saved again by a program that marks a modification.`,
      evidence: { producer, id: ids },
      severity: issued ? 4 : 1,
    });
  }
  if (!writer && GHOSTSCRIPT.test(producer) && raw.revisions.length === 1) {
    const cff = embeddedFonts(raw).filter((f) => f.format === "cff");
    if (cff.length > 0 && cff.every((f) => f.fontInfo === false)) {
      const creator = (info.Creator ?? doc.pdf?.xmp?.["xmp:CreatorTool"] ?? "").trim();
      const claimsIssuer = creator !== "" && !PRINT_PIPELINE.test(creator);
      findings.push({
        code: "redistilled_from_pdf",
        message: claimsIssuer
          ? `The file says ${JSON.stringify(creator)} made it and Ghostscript distilled it, but Ghostscript took all ${cff.length} of its fonts (${cff
              .slice(0, 3)
              .map((f) => f.name)
              .join(
                ", ",
              )}) from another PDF's embedded subsets, not from font files: it was re-distilled from an existing PDF, which carries the issuer's name over, so this is not the file the issuer's system produced.`
          : `Ghostscript took all ${cff.length} fonts of this file from another PDF's embedded subsets, not from font files: it is a re-distilled or re-printed copy of an existing PDF.`,
        evidence: { producer, creator: creator || null, fonts: cff.slice(0, 10).map((f) => f.name) },
        // A print pipeline (an application's PDF printed again through Ghostscript) looks the same: an anomaly.
        severity: claimsIssuer ? 4 : issued ? 2 : 1,
      });
    }
  }
  return { findings, producer: producer || undefined, writer: writer?.name };
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  rewritten_by_other_tool: {
    level: "proof",
    kind: "structure",
    means:
      "A tool that rewrites PDFs without naming itself (qpdf, MuPDF) wrote the bytes under the named producer: bytes rewritten under its seal (proof on an issued document).",
  },
  producer_checksum_broken: {
    level: "proof",
    kind: "structure",
    means:
      "The named producer's own checksum of its bytes no longer matches: bytes rewritten under its seal.",
  },
  producer_checksum_missing: {
    level: "anomaly",
    kind: "structure",
    means: "The named producer always seals its files, and this one carries no seal.",
  },
  id_pair_modified: {
    level: "anomaly",
    kind: "structure",
    means: "A file saved once carries the /ID pair of a modified file.",
  },
  redistilled_from_pdf: {
    level: "anomaly",
    kind: "provenance",
    means: "Ghostscript distilled the file from another PDF (a print pipeline or a re-distilled copy).",
  },
} as const satisfies CodeTable;

export const pdfStructureCheck = defineCheck({
  id: PDF_STRUCTURE_CHECK_ID,
  codes: CODES,
  appliesTo: (doc) => doc.contentType === "application/pdf" && doc.pdf !== undefined,
  inspect(doc) {
    const raw = rawPdfOf(doc);
    if (!raw.catalog() || raw.revisions.length === 0) {
      return skip("The PDF's own structure cannot be read from its bytes, so its writer cannot be told.");
    }
    if (raw.encrypted) {
      return skip("The PDF is encrypted; its structure is not compared with the producer it names.");
    }
    return structureFindings(doc);
  },
  summary: ({ outcome, findings, producer }) =>
    outcome === "pass"
      ? `The file's structure is consistent with the producer it names${producer ? ` (${JSON.stringify(producer)})` : ""}: no sign that another program rewrote it.`
      : `The file's structure contradicts its named producer: ${flaggedCodes(findings).join(", ")}.`,
});
