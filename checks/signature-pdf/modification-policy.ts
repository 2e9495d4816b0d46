import { perRevision } from "../../document/pdf-raw/cache.js";
import type { RawPdf } from "../../document/pdf-raw/document.js";
import {
  canonical,
  dictOf,
  get,
  isDict,
  isName,
  isRef,
  isStream,
  nameOf,
  numberOf,
  type PdfDict,
  type PdfValue,
  textOf,
} from "../../document/pdf-raw/objects.js";
import { cachedReferenceIndex, type Usage } from "../../document/pdf-raw/references.js";

/**
 * What one incremental update did to a signed document, judged deny-by-default the way pyHanko's
 * difference analysis does (ARCHITECTURE.md, "Signature policy"): every object the update writes must be
 * explained by a rule, and an object that already existed may only be overwritten when *every* place the
 * previous revision used it from is one the rule vouches for. So a form-field appearance stream may be
 * redrawn when only its widget shows it, but not when the catalog, the trailer, a page or another
 * annotation also uses it ("sneaky" updates that change what a page shows under the cover of form
 * filling). Rules, and the DocMDP level each needs:
 *   level 1  validation data (DSS/VRI), document timestamps and invisible signature fields, metadata
 *            (Info, XMP), catalog /Extensions, /MarkInfo, /Version; objects nothing refers to
 *   level 2  signing an existing or new signature field, filling in form fields (value, appearance),
 *            the form's default resources
 *   level 3  adding, changing or removing annotations other than form widgets
 * Everything else — page content, page properties, pages added or removed, other catalog or trailer
 * entries, deleted objects, fields added (other than signature fields) or removed, changes to a field
 * beyond its value, an existing signature's value replaced — is a problem at every level.
 */

export type Level = 0 | 1 | 2 | 3;

export interface RevisionProblem {
  /** What is not permitted, as a sentence fragment naming the objects. */
  reason: string;
  objects: number[];
  /** No rule explains the objects at all (a caller may describe them better by what they are). */
  unexplained?: boolean;
}

export interface RevisionReview {
  /** 0-based index of the reviewed (later) revision. */
  revision: number;
  /** The level the permitted changes need (0: the update changes nothing that matters). */
  level: Level;
  /** Objects approved, with the level their approval needs (for describing the changes). */
  approved: Map<number, Level>;
  /** Changes no rule permits, at any level. */
  problems: RevisionProblem[];
  /** Fully qualified names of the form fields whose value or appearance the update changed. */
  changedFields: string[];
  /** The previous revision was too large to index completely: the review cannot be relied on. */
  incomplete?: boolean;
}

const ROOT_EXEMPT = new Set(["AcroForm", "DSS", "Extensions", "Metadata", "MarkInfo", "Version"]);
const ACROFORM_EXEMPT = new Set(["Fields", "DR", "DA", "Q", "NeedAppearances"]);
const ALWAYS_MODIFIABLE = new Set(["Ff", "Type"]);
const VALUE_UPDATE_KEYS = new Set([...ALWAYS_MODIFIABLE, "AP", "AS", "V", "F", "DA", "Q"]);
const TRAILER_EXEMPT = new Set([
  "Size",
  "Prev",
  "ID",
  "XRefStm",
  "Info",
  "Root",
  // Keys of a cross-reference stream's dictionary, which is the trailer of such a revision.
  "Type",
  "W",
  "Index",
  "Filter",
  "DecodeParms",
  "Length",
]);
const DSS_KEYS = new Set(["Type", "VRI", "Certs", "CRLs", "OCSPs"]);
const VRI_ENTRY_KEYS = new Set(["Type", "TU", "TS", "Cert", "CRL", "OCSP"]);
/** Where a form field or widget may be referred to from (by the key path of the usage). */
const FIELD_CONTEXTS = new Set(["Fields[]", "Kids[]", "Annots[]", "Parent", "Obj", "CO[]"]);
/** Where an annotation may be referred to from. */
const ANNOT_CONTEXTS = new Set(["Annots[]", "Popup", "IRT", "Parent", "Obj"]);
const MAX_FIELDS = 5000;

interface Approval {
  level: Level;
  blanket: boolean;
  /** Exact usages cleared: `${from}|${path}`. */
  edges: Set<string>;
  /** Usage key paths cleared from wherever they come. */
  paths: Set<string>;
}

interface FieldInfo {
  num: number;
  dict: PdfDict;
  name: string;
  type: string | undefined;
  /** Widget annotations (kids without /T, or the field itself when merged). */
  widgets: number[];
  terminal: boolean;
}

function listFields(raw: RawPdf, rev: number): Map<string, FieldInfo> {
  const out = new Map<string, FieldInfo>();
  const fields = raw.resolve(get(raw.dict(get(raw.catalog(rev), "AcroForm"), rev), "Fields"), rev);
  if (!Array.isArray(fields)) return out;
  const seen = new Set<number>();
  const walk = (v: PdfValue, prefix: string, ft: string | undefined, depth: number) => {
    if (!isRef(v) || seen.has(v.num) || depth > 32 || out.size >= MAX_FIELDS) return;
    seen.add(v.num);
    const d = raw.dict(v, rev);
    if (!d) return;
    const partial = textOf(get(d, "T"));
    const name = partial === undefined ? prefix : prefix ? `${prefix}.${partial}` : partial;
    const type = nameOf(get(d, "FT")) ?? ft;
    const kids = raw.resolve(get(d, "Kids"), rev);
    const kidRefs = Array.isArray(kids) ? kids.filter(isRef) : [];
    const fieldKids = kidRefs.filter((k) => get(raw.dict(k, rev), "T") !== undefined);
    const widgetKids = kidRefs.filter((k) => get(raw.dict(k, rev), "T") === undefined).map((k) => k.num);
    const terminal = fieldKids.length === 0;
    const widgets = terminal && widgetKids.length === 0 ? [v.num] : widgetKids;
    out.set(name || `object ${v.num}`, {
      num: v.num,
      dict: d,
      name: name || `object ${v.num}`,
      type,
      widgets,
      terminal,
    });
    for (const kid of fieldKids) walk(kid, name, type, depth + 1);
  };
  for (const f of fields.slice(0, MAX_FIELDS)) walk(f, "", undefined, 0);
  return out;
}

function isVisible(raw: RawPdf, rev: number, nums: number[]): boolean {
  return nums.some((n) => {
    const r = raw.resolve(get(raw.dict({ kind: "ref", num: n, gen: 0 }, rev), "Rect"), rev);
    if (!Array.isArray(r) || r.length !== 4) return false;
    const [x1, y1, x2, y2] = r.map((x) => numberOf(x) ?? 0) as [number, number, number, number];
    return Math.abs(x1 - x2) * Math.abs(y1 - y2) > 0;
  });
}

export function reviewRevision(raw: RawPdf, k: number): RevisionReview {
  const p = k - 1;
  const rev = raw.revisions[k];
  if (!rev || p < 0) throw new RangeError(`revision ${k} has no predecessor`);
  const digest = (s: Parameters<RawPdf["streamDigest"]>[0]) => raw.streamDigest(s);
  const canon = (v: PdfValue | undefined) => (v === undefined ? "∅" : canonical(v, digest));
  const problems: RevisionProblem[] = [];
  const problem = (reason: string, objects: number[] = [], unexplained = false) =>
    problems.push({ reason, objects, ...(unexplained ? { unexplained } : {}) });
  const changedFields = new Set<string>();

  // ---- what the update wrote ------------------------------------------------------------------
  const exists = (num: number, r: number) => {
    if (!raw.locate(num, r)) return false;
    const v = raw.object(num, r);
    return v !== undefined && v !== null;
  };
  const old = cachedReferenceIndex(raw, p);
  const added = new Set<number>();
  const overwritten = new Set<number>();
  for (const [num, e] of rev.entries) {
    if (num === 0) continue;
    if (e.type === "free") {
      if (exists(num, p)) problem(`${objWords(raw, num, p)} was deleted`, [num]);
      continue;
    }
    const after = raw.object(num, k);
    if (!exists(num, p)) {
      const t = nameOf(get(dictOf(after ?? undefined), "Type"));
      if ((t === "XRef" || t === "ObjStm") && !old.usages.has(num)) continue;
      added.add(num);
      // An object the earlier revision already referred to (before it existed) changes what that
      // revision showed: it needs clearing like an overwrite.
      if (old.usages.has(num)) overwritten.add(num);
    } else if (canon(raw.object(num, p) ?? undefined) !== canon(after ?? undefined)) overwritten.add(num);
  }

  // ---- approvals ------------------------------------------------------------------------------
  const approvals = new Map<number, Approval>();
  const approve = (
    num: number,
    level: Level,
    how: { blanket?: boolean; edge?: [number | "trailer", string]; paths?: Set<string> } = {},
  ) => {
    let a = approvals.get(num);
    if (!a) {
      a = { level, blanket: false, edges: new Set(), paths: new Set() };
      approvals.set(num, a);
    }
    a.level = Math.max(a.level, level) as Level;
    if (how.blanket) a.blanket = true;
    if (how.edge) a.edges.add(`${how.edge[0]}|${how.edge[1]}`);
    for (const x of how.paths ?? []) a.paths.add(x);
  };
  /** Approves the objects this update added that `v` reaches through added objects (pyHanko's new dependencies). */
  const approveNew = (v: PdfValue | undefined, level: Level, depth = 0) => {
    if (v === undefined || v === null || depth > 64) return;
    if (isRef(v)) {
      if (!added.has(v.num) || overwritten.has(v.num)) return;
      if (approvals.get(v.num)?.level === level) return;
      approve(v.num, level);
      approveNew(raw.object(v.num, k) ?? undefined, level, depth + 1);
    } else if (Array.isArray(v)) for (const x of v) approveNew(x, level, depth + 1);
    else if (isDict(v) || isStream(v))
      for (const x of (isStream(v) ? v.dict : v).map.values()) approveNew(x, level, depth + 1);
  };
  /** approveNew, and objects overwritten along the way when reached through exactly this usage. */
  const approveTree = (
    v: PdfValue | undefined,
    from: number | "trailer",
    path: string,
    level: Level,
    depth = 0,
  ) => {
    if (v === undefined || v === null || depth > 32) return;
    if (isRef(v)) {
      if (overwritten.has(v.num)) {
        approve(v.num, level, { edge: [from, path] });
        approveTree(raw.object(v.num, k) ?? undefined, v.num, "", level, depth + 1);
      } else approveNew(v, level);
    } else if (Array.isArray(v)) for (const x of v) approveTree(x, from, `${path}[]`, level, depth + 1);
    else if (isDict(v) || isStream(v))
      for (const [key, x] of (isStream(v) ? v.dict : v).map)
        approveTree(x, from, path ? `${path}/${key}` : key, level, depth + 1);
  };
  const diffKeys = (a: PdfDict | undefined, b: PdfDict | undefined, exempt: Set<string>) => {
    const keys = new Set([...(a?.map.keys() ?? []), ...(b?.map.keys() ?? [])]);
    return [...keys].filter((key) => !exempt.has(key) && canon(a?.map.get(key)) !== canon(b?.map.get(key)));
  };

  // ---- trailer and catalog --------------------------------------------------------------------
  const tOld = raw.trailer(p);
  const tNew = raw.trailer(k);
  const rootOld = get(tOld, "Root");
  const rootNew = get(tNew, "Root");
  if (!isRef(rootNew) || !isRef(rootOld) || rootNew.num !== rootOld.num)
    problem(
      "the update replaces the document catalog (the trailer's /Root)",
      isRef(rootNew) ? [rootNew.num] : [],
    );
  const trailerKeys = diffKeys(tOld, tNew, TRAILER_EXEMPT);
  if (trailerKeys.length)
    problem(`the update changes the file trailer (${trailerKeys.map((x) => `/${x}`).join(", ")})`);
  approveTree(get(tNew, "Info"), "trailer", "Info", 1);

  const catNum = isRef(rootNew) ? rootNew.num : -1;
  const catOld = raw.catalog(p);
  const catNew = raw.catalog(k);
  if (overwritten.has(catNum)) {
    const keys = diffKeys(catOld, catNew, ROOT_EXEMPT);
    if (keys.length)
      problem(`document catalog entries ${keys.map((x) => `/${x}`).join(", ")} changed`, [catNum]);
    approve(catNum, 1, { blanket: true });
  }
  for (const key of ["Extensions", "MarkInfo", "Metadata"]) approveTree(get(catNew, key), catNum, key, 1);

  // ---- document security store ----------------------------------------------------------------
  const dssOld = raw.dict(get(catOld, "DSS"), p);
  const dssNew = raw.dict(get(catNew, "DSS"), k);
  if (dssOld && !dssNew) problem("the signature validation data (DSS) was removed", [catNum]);
  if (dssNew) {
    const odd = [...dssNew.map.keys()].filter((x) => !DSS_KEYS.has(x));
    if (odd.length) problem(`the DSS carries unexpected entries (${odd.map((x) => `/${x}`).join(", ")})`);
    const vriOld = raw.dict(get(dssOld, "VRI"), p);
    const vriNew = raw.dict(get(dssNew, "VRI"), k);
    for (const [key, v] of vriOld?.map ?? []) {
      if (canon(v) !== canon(vriNew?.map.get(key)))
        problem(`the DSS's validation data for signature ${key} was changed or removed`);
    }
    for (const [key, v] of vriNew?.map ?? []) {
      if (vriOld?.map.has(key)) continue;
      if (!/^[A-Fa-f0-9]{40}$/.test(key)) problem(`the DSS has a malformed VRI entry (/${key})`);
      const entry = raw.dict(v, k);
      const bad = entry
        ? [...entry.map.keys()].filter((x) => !VRI_ENTRY_KEYS.has(x))
        : ["(not a dictionary)"];
      if (bad.length) problem(`a VRI entry of the DSS carries unexpected entries (${bad.join(", ")})`);
    }
    approveTree(get(catNew, "DSS"), catNum, "DSS", 1);
  }

  // ---- the form -------------------------------------------------------------------------------
  const afOldV = get(catOld, "AcroForm");
  const afNewV = get(catNew, "AcroForm");
  const afOld = raw.dict(afOldV, p);
  const afNew = raw.dict(afNewV, k);
  if (afOld && !afNew) problem("the form (AcroForm) was removed", [catNum]);
  const newSigWidgets = new Map<number, Level>();
  if (afNew) {
    const [afFrom, afPath]: [number, string] = isRef(afNewV) ? [afNewV.num, ""] : [catNum, "AcroForm"];
    if (isRef(afNewV)) {
      if (overwritten.has(afNewV.num)) approve(afNewV.num, 1, { edge: [catNum, "AcroForm"] });
      else approveNew(afNewV, 1);
    }
    if (afOld) {
      const keys = diffKeys(afOld, afNew, ACROFORM_EXEMPT);
      if (keys.length)
        problem(
          `the form definition's ${keys.map((x) => `/${x}`).join(", ")} changed`,
          isRef(afNewV) ? [afNewV.num] : [catNum],
        );
    }
    const sub = (key: string) => (afPath ? `${afPath}/${key}` : key);
    const fieldsV = get(afNew, "Fields");
    if (isRef(fieldsV)) {
      if (overwritten.has(fieldsV.num)) approve(fieldsV.num, 1, { edge: [afFrom, sub("Fields")] });
      else approveNew(fieldsV, 1);
    }
    approveTree(get(afNew, "DR"), afFrom, sub("DR"), 2);
    reviewFields();
  }

  function appearanceUpdate(num: number, before: PdfDict, after: PdfDict, level: Level, label: string) {
    const apOldRaw = get(before, "AP");
    const apNewRaw = get(after, "AP");
    if (apNewRaw === undefined) {
      if (apOldRaw !== undefined) problem(`the appearance of ${label} was removed`, [num]);
      return;
    }
    const apNew = raw.dict(apNewRaw, k);
    if (!apNew) {
      problem(`the appearance entry of ${label} is not a dictionary`, [num]);
      return;
    }
    const apOld = raw.dict(apOldRaw, p);
    const streamsTouched = ["N", "R", "D"].some((key) => {
      const refs: number[] = [];
      collectRefs(get(apOld, key), refs);
      return refs.some((n) => overwritten.has(n));
    });
    const apChanged =
      canon(apOldRaw) !== canon(apNewRaw) ||
      (isRef(apOldRaw) && overwritten.has(apOldRaw.num)) ||
      streamsTouched;
    if (!apChanged) return;
    if (isRef(apOldRaw)) {
      const uses = distinctUsages(old.usages.get(apOldRaw.num) ?? []);
      if (uses.length > 1)
        problem(
          `the appearance of ${label} was changed, but its appearance dictionary (object ${apOldRaw.num}) is also used by ${uses
            .filter((u) => !(u.from === num && u.path === "AP"))
            .map((u) => usageWords(raw, u, p))
            .join(", ")}`,
          [apOldRaw.num],
        );
      if (isRef(apNewRaw) && apNewRaw.num === apOldRaw.num && overwritten.has(apOldRaw.num))
        approve(apOldRaw.num, level, { edge: [num, "AP"] });
    }
    const [from, base]: [number, string] = isRef(apOldRaw) ? [apOldRaw.num, ""] : [num, "AP"];
    for (const key of ["N", "R", "D"]) {
      const vNew = get(apNew, key);
      approveNew(vNew, level);
      // Appearance streams redrawn in place: only through this very entry (pyHanko's in-place update).
      const path = base ? `${base}/${key}` : key;
      const vOld = get(apOld, key);
      const inPlace = (o: PdfValue | undefined, n: PdfValue | undefined, f: number, pth: string) => {
        if (isRef(o) && isRef(n) && o.num === n.num && overwritten.has(n.num)) {
          approve(n.num, level, { edge: [f, pth] });
          approveNew(raw.object(n.num, k) ?? undefined, level);
        }
      };
      inPlace(vOld, vNew, from, path);
      const subOld = raw.dict(vOld, p);
      const subNew = raw.dict(vNew, k);
      if (subOld && subNew && !isStream(raw.resolve(vNew, k))) {
        // An appearance sub-dictionary of states (/On, /Off).
        const [sf, sp]: [number, string] =
          isRef(vOld) && isRef(vNew) && vOld.num === vNew.num ? [vOld.num, ""] : [from, path];
        if (isRef(vOld) && isRef(vNew) && vOld.num === vNew.num && overwritten.has(vNew.num))
          approve(vNew.num, level, { edge: [from, path] });
        for (const [state, sv] of subNew.map)
          inPlace(subOld.map.get(state), sv, sf, sp ? `${sp}/${state}` : state);
      }
    }
  }

  function reviewFields() {
    const before = listFields(raw, p);
    const after = listFields(raw, k);
    for (const [name, was] of before)
      if (!after.has(name)) problem(`form field "${name}" was removed`, [was.num]);
    for (const [name, f] of after) {
      const was = before.get(name);
      const isSig = f.type === "Sig";
      if (!was) {
        if (!isSig) {
          problem(`form field "${name}" was added`, [f.num]);
          continue;
        }
        // A new signature field: the field, its widgets and their appearances, and its value.
        const visible = isVisible(raw, k, f.widgets);
        const level: Level = visible ? 2 : 1;
        approveNew({ kind: "ref", num: f.num, gen: 0 }, level);
        if (overwritten.has(f.num))
          problem(`new signature field "${name}" reuses existing object ${f.num}`, [f.num]);
        for (const key of ["AP", "Lock", "SV", "Kids"]) approveNew(get(f.dict, key), 2);
        for (const w of f.widgets) {
          approveNew({ kind: "ref", num: w, gen: 0 }, level);
          approveNew(get(raw.dict({ kind: "ref", num: w, gen: 0 }, k), "AP"), 2);
          newSigWidgets.set(w, level);
        }
        signatureValue(f, visible);
        if (visible) changedFields.add(name);
        continue;
      }
      if (was.type !== f.type) {
        problem(`form field "${name}" changed type`, [f.num]);
        continue;
      }
      const fieldTouched = overwritten.has(f.num);
      if (isSig) {
        const wasSigned = get(was.dict, "V") !== undefined;
        const nowSigned = get(f.dict, "V") !== undefined;
        if (!wasSigned && nowSigned) {
          const keys = diffKeys(was.dict, f.dict, VALUE_UPDATE_KEYS);
          if (keys.length)
            problem(
              `signature field "${name}" changed beyond being signed (${keys.map((x) => `/${x}`).join(", ")})`,
              [f.num],
            );
          if (fieldTouched) approve(f.num, 1, { paths: FIELD_CONTEXTS });
          appearanceUpdate(f.num, was.dict, f.dict, 2, `signature field "${name}"`);
          signatureValue(f, isVisible(raw, k, f.widgets));
          changedFields.add(name);
        } else {
          const keys = diffKeys(was.dict, f.dict, ALWAYS_MODIFIABLE);
          if (keys.length)
            problem(
              wasSigned && keys.includes("V")
                ? `the value of signature field "${name}" was ${nowSigned ? "replaced" : "removed"} after it was signed`
                : `signature field "${name}" changed (${keys.map((x) => `/${x}`).join(", ")})`,
              [f.num],
            );
          if (fieldTouched) approve(f.num, 1, { paths: FIELD_CONTEXTS });
        }
      } else if (fieldTouched) {
        const keys = diffKeys(was.dict, f.dict, VALUE_UPDATE_KEYS);
        if (keys.length)
          problem(`form field "${name}" changed beyond its value (${keys.map((x) => `/${x}`).join(", ")})`, [
            f.num,
          ]);
        approve(f.num, 2, { paths: FIELD_CONTEXTS });
        appearanceUpdate(f.num, was.dict, f.dict, 2, `form field "${name}"`);
        if (canon(get(was.dict, "V")) !== canon(get(f.dict, "V"))) approveNew(get(f.dict, "V"), 2);
        changedFields.add(name);
      }
      if (!f.terminal) continue;
      // Separate widget annotations of an existing field.
      const oldWidgets = new Set(was.widgets);
      for (const w of f.widgets) {
        if (w === f.num) continue;
        if (!oldWidgets.has(w)) {
          problem(`a widget (object ${w}) was added to form field "${name}"`, [w]);
          continue;
        }
        if (!overwritten.has(w)) continue;
        const wOld = raw.dict({ kind: "ref", num: w, gen: 0 }, p);
        const wNew = raw.dict({ kind: "ref", num: w, gen: 0 }, k);
        if (!wOld || !wNew) continue;
        const keys = diffKeys(wOld, wNew, VALUE_UPDATE_KEYS);
        if (keys.length)
          problem(
            `a widget of form field "${name}" changed beyond its appearance (${keys.map((x) => `/${x}`).join(", ")})`,
            [w],
          );
        const level: Level = diffKeys(wOld, wNew, ALWAYS_MODIFIABLE).length ? 2 : 1;
        approve(w, level, { paths: FIELD_CONTEXTS });
        appearanceUpdate(w, wOld, wNew, 2, `form field "${name}"`);
        if (level === 2) changedFields.add(name);
      }
      for (const w of was.widgets)
        if (!f.widgets.includes(w))
          problem(`a widget (object ${w}) of form field "${name}" was removed`, [w]);
    }
  }

  function signatureValue(f: FieldInfo, visible: boolean) {
    const v = get(f.dict, "V");
    if (!isRef(v)) {
      problem(`the value of signature field "${f.name}" is not an indirect signature dictionary`, [f.num]);
      return;
    }
    const sig = raw.dict(v, k);
    const level: Level = isName(get(sig, "Type"), "DocTimeStamp") && !visible ? 1 : 2;
    if (overwritten.has(v.num))
      problem(`signature field "${f.name}" was given an existing object (${v.num}) as its signature`, [
        v.num,
      ]);
    approveNew(v, level);
  }

  // ---- pages and annotations ------------------------------------------------------------------
  const pagesOld = raw.pages(p);
  const pagesNew = raw.pages(k);
  const pageKey = (pg: { ref?: { num: number } }) => pg.ref?.num ?? -1;
  if (
    pagesOld.length !== pagesNew.length ||
    pagesOld.some((pg, i) => pageKey(pg) !== pageKey(pagesNew[i] as (typeof pagesNew)[number]))
  )
    problem(
      "pages were added, removed, replaced or reordered",
      pagesNew.flatMap((pg) => (pg.ref ? [pg.ref.num] : [])),
    );
  const annotRefs = (v: PdfValue | undefined, r: number): number[] => {
    const a = raw.resolve(v, r);
    return Array.isArray(a) ? a.slice(0, 10_000).flatMap((x) => (isRef(x) ? [x.num] : [])) : [];
  };
  const isWidget = (n: number, r: number) => {
    const d = raw.dict({ kind: "ref", num: n, gen: 0 }, r);
    return nameOf(get(d, "Subtype")) === "Widget" || get(d, "FT") !== undefined;
  };
  const removedLevels: Level[] = [];
  pagesNew.forEach((pg, i) => {
    const before = pagesOld[i];
    if (!before || !pg.ref || pageKey(before) !== pg.ref.num) return;
    const num = pg.ref.num;
    const annotsV = get(pg.dict, "Annots");
    const annotsTouched = overwritten.has(num) || (isRef(annotsV) && overwritten.has(annotsV.num));
    const aOld = annotRefs(get(before.dict, "Annots"), p);
    const aNew = annotRefs(annotsV, k);
    let level: Level = 1;
    if (annotsTouched) {
      const setOld = new Set(aOld);
      const setNew = new Set(aNew);
      for (const n of aOld) {
        if (setNew.has(n)) continue;
        if (isWidget(n, p))
          problem(`a form field widget (object ${n}) was removed from page ${pg.number}`, [n]);
        else level = 3;
      }
      for (const n of aNew) {
        if (setOld.has(n)) continue;
        const sigLevel = newSigWidgets.get(n);
        if (sigLevel !== undefined) level = Math.max(level, sigLevel) as Level;
        else if (isWidget(n, k))
          problem(
            `a form field widget (object ${n}) that belongs to no new signature field was added to page ${pg.number}`,
            [n],
          );
        else {
          level = 3;
          if (overwritten.has(n)) approve(n, 3, { paths: ANNOT_CONTEXTS });
          approveNew({ kind: "ref", num: n, gen: 0 }, 3);
          approveNew(raw.object(n, k) ?? undefined, 3);
        }
      }
      if (level === 3) removedLevels.push(3);
    }
    if (overwritten.has(num)) {
      const keys = diffKeys(before.dict, pg.dict, new Set(["Annots"]));
      if (keys.length) problem(`page ${pg.number}'s ${keys.map((x) => `/${x}`).join(", ")} changed`, [num]);
      // Pages are referred to from everywhere (/P, destinations, the structure tree): blanket approval
      // once nothing but /Annots changed, as pyHanko does.
      approve(num, level, { blanket: true });
    }
    if (isRef(annotsV)) {
      if (overwritten.has(annotsV.num)) approve(annotsV.num, level, { edge: [num, "Annots"] });
      else approveNew(annotsV, level);
    }
    // Existing annotations (not widgets) changed in place: level 3.
    for (const n of aNew) {
      if (!overwritten.has(n) || added.has(n) || isWidget(n, k) || approvals.has(n)) continue;
      const dOld = raw.dict({ kind: "ref", num: n, gen: 0 }, p);
      const dNew = raw.dict({ kind: "ref", num: n, gen: 0 }, k);
      if (!dOld || !dNew) continue;
      if (nameOf(get(dOld, "Subtype")) !== nameOf(get(dNew, "Subtype"))) {
        problem(`an annotation (object ${n}) on page ${pg.number} changed its type`, [n]);
        continue;
      }
      approve(n, 3, { paths: ANNOT_CONTEXTS });
      appearanceUpdate(n, dOld, dNew, 3, `an annotation on page ${pg.number}`);
      for (const key of ["Popup", "IRT", "RichText", "Contents"]) approveNew(get(dNew, key), 3);
    }
  });

  // ---- objects nothing refers to --------------------------------------------------------------
  const reached = new Set<number>();
  const reach = (v: PdfValue | undefined, depth = 0) => {
    if (v === undefined || v === null || depth > 64) return;
    if (isRef(v)) {
      if (!added.has(v.num) || reached.has(v.num)) return;
      reached.add(v.num);
      reach(raw.object(v.num, k) ?? undefined, depth + 1);
    } else if (Array.isArray(v)) for (const x of v) reach(x, depth + 1);
    else if (isDict(v) || isStream(v))
      for (const x of (isStream(v) ? v.dict : v).map.values()) reach(x, depth + 1);
  };
  reach(tNew);
  for (const n of overwritten) reach(raw.object(n, k) ?? undefined);
  for (const n of added) if (!reached.has(n) && !overwritten.has(n)) approve(n, 1);

  /**
   * Whether a usage is one of the context key paths (by its last key: "Fields[]" matches a direct
   * "AcroForm/Fields[]" too); an element of an indirect array counts by the key the array is used at.
   */
  function inContext(u: Usage, contexts: Set<string>): boolean {
    if (u.from === "trailer" || contexts.size === 0) return false;
    const last = u.path.split("/").at(-1) ?? "";
    if (contexts.has(last)) return true;
    if (u.path !== "[]") return false;
    return (old.usages.get(u.from) ?? []).some(
      (x) => x.from !== "trailer" && contexts.has(`${x.path.split("/").at(-1)}[]`),
    );
  }

  // ---- everything written must be explained ---------------------------------------------------
  let level: Level = removedLevels.length ? 3 : 0;
  const approved = new Map<number, Level>();
  for (const n of [...added, ...overwritten]) {
    const a = approvals.get(n);
    const previous = dictOf(raw.object(n, p) ?? undefined);
    if (
      !a &&
      !added.has(n) &&
      (isName(get(previous, "Type"), "Sig") ||
        isName(get(previous, "Type"), "DocTimeStamp") ||
        get(previous, "ByteRange") !== undefined)
    ) {
      problem(`the signature dictionary of an earlier signature (object ${n}) was rewritten`, [n]);
      continue;
    }
    if (!a) {
      problem(
        `${objWords(raw, n, k)} was ${overwritten.has(n) && !added.has(n) ? "overwritten" : "added"} by an update no rule permits`,
        [n],
        true,
      );
      continue;
    }
    if (overwritten.has(n) && !a.blanket) {
      const left = distinctUsages(old.usages.get(n) ?? []).filter(
        (u) => !a.edges.has(`${u.from}|${u.path}`) && !inContext(u, a.paths),
      );
      if (left.length) {
        problem(
          `${objWords(raw, n, p)} was overwritten, but it is also used by ${left
            .slice(0, 4)
            .map((u) => usageWords(raw, u, p))
            .join(", ")}, which the change does not account for`,
          [n],
        );
        continue;
      }
      if (!old.complete)
        problem(
          `${objWords(raw, n, p)} was overwritten, and the document is too large to tell where else it is used`,
          [n],
        );
    }
    approved.set(n, a.level);
    level = Math.max(level, a.level) as Level;
  }
  return {
    revision: k,
    level,
    approved,
    problems,
    changedFields: [...changedFields],
    ...(old.complete ? {} : { incomplete: true }),
  };
}

function collectRefs(v: PdfValue | undefined, out: number[], depth = 0) {
  if (v === undefined || v === null || depth > 4) return;
  if (isRef(v)) out.push(v.num);
  else if (Array.isArray(v)) for (const x of v) collectRefs(x, out, depth + 1);
  else if (isDict(v)) for (const x of v.map.values()) collectRefs(x, out, depth + 1);
}

function distinctUsages(list: Usage[]): Usage[] {
  const seen = new Map<string, Usage>();
  for (const u of list) seen.set(`${u.from}|${u.path}`, u);
  return [...seen.values()];
}

function objWords(raw: RawPdf, num: number, rev: number): string {
  const d = dictOf(raw.object(num, rev) ?? undefined);
  const t = nameOf(get(d, "Type")) ?? nameOf(get(d, "Subtype"));
  return `object ${num}${t ? ` (${t})` : ""}`;
}

function usageWords(raw: RawPdf, u: Usage, rev: number): string {
  if (u.from === "trailer") return `the file trailer (/${u.path})`;
  const catalog = get(raw.trailer(rev), "Root");
  if (isRef(catalog) && catalog.num === u.from) return `the document catalog (/${u.path})`;
  const page = raw.pages(rev).find((pg) => pg.ref?.num === u.from);
  if (page) return `page ${page.number} (/${u.path})`;
  return `${objWords(raw, u.from, rev)} (/${u.path})`;
}

/** reviewRevision, computed once per file and revision. */
export const cachedReview = perRevision(reviewRevision);
