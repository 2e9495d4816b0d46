import type { RawPdf } from "./document.js";
import { type Change, cachedDiff, type RevisionDiff } from "./revision-changes.js";

/**
 * What an incremental update was for, read from what it changed (revision-changes.ts): the checks that
 * judge a later save (pdf.revisions, metadata.dates, metadata.producer) tell an update that changed what
 * a reader sees from one that only attached a file or rewrote metadata. E-invoicing tools (ZUGFeRD /
 * Factur-X / XRechnung) append the invoice XML to an issued PDF this way, often months later, and archiving
 * tools make a PDF conform to PDF/A; neither touches a page.
 */

export type UpdatePurpose =
  /** Pages, their content, annotations, form values, fonts or images: what a reader sees. */
  | "pages"
  /** A file embedded (EmbeddedFile, Filespec, the catalog's AF / Names) and PDF/A conformance entries. */
  | "attachment"
  /** Only the Info dictionary or XMP. */
  | "metadata"
  /** Signatures, their fields and validation data. */
  | "signature"
  /** Anything else (catalog actions, unexplained objects). */
  | "other";

/** Catalog entries set when a file is attached or a PDF is made to conform to PDF/A (tagging included). */
const ATTACHMENT_CATALOG_KEYS = new Set([
  "AF",
  "Names",
  "OutputIntents",
  "Metadata",
  "MarkInfo",
  "StructTreeRoot",
  "Lang",
  "ViewerPreferences",
  "PageMode",
]);
/** Object types such an update writes ("object" is an untyped one, e.g. an ICC profile or a name tree). */
const ATTACHMENT_OBJECT_TYPES = new Set([
  "EmbeddedFile",
  "Filespec",
  "object",
  "OutputIntent",
  "Metadata",
  "StructTreeRoot",
  "StructElem",
  "ParentTree",
]);

const VISIBLE = new Set<Change["kind"]>([
  "page_content",
  "page_added",
  "page_removed",
  "page_replaced",
  "page_properties",
  "annotation_added",
  "annotation_removed",
  "annotation_changed",
  "form_field",
  "font_added",
  "image_changed",
]);

const listed = (detail: string | undefined) =>
  (detail ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** True for a change an attaching or PDF/A-converting tool makes. */
export function isAttachmentChange(c: Change): boolean {
  if (c.kind === "metadata") return true;
  if (c.kind === "catalog") return listed(c.detail).every((k) => ATTACHMENT_CATALOG_KEYS.has(k));
  if (c.kind === "other") return listed(c.detail).every((t) => ATTACHMENT_OBJECT_TYPES.has(t));
  return false;
}

export function updatePurpose(diff: RevisionDiff): UpdatePurpose {
  const { changes } = diff;
  if (changes.some((c) => VISIBLE.has(c.kind))) return "pages";
  if (changes.length === 0 || changes.every((c) => c.kind === "metadata")) return "metadata";
  if (changes.every((c) => c.kind === "signature" || c.kind === "dss" || c.kind === "form_structure"))
    return "signature";
  const attaches = changes.some(
    (c) =>
      (c.kind === "catalog" && listed(c.detail).some((k) => k === "AF" || k === "Names")) ||
      (c.kind === "other" && listed(c.detail).some((t) => t === "EmbeddedFile" || t === "Filespec")),
  );
  if (attaches && changes.every(isAttachmentChange)) return "attachment";
  return "other";
}

/** Updates looked at before giving up (a hostile file can hold hundreds). */
const MAX_UPDATES = 50;

/**
 * The purposes of the file's incremental updates, oldest first; undefined when the file has more than
 * MAX_UPDATES updates (too many to read cheaply, and unusual in itself).
 */
export function updatePurposes(raw: RawPdf): UpdatePurpose[] | undefined {
  const n = raw.revisions.length - 1;
  if (n > MAX_UPDATES) return undefined;
  const out: UpdatePurpose[] = [];
  for (let k = 1; k <= n; k++) out.push(updatePurpose(cachedDiff(raw, k)));
  return out;
}

/** True when the file has incremental updates and none of them changed what a reader sees. */
export function updatesLeavePagesAlone(raw: RawPdf): boolean {
  const purposes = updatePurposes(raw);
  return (
    purposes !== undefined && purposes.length > 0 && purposes.every((p) => p !== "pages" && p !== "other")
  );
}
