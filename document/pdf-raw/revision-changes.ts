import { perRevision } from "./cache.js";
import { pageTextRuns } from "./content-text.js";
import type { PageInfo, RawPdf } from "./document.js";
import {
  canonical,
  dictOf,
  get,
  isDict,
  isName,
  isRef,
  isStream,
  nameOf,
  type PdfDict,
  type PdfValue,
  refKey,
  textOf,
} from "./objects.js";
import { diffRuns, type TextEdit } from "./text-diff.js";

/**
 * What one incremental update changed compared with the revision before it, in the words a reviewer
 * needs: pages added/removed/replaced, page content (with the text edits, before → after), fonts and
 * images, annotations, form-field values, signatures and DSS data, metadata, catalog entries, and any
 * other object. Every changed object is accounted for exactly once, so nothing an update did is silent.
 */

export type ChangeKind =
  | "page_content"
  | "page_added"
  | "page_removed"
  | "page_replaced"
  | "page_properties"
  | "annotation_added"
  | "annotation_removed"
  | "annotation_changed"
  | "form_field"
  | "form_structure"
  | "font_added"
  | "image_changed"
  | "metadata"
  | "signature"
  | "dss"
  | "catalog"
  | "other";

export interface Change {
  kind: ChangeKind;
  page?: number;
  /** Object numbers behind the change. */
  objects: number[];
  /** For page_content: the text edits (before → after). */
  text?: TextEdit[];
  /** Annotation subtype, font names, field name, catalog keys, ... */
  detail?: string;
  before?: string;
  after?: string;
  /** For form fields and annotations: the field is a signature field. */
  signatureField?: boolean;
}

export interface RevisionDiff {
  /** 0-based index of the revision (the later one). */
  revision: number;
  start: number;
  end: number;
  changes: Change[];
  /** Objects the update wrote that are byte-for-byte the same as before (a full re-save). */
  unchanged: number;
}

const STRUCTURAL_TYPES = new Set(["XRef", "ObjStm"]);
const MAX_TEXT_EDITS = 50;

export function diffRevision(raw: RawPdf, k: number): RevisionDiff {
  const rev = raw.revisions[k];
  if (!rev || k === 0) throw new RangeError(`revision ${k} has no predecessor`);
  const p = k - 1;
  const digest = (s: Parameters<RawPdf["streamDigest"]>[0]) => raw.streamDigest(s);
  const canon = (v: PdfValue | undefined) => (v === undefined ? "∅" : canonical(v, digest));

  const changed = new Set<number>();
  const added = new Set<number>();
  const deleted = new Set<number>();
  let unchanged = 0;
  for (const [num, e] of rev.entries) {
    if (num === 0) continue;
    const before = raw.locate(num, p) ? raw.object(num, p) : undefined;
    if (e.type === "free") {
      if (before !== undefined && before !== null) deleted.add(num);
      continue;
    }
    const after = raw.object(num, k);
    const d = dictOf(after);
    if (d && STRUCTURAL_TYPES.has(nameOf(get(d, "Type")) ?? "")) continue;
    if (before === undefined || before === null) added.add(num);
    else if (canon(before) !== canon(after)) changed.add(num);
    else unchanged++;
  }
  const touched = new Set([...changed, ...added, ...deleted]);
  const explained = new Set<number>();
  const changes: Change[] = [];
  const push = (c: Change) => {
    for (const o of c.objects) explained.add(o);
    changes.push(c);
  };
  const numOf = (v: PdfValue | undefined) => (isRef(v) ? v.num : undefined);
  const refsIn = (v: PdfValue | undefined, depth = 0, out: number[] = []): number[] => {
    if (depth > 4 || out.length > 200) return out;
    if (isRef(v)) out.push(v.num);
    else if (Array.isArray(v)) for (const x of v) refsIn(x, depth + 1, out);
    else if (isDict(v)) for (const x of v.map.values()) refsIn(x, depth + 1, out);
    return out;
  };

  // ---- pages -------------------------------------------------------------------------------
  const pagesBefore = raw.pages(p);
  const pagesAfter = raw.pages(k);
  const keyOf = (pg: PageInfo) => (pg.ref ? refKey(pg.ref) : `direct${pg.number}`);
  const beforeByKey = new Map(pagesBefore.map((pg) => [keyOf(pg), pg]));
  const afterKeys = new Set(pagesAfter.map(keyOf));
  const replacedBefore = new Set<string>();
  for (const pg of pagesAfter) {
    if (beforeByKey.has(keyOf(pg))) continue;
    const old = pagesBefore[pg.number - 1];
    const objects = [
      ...(pg.ref ? [pg.ref.num] : []),
      ...raw.contents(pg, k).flatMap((c) => (c.ref ? [c.ref.num] : [])),
    ];
    if (old && !afterKeys.has(keyOf(old))) {
      replacedBefore.add(keyOf(old));
      push({ kind: "page_replaced", page: pg.number, objects, text: textEdits(raw, old, p, pg, k) });
    } else push({ kind: "page_added", page: pg.number, objects, text: textEdits(raw, undefined, p, pg, k) });
    markPageResources(raw, pg, k, touched, explained);
  }
  for (const old of pagesBefore) {
    if (afterKeys.has(keyOf(old)) || replacedBefore.has(keyOf(old))) continue;
    push({ kind: "page_removed", page: old.number, objects: old.ref ? [old.ref.num] : [] });
  }
  if (pagesBefore.length !== pagesAfter.length || changes.some((c) => c.kind.startsWith("page_"))) {
    // The page-tree nodes that changed are part of the page change.
    for (const n of touched)
      if (isName(get(raw.dict({ kind: "ref", num: n, gen: 0 }, k), "Type"), "Pages")) explained.add(n);
  }

  for (const pg of pagesAfter) {
    const old = beforeByKey.get(keyOf(pg));
    if (!old) continue;
    const pageNum = pg.ref?.num;
    const contentsBefore = raw.contents(old, p).map((c) => (c.ref ? refKey(c.ref) : "direct"));
    const contentsAfter = raw.contents(pg, k);
    const contentObjs = contentsAfter.flatMap((c) => (c.ref ? [c.ref.num] : []));
    const formObjs = formXObjects(raw, pg, k);
    let contentChanged =
      contentsBefore.join(",") !== contentsAfter.map((c) => (c.ref ? refKey(c.ref) : "direct")).join(",") ||
      contentObjs.some((n) => touched.has(n)) ||
      formObjs.some((n) => touched.has(n));
    const pageDictChanged = pageNum !== undefined && touched.has(pageNum);
    // Fonts and images the page uses now but did not before.
    const fontsBefore = new Set(resourceRefs(raw, old, p, "Font"));
    const newFonts = resourceRefs(raw, pg, k, "Font").filter((n) => !fontsBefore.has(n) || touched.has(n));
    const imagesBefore = new Set(resourceRefs(raw, old, p, "XObject"));
    const newImages = resourceRefs(raw, pg, k, "XObject").filter(
      (n) =>
        (!imagesBefore.has(n) || touched.has(n)) &&
        isName(get(raw.dict({ kind: "ref", num: n, gen: 0 }, k), "Subtype"), "Image"),
    );
    if (
      !contentChanged &&
      pageDictChanged &&
      canon(get(old.dict, "Resources")) !== canon(get(pg.dict, "Resources"))
    ) {
      contentChanged = newFonts.length > 0 || newImages.length > 0;
    }
    if (contentChanged) {
      push({
        kind: "page_content",
        page: pg.number,
        objects: [...contentObjs.filter((n) => touched.has(n)), ...formObjs.filter((n) => touched.has(n))],
        text: textEdits(raw, old, p, pg, k),
      });
    }
    if (newFonts.length > 0) {
      const names = newFonts.map(
        (n) => nameOf(get(raw.dict({ kind: "ref", num: n, gen: 0 }, k), "BaseFont")) ?? `object ${n}`,
      );
      push({
        kind: "font_added",
        page: pg.number,
        objects: newFonts.filter((n) => touched.has(n)),
        detail: [...new Set(names)].join(", "),
      });
      markFontFiles(raw, newFonts, k, touched, explained);
    }
    if (newImages.length > 0) {
      push({
        kind: "image_changed",
        page: pg.number,
        objects: newImages.filter((n) => touched.has(n)),
        detail: `${newImages.length} image${newImages.length > 1 ? "s" : ""}`,
      });
    }

    // Annotations.
    const annotsBefore = annotRefs(raw, old, p);
    const annotsAfter = annotRefs(raw, pg, k);
    const beforeSet = new Set(annotsBefore);
    const afterSet = new Set(annotsAfter);
    for (const n of annotsAfter) {
      const a = raw.dict({ kind: "ref", num: n, gen: 0 }, k);
      const subtype = nameOf(get(a, "Subtype")) ?? "unknown";
      const ap = refsIn(get(a, "AP"));
      if (subtype === "Widget" || get(a, "FT") !== undefined || get(a, "Parent") !== undefined) continue; // fields below
      if (!beforeSet.has(n)) {
        push({
          kind: "annotation_added",
          page: pg.number,
          objects: [n, ...ap.filter((x) => touched.has(x))],
          detail: subtype,
          after: annotText(a),
        });
      } else if (touched.has(n) || ap.some((x) => touched.has(x))) {
        push({
          kind: "annotation_changed",
          page: pg.number,
          objects: [n, ...ap.filter((x) => touched.has(x))],
          detail: subtype,
          after: annotText(a),
        });
      }
    }
    for (const n of annotsBefore) {
      if (afterSet.has(n)) continue;
      const a = raw.dict({ kind: "ref", num: n, gen: 0 }, p);
      if (nameOf(get(a, "Subtype")) === "Widget") continue;
      push({
        kind: "annotation_removed",
        page: pg.number,
        objects: [n],
        detail: nameOf(get(a, "Subtype")) ?? "unknown",
      });
    }
    if (pageDictChanged && pageNum !== undefined) {
      const diffKeys = changedKeys(old.dict, pg.dict, canon).filter(
        (key) => !["Annots", "Contents", "Resources"].includes(key),
      );
      if (diffKeys.length > 0)
        push({ kind: "page_properties", page: pg.number, objects: [pageNum], detail: diffKeys.join(", ") });
      else explained.add(pageNum);
    }
  }

  // ---- form fields and signatures ------------------------------------------------------------
  const fieldsAfter = terminalFields(raw, k);
  const fieldsBefore = new Map(terminalFields(raw, p).map((f) => [f.num, f]));
  const pageOfWidget = widgetPages(raw, pagesAfter, k);
  for (const f of fieldsAfter) {
    const related = [
      f.num,
      ...f.widgets,
      ...f.widgets.flatMap((w) => refsIn(get(raw.dict({ kind: "ref", num: w, gen: 0 }, k), "AP"))),
    ];
    const hit = related.filter((n) => touched.has(n));
    if (hit.length === 0 && fieldsBefore.has(f.num)) continue;
    const old = fieldsBefore.get(f.num);
    const sigObjs = f.isSignature ? refsIn(get(f.dict, "V")).filter((n) => touched.has(n)) : [];
    const page = f.widgets.map((w) => pageOfWidget.get(w)).find((x) => x !== undefined);
    if (f.isSignature) {
      push({
        kind: "signature",
        objects: [...hit, ...sigObjs],
        detail: f.name,
        signatureField: true,
        ...(page ? { page } : {}),
      });
      continue;
    }
    const beforeValue = old ? fieldValue(raw, old.dict, p) : undefined;
    const afterValue = fieldValue(raw, f.dict, k);
    push({
      kind: "form_field",
      objects: hit.length ? hit : [f.num],
      detail: f.name,
      ...(beforeValue !== undefined ? { before: beforeValue } : {}),
      ...(afterValue !== undefined ? { after: afterValue } : {}),
      ...(page ? { page } : {}),
    });
  }

  // ---- catalog, metadata, DSS, signatures outside fields -----------------------------------------
  const catNum = numOf(get(raw.trailer(k), "Root"));
  const infoNum = numOf(get(raw.trailer(k), "Info"));
  if (catNum !== undefined && touched.has(catNum)) {
    const keys = changedKeys(
      raw.catalog(p) ?? { kind: "dict", map: new Map() },
      raw.catalog(k) ?? { kind: "dict", map: new Map() },
      canon,
    );
    const benign = new Set(["Pages", "AcroForm", "Metadata", "DSS", "Perms", "Version"]);
    const other = keys.filter((key) => !benign.has(key));
    if (keys.includes("DSS"))
      push({
        kind: "dss",
        objects: [catNum, ...refsIn(get(raw.catalog(k), "DSS")).filter((n) => touched.has(n))],
        detail: "DSS",
      });
    if (keys.includes("Perms")) push({ kind: "signature", objects: [catNum], detail: "Perms" });
    if (keys.includes("AcroForm"))
      push({
        kind: "form_structure",
        objects: [
          catNum,
          ...refsIn(get(raw.catalog(k), "AcroForm"), 0).filter((n) => touched.has(n) && !isField(raw, n, k)),
        ],
        detail: "AcroForm",
      });
    if (other.length > 0) push({ kind: "catalog", objects: [catNum], detail: other.join(", ") });
    explained.add(catNum);
  }
  const acroNum = numOf(get(raw.catalog(k), "AcroForm"));
  if (acroNum !== undefined && touched.has(acroNum) && !explained.has(acroNum)) {
    push({ kind: "form_structure", objects: [acroNum], detail: "AcroForm" });
  }
  // Everything the DSS reaches (its VRI dictionaries, arrays and streams are usually indirect objects).
  const dssObjs: number[] = [];
  const dssSeen = new Set<number>();
  const walkDss = (v: PdfValue | undefined, depth: number) => {
    if (depth > 6 || dssSeen.size > 5000) return;
    for (const n of isRef(v) ? [v.num] : refsIn(v)) {
      if (dssSeen.has(n)) continue;
      dssSeen.add(n);
      if (touched.has(n) && !explained.has(n)) dssObjs.push(n);
      walkDss(raw.object(n, k) ?? undefined, depth + 1);
    }
  };
  walkDss(get(raw.catalog(k), "DSS"), 0);
  if (dssObjs.length > 0) push({ kind: "dss", objects: dssObjs, detail: "DSS" });
  const metadataObjs: number[] = [];
  for (const n of touched) {
    if (explained.has(n)) continue;
    const d = dictOf(raw.object(n, k) ?? undefined) ?? dictOf(raw.object(n, p) ?? undefined);
    const type = nameOf(get(d, "Type"));
    if (n === infoNum || type === "Metadata") metadataObjs.push(n);
    else if (type === "Sig" || type === "DocTimeStamp" || get(d, "ByteRange") !== undefined)
      push({ kind: "signature", objects: [n], detail: type ?? "Sig" });
    else if (type === "VRI") push({ kind: "dss", objects: [n], detail: "DSS" });
    else if (
      type === "Font" ||
      type === "FontDescriptor" ||
      (isStream(raw.object(n, k) ?? undefined) && get(d, "Length1") !== undefined)
    )
      push({ kind: "font_added", objects: [n], detail: nameOf(get(d, "BaseFont")) ?? `object ${n}` });
  }
  if (metadataObjs.length > 0)
    push({
      kind: "metadata",
      objects: metadataObjs,
      detail: metadataObjs.map((n) => (n === infoNum ? "Info" : "XMP")).join(", "),
    });
  const rest = [...touched].filter((n) => !explained.has(n));
  if (rest.length > 0) {
    const types = rest.map((n) => {
      const d = dictOf(raw.object(n, k) ?? undefined) ?? dictOf(raw.object(n, p) ?? undefined);
      return (
        nameOf(get(d, "Type")) ?? nameOf(get(d, "Subtype")) ?? (deleted.has(n) ? "deleted object" : "object")
      );
    });
    push({ kind: "other", objects: rest, detail: [...new Set(types)].join(", ") });
  }
  return { revision: k, start: rev.start, end: rev.end, changes, unchanged };
}

function textEdits(
  raw: RawPdf,
  before: PageInfo | undefined,
  p: number,
  after: PageInfo,
  k: number,
): TextEdit[] {
  const a = before ? pageTextRuns(raw, before, p) : [];
  const b = pageTextRuns(raw, after, k);
  return diffRuns(a, b).slice(0, MAX_TEXT_EDITS);
}

function changedKeys(a: PdfDict, b: PdfDict, canon: (v: PdfValue | undefined) => string): string[] {
  const keys = new Set([...a.map.keys(), ...b.map.keys()]);
  return [...keys].filter((key) => canon(a.map.get(key)) !== canon(b.map.get(key)));
}

function resourceRefs(raw: RawPdf, pg: PageInfo, rev: number, kind: "Font" | "XObject"): number[] {
  const d = raw.dict(get(pg.resources, kind), rev);
  if (!d) return [];
  return [...new Set([...d.map.values()].flatMap((v) => (isRef(v) ? [v.num] : [])))];
}

function formXObjects(raw: RawPdf, pg: PageInfo, rev: number): number[] {
  return resourceRefs(raw, pg, rev, "XObject").filter((n) =>
    isName(get(raw.dict({ kind: "ref", num: n, gen: 0 }, rev), "Subtype"), "Form"),
  );
}

function markPageResources(
  raw: RawPdf,
  pg: PageInfo,
  rev: number,
  touched: Set<number>,
  explained: Set<number>,
) {
  for (const n of [...resourceRefs(raw, pg, rev, "Font"), ...resourceRefs(raw, pg, rev, "XObject")]) {
    if (touched.has(n)) explained.add(n);
  }
  markFontFiles(raw, resourceRefs(raw, pg, rev, "Font"), rev, touched, explained);
}

function markFontFiles(
  raw: RawPdf,
  fonts: number[],
  rev: number,
  touched: Set<number>,
  explained: Set<number>,
) {
  const visit = (v: PdfValue | undefined, depth: number) => {
    if (depth > 4) return;
    if (isRef(v)) {
      if (touched.has(v.num)) explained.add(v.num);
      const d = raw.dict(v, rev);
      if (!d || depth > 3) return;
      for (const key of [
        "DescendantFonts",
        "FontDescriptor",
        "FontFile",
        "FontFile2",
        "FontFile3",
        "ToUnicode",
        "Widths",
        "Encoding",
      ]) {
        visit(get(d, key), depth + 1);
      }
    } else if (Array.isArray(v)) for (const x of v) visit(x, depth + 1);
  };
  for (const n of fonts) visit({ kind: "ref", num: n, gen: 0 }, 0);
}

function annotRefs(raw: RawPdf, pg: PageInfo, rev: number): number[] {
  const a = raw.resolve(get(pg.dict, "Annots"), rev);
  if (!Array.isArray(a)) return [];
  return a.slice(0, 10_000).flatMap((v) => (isRef(v) ? [v.num] : []));
}

function annotText(a: PdfDict | undefined): string | undefined {
  const t = textOf(get(a, "Contents"));
  return t?.trim() ? t.trim().slice(0, 200) : undefined;
}

interface Field {
  num: number;
  dict: PdfDict;
  name: string;
  isSignature: boolean;
  widgets: number[];
}

function isField(raw: RawPdf, n: number, rev: number): boolean {
  const d = raw.dict({ kind: "ref", num: n, gen: 0 }, rev);
  return d !== undefined && (get(d, "FT") !== undefined || get(d, "T") !== undefined);
}

/** Terminal fields of the AcroForm as of a revision (bounded, cycle-safe), with their widgets. */
export function terminalFields(raw: RawPdf, rev: number): Field[] {
  const out: Field[] = [];
  const fields = raw.resolve(get(raw.dict(get(raw.catalog(rev), "AcroForm"), rev), "Fields"), rev);
  if (!Array.isArray(fields)) return out;
  const seen = new Set<number>();
  const walk = (v: PdfValue, prefix: string, ft: string | undefined, depth: number) => {
    if (!isRef(v) || seen.has(v.num) || depth > 32 || out.length >= 5000) return;
    seen.add(v.num);
    const d = raw.dict(v, rev);
    if (!d) return;
    const partial = textOf(get(d, "T"));
    const name = partial ? (prefix ? `${prefix}.${partial}` : partial) : prefix;
    const type = nameOf(get(d, "FT")) ?? ft;
    const kids = raw.resolve(get(d, "Kids"), rev);
    const fieldKids = Array.isArray(kids)
      ? kids.filter((kid) => isRef(kid) && get(raw.dict(kid, rev), "T") !== undefined)
      : [];
    if (Array.isArray(kids) && fieldKids.length > 0) {
      for (const kid of fieldKids) walk(kid, name, type, depth + 1);
      return;
    }
    const widgets = Array.isArray(kids) ? kids.flatMap((kid) => (isRef(kid) ? [kid.num] : [])) : [];
    if (nameOf(get(d, "Subtype")) === "Widget" || widgets.length === 0) widgets.push(v.num);
    out.push({ num: v.num, dict: d, name: name || `object ${v.num}`, isSignature: type === "Sig", widgets });
  };
  for (const f of fields.slice(0, 5000)) walk(f, "", undefined, 0);
  return out;
}

function fieldValue(raw: RawPdf, d: PdfDict, rev: number): string | undefined {
  const v = raw.resolve(get(d, "V"), rev);
  if (v === undefined || v === null) return undefined;
  const t = textOf(v);
  if (t !== undefined) return t;
  if (isName(v)) return v.name;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return v.map((x) => textOf(x) ?? nameOf(x) ?? String(x)).join(", ");
  return undefined;
}

function widgetPages(raw: RawPdf, pages: PageInfo[], rev: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const pg of pages) for (const n of annotRefs(raw, pg, rev)) out.set(n, pg.number);
  return out;
}

/** diffRevision, computed once per file and revision (pdf.revisions and signature.pdf share it). */
export const cachedDiff = perRevision(diffRevision);
