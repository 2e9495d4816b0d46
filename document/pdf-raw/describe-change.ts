import type { Change } from "./revision-changes.js";

/** A short phrase naming one change, for directives and summaries ("page 1 text "£3,370.01" → "£4,370.01""). */
export function describeChange(c: Change): string {
  const q = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 57)}…` : s);
  const onPage = c.page !== undefined ? ` on page ${c.page}` : "";
  switch (c.kind) {
    case "page_content": {
      const e = (c.text ?? []).find((x) => x.before && x.after) ?? c.text?.[0];
      if (!e) return `the drawing${onPage} (without changing its text)`;
      if (e.before && e.after) return `page ${c.page} text ${q(e.before.text)} → ${q(e.after.text)}`;
      return e.after
        ? `text ${q(e.after.text)} added${onPage}`
        : `text ${q(e.before?.text ?? "")} removed${onPage}`;
    }
    case "page_added":
      return `page ${c.page} added`;
    case "page_removed":
      return `page ${c.page} removed`;
    case "page_replaced":
      return `page ${c.page} replaced`;
    case "page_properties":
      return `page ${c.page}'s ${c.detail}`;
    case "annotation_added":
      return `a ${c.detail} annotation added${onPage}`;
    case "annotation_changed":
      return `a ${c.detail} annotation changed${onPage}`;
    case "annotation_removed":
      return `a ${c.detail} annotation removed${onPage}`;
    case "form_field":
      return `form field ${q(c.detail ?? "?")} set to ${q(c.after ?? "(empty)")}${c.before !== undefined ? ` (was ${q(c.before)})` : ""}`;
    case "form_structure":
      return "the form definition (AcroForm)";
    case "font_added":
      return `font ${c.detail} added${onPage}`;
    case "image_changed":
      return `${c.detail} added or replaced${onPage}`;
    case "metadata":
      return `metadata (${c.detail})`;
    case "signature":
      return c.detail && c.detail !== "Sig" && c.detail !== "Perms"
        ? `signature field ${q(c.detail)}`
        : "a signature";
    case "dss":
      return "signature validation data (DSS)";
    case "catalog":
      return `document catalog entries ${c.detail}`;
    case "other":
      return `${c.objects.length} other object${c.objects.length > 1 ? "s" : ""} (${c.detail})`;
  }
}
