import type { Change } from "../../document/pdf-raw/revision-changes.js";

/**
 * Which changes after a signature keep it attesting the document, judged deny-by-default as pyHanko does
 * (ARCHITECTURE.md, "Signature policy"): only what the signature's DocMDP level permits passes; every
 * other change to content makes the document "modified after signing".
 *
 *   level 1  no changes, except validation data (DSS) and document timestamps
 *   level 2  + filling in form fields, adding signatures (and the form/widget objects they need)
 *   level 3  + adding, changing or removing annotations
 * An approval signature without DocMDP is judged at level 2 (Acrobat and pyHanko let forms be filled and
 * countersigned after it). Metadata (Info, XMP) updates are allowed at every level: signing tools rewrite
 * them, and they do not change what the pages show.
 */

export type DocMdpLevel = 1 | 2 | 3;

/** Level used for signatures that carry no DocMDP transform. */
export const DEFAULT_LEVEL: DocMdpLevel = 2;

export function permitted(change: Change, level: DocMdpLevel): boolean {
  switch (change.kind) {
    case "dss":
    case "metadata":
      return true;
    case "signature":
      return level >= 2 || change.detail === "DocTimeStamp";
    case "form_field":
    case "form_structure":
      return level >= 2;
    case "font_added":
      // Fonts for form appearances (no page): part of filling a form.
      return level >= 2 && change.page === undefined;
    case "annotation_added":
    case "annotation_changed":
    case "annotation_removed":
      return level >= 3;
    default:
      return false;
  }
}

export function levelWords(level: DocMdpLevel): string {
  switch (level) {
    case 1:
      return "no changes";
    case 2:
      return "form filling and further signatures";
    case 3:
      return "form filling, further signatures and annotations";
  }
}
