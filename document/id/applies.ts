import { textPages } from "../document-text.js";
import type { DocumentModel } from "../model.js";

/**
 * Which documents the identity checks read (they render the page and run their own OCR, seconds of CPU):
 * - a document declared an identity document (an image, or a PDF of up to 4 pages);
 * - any other image document, or short PDF whose text is OCR'd, unless its page text (read before the checks
 *   run) was read and shows nothing of an identity document: no MRZ-like run, none of the captions and names
 *   identity documents print (IDENTITY_CUES). A page whose OCR found next to nothing (a card photo the page
 *   reader could not make out) is still read by the identity reader.
 * - a short PDF with MRZ-like text or next to no text.
 * Statements, payslips and receipts declared as such, scanned or photographed, are not read for an MRZ or a
 * barcode (on the bench's scanned statement that read cost about 4.7 s of CPU; docs/decisions.md, "OCR time").
 */
export function mayBeIdentityDocument(doc: DocumentModel): boolean {
  if (doc.pdf && doc.pdf.pageCount > 4) return false;
  if (doc.declaredDocType === "id_document") return true;
  const pages = textPages(doc);
  if (!doc.pdf) return pages.length === 0 || pages.some((p) => showsIdentity(p.text));
  return doc.pdf.pages.some(
    (p) => MRZ_LIKE.test(p.text) || p.text.trim().length < 40 || (p.ocr && showsIdentity(p.text)),
  );
}

/** Text of a filler run, as an MRZ prints it (or OCR reads it: '<' now and then as '«' or 'K'). */
const MRZ_LIKE = /[A-Z0-9]<<|<<[A-Z]|[A-Z<«]{5}<{3,}|<{5,}/;

/**
 * Captions and names identity documents print (ICAO 9303 data pages, EU and US cards and licences), in the
 * six OCR languages, with the OCR's usual losses (accents dropped).
 */
const IDENTITY_CUES = new RegExp(
  [
    "passport",
    "passeport",
    "reisepass",
    "pasaporte",
    "passaporto",
    "paspoort",
    "identity card",
    "id card",
    "personalausweis",
    "carte d.identit",
    "carta d.identit",
    "documento de identidad",
    "documento nacional",
    "identiteitskaart",
    "driving licen[cs]e",
    "drivers? licen[cs]e",
    "driver.s licen[cs]e",
    "f[uü]hrerschein",
    "permis de conduire",
    "permiso de conducci",
    "patente di guida",
    "rijbewijs",
    "date of birth",
    "geburtsdatum",
    "date de naissance",
    "fecha de nacimiento",
    "data di nascita",
    "geboortedatum",
    "nationality",
    "nationalit[eä]t",
    "nationalit[ée]",
    "nacionalidad",
    "nazionalit",
    "nationaliteit",
  ].join("|"),
  "i",
);

function showsIdentity(text: string): boolean {
  const t = text.normalize("NFKC");
  return t.trim().length < 40 || MRZ_LIKE.test(t) || IDENTITY_CUES.test(t);
}
