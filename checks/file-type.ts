import type { Finding } from "../core/check-result.js";
import type { CodeTable } from "../core/finding-levels.js";
import { DOC_TYPE_WORDS } from "../core/verdict.js";
import type { DocumentModel } from "../document/model.js";
import { defineCheck, flaggedCodes } from "./check.js";

/**
 * file.type: do the declared document type, the file name's extension and the real (sniffed) content
 * agree? Also reads what the PDF header says about the file (bytes before the header, a version older
 * than the features used, data after the end).
 */

export const FILE_TYPE_CHECK_ID = "file.type";

interface ExtensionKind {
  /** Words for messages. */
  words: string;
  /** The content type the extension promises, when it is one we accept. */
  contentType?: string;
  /** A document format that is commonly converted to PDF (word processor, spreadsheet, ...). */
  office?: boolean;
}

const EXTENSIONS: Record<string, ExtensionKind> = {
  pdf: { words: "a PDF", contentType: "application/pdf" },
  jpg: { words: "a JPEG image", contentType: "image/jpeg" },
  jpeg: { words: "a JPEG image", contentType: "image/jpeg" },
  jpe: { words: "a JPEG image", contentType: "image/jpeg" },
  jfif: { words: "a JPEG image", contentType: "image/jpeg" },
  png: { words: "a PNG image", contentType: "image/png" },
  tif: { words: "a TIFF image", contentType: "image/tiff" },
  tiff: { words: "a TIFF image", contentType: "image/tiff" },
  doc: { words: "a Word document", office: true },
  docx: { words: "a Word document", office: true },
  odt: { words: "an OpenDocument text", office: true },
  rtf: { words: "a rich-text document", office: true },
  pages: { words: "an Apple Pages document", office: true },
  xls: { words: "an Excel spreadsheet", office: true },
  xlsx: { words: "an Excel spreadsheet", office: true },
  ods: { words: "an OpenDocument spreadsheet", office: true },
  csv: { words: "a CSV table", office: true },
  txt: { words: "a plain-text file", office: true },
  html: { words: "a web page", office: true },
  htm: { words: "a web page", office: true },
  gif: { words: "a GIF image" },
  bmp: { words: "a bitmap image" },
  webp: { words: "a WebP image" },
  heic: { words: "an HEIC photo" },
  heif: { words: "an HEIF photo" },
  zip: { words: "a ZIP archive" },
  eml: { words: "an e-mail message" },
  msg: { words: "an Outlook message" },
};

const CONTENT_WORDS: Record<string, string> = {
  "application/pdf": "a PDF",
  "image/jpeg": "a JPEG image",
  "image/png": "a PNG image",
  "image/tiff": "a TIFF image",
};

/** Document types whose originals are issued digitally (a photo or scan of one is plausible but second-hand). */
const DIGITALLY_ISSUED = new Set([
  "bank_statement",
  "payslip",
  "invoice",
  "utility_bill",
  "tax_return",
  "loan_application",
  "contract",
]);

const versionNumber = (v: string) => Number(v);

export function extensionOf(filename: string): string | null {
  const base = filename.split(/[\\/]/).pop() ?? filename;
  const dot = base.lastIndexOf(".");
  if (dot <= 0 || dot === base.length - 1) return null;
  return base.slice(dot + 1).toLowerCase();
}

function nameFindings(doc: DocumentModel): Finding[] {
  const findings: Finding[] = [];
  const content = CONTENT_WORDS[doc.contentType] ?? doc.contentType;
  if (!doc.filename) {
    findings.push({
      code: "filename_missing",
      message:
        "The document arrived without a file name, so its name could not be compared with its content.",
      severity: 0,
    });
    return findings;
  }
  const ext = extensionOf(doc.filename);
  if (!ext) {
    findings.push({
      code: "extension_missing",
      message: `The file name "${doc.filename}" has no extension; the content is ${content}.`,
      evidence: { filename: doc.filename, contentType: doc.contentType },
      severity: 1,
    });
    return findings;
  }
  const kind = EXTENSIONS[ext];
  const evidence = { filename: doc.filename, extension: ext, contentType: doc.contentType };
  if (!kind) {
    findings.push({
      code: "extension_unknown",
      message: `The file name "${doc.filename}" has the unusual extension ".${ext}" for ${content}.`,
      evidence,
      severity: 1,
    });
  } else if (kind.contentType === doc.contentType) {
    // agrees
  } else if (kind.contentType) {
    findings.push({
      code: "extension_mismatch",
      message: `The file is named "${doc.filename}" like ${kind.words}, but its content is ${content}; a renamed file can hide how the document was made.`,
      evidence,
      severity: 5,
    });
  } else if (kind.office && doc.contentType === "application/pdf") {
    findings.push({
      code: "extension_mismatch",
      message: `The file is named "${doc.filename}" like ${kind.words}, but its content is a PDF; it was converted or renamed, so it is not the original issued file.`,
      evidence,
      severity: 4,
    });
  } else {
    findings.push({
      code: "extension_mismatch",
      message: `The file is named "${doc.filename}" like ${kind.words}, but its content is ${content}.`,
      evidence,
      severity: 4,
    });
  }
  return findings;
}

/** Names in use for the accepted types beside their registered ones (browsers and old tools send these). */
const CONTENT_TYPE_ALIASES: Record<string, string> = {
  "application/x-pdf": "application/pdf",
  "application/acrobat": "application/pdf",
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
  "image/x-png": "image/png",
  "image/tif": "image/tiff",
  "image/x-tiff": "image/tiff",
};
/** Declarations that name no type (a generic binary stream): nothing to compare. */
const GENERIC_CONTENT_TYPES = new Set([
  "application/octet-stream",
  "binary/octet-stream",
  "application/binary",
]);

/** The declared content type (an upload's content_type) against the sniffed one: a finding, never a failure. */
export function declaredContentTypeFindings(doc: DocumentModel): Finding[] {
  const raw = doc.declaredContentType?.split(";")[0]?.trim().toLowerCase();
  if (!raw || GENERIC_CONTENT_TYPES.has(raw)) return [];
  const declared = CONTENT_TYPE_ALIASES[raw] ?? raw;
  if (declared === doc.contentType) return [];
  const content = CONTENT_WORDS[doc.contentType] ?? doc.contentType;
  return [
    {
      code: "declared_content_type_mismatch",
      message: `The upload was declared as ${CONTENT_WORDS[declared] ?? `"${raw}"`}, but its content is ${content}; the file is not what the submitter said it was.`,
      evidence: { declaredContentType: doc.declaredContentType, contentType: doc.contentType },
      severity: 4,
    },
  ];
}

function declaredTypeFindings(doc: DocumentModel): Finding[] {
  if (!doc.contentType.startsWith("image/") || !DIGITALLY_ISSUED.has(doc.declaredDocType)) return [];
  const words = DOC_TYPE_WORDS[doc.declaredDocType];
  return [
    {
      code: "image_for_digital_document",
      message: `A ${words} is normally issued as a PDF, but this one is ${CONTENT_WORDS[doc.contentType] ?? "an image"}: a photo or scan is plausible, but it is not the issuer's original file.`,
      evidence: { declaredDocType: doc.declaredDocType, contentType: doc.contentType },
      severity: 1,
    },
  ];
}

function pdfStructureFindings(doc: DocumentModel): Finding[] {
  const pdf = doc.pdf;
  if (!pdf) return [];
  const findings: Finding[] = [];
  const raw = pdf.raw;
  if (raw.headerOffset > 0) {
    findings.push({
      code: "pdf_header_offset",
      message: `The file has ${raw.headerOffset} bytes before its %PDF- header; readers accept this, but generators do not write it, so something wrapped or altered the file.`,
      evidence: { headerOffset: raw.headerOffset },
      severity: 2,
    });
  }
  const declared = [pdf.version, raw.catalogVersion].filter((v): v is string => v !== null);
  if (declared.length > 0) {
    const effective = declared.reduce((a, b) => (versionNumber(b) > versionNumber(a) ? b : a));
    const newer = raw.features.filter((f) => versionNumber(f.minVersion) > versionNumber(effective));
    if (newer.length > 0) {
      findings.push({
        code: "pdf_version_features",
        message: `The file declares PDF ${effective} but uses ${newer.map((f) => `${f.name} (PDF ${f.minVersion})`).join(", ")}; a later tool rewrote parts of it without updating the version.`,
        evidence: { headerVersion: pdf.version, catalogVersion: raw.catalogVersion, features: newer },
        severity: 2,
      });
    }
  }
  if (raw.trailingBytes > 32) {
    findings.push({
      code: "data_after_eof",
      message: `The file carries ${raw.trailingBytes} bytes of data after its final %%EOF marker, which PDF readers ignore; it may hide appended content.`,
      evidence: { trailingBytes: raw.trailingBytes },
      severity: 2,
    });
  }
  return findings;
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  filename_missing: {
    level: "note",
    kind: "container",
    means: "The upload carries no file name to compare with its content.",
  },
  extension_missing: {
    level: "note",
    kind: "container",
    means: "The file name has no extension.",
  },
  extension_unknown: {
    level: "note",
    kind: "container",
    means: "The file name's extension is unusual for its content.",
  },
  extension_mismatch: {
    level: "anomaly",
    kind: "container",
    means: "The file name says one format, the content is another: renamed or converted.",
  },
  declared_content_type_mismatch: {
    level: "anomaly",
    kind: "container",
    means: "The submitter declared another content type than the file's real one.",
  },
  image_for_digital_document: {
    level: "note",
    kind: "container",
    means: "A document normally issued as a PDF arrives as an image (a photo or scan).",
  },
  pdf_header_offset: {
    level: "anomaly",
    kind: "structure",
    means: "Bytes precede the %PDF- header, which generators do not write.",
  },
  pdf_version_features: {
    level: "anomaly",
    kind: "structure",
    means: "The file uses features newer than the PDF version it declares: a later tool rewrote parts.",
  },
  data_after_eof: {
    level: "anomaly",
    kind: "structure",
    means: "Data follows the final %%EOF marker, where readers do not look.",
  },
} as const satisfies CodeTable;

export const fileTypeCheck = defineCheck({
  id: FILE_TYPE_CHECK_ID,
  codes: CODES,
  appliesTo: () => true,
  inspect: (doc) => ({
    findings: [
      ...nameFindings(doc),
      ...declaredContentTypeFindings(doc),
      ...declaredTypeFindings(doc),
      ...pdfStructureFindings(doc),
    ],
  }),
  summary({ outcome, findings }, doc) {
    const content = CONTENT_WORDS[doc.contentType] ?? doc.contentType;
    return outcome === "pass"
      ? `The file name, the declared type (${DOC_TYPE_WORDS[doc.declaredDocType]}) and the content (${content}) agree${findings.length ? `, with ${findings.length} minor note${findings.length > 1 ? "s" : ""}` : ""}.`
      : `The file's name or structure disagrees with its content (${content}): ${flaggedCodes(findings).join(", ")}.`;
  },
});
