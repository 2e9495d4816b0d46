import { createHash } from "node:crypto";
import { z } from "zod";
import type { CheckResult, Finding } from "./check-result.js";
import { type BoxTuple, PageGeometry, toFraction } from "./page-geometry.js";

/**
 * The evidence a reviewer sees (docs/evidence.md): every finding as data with a stable id, its place on the
 * page in the page's units and as fractions of the displayed page, and its changed value (before → after);
 * findings that describe the same altered value or region merged into numbered groups with a one-line
 * headline; and the pages that carry findings with their rendered images. Pure: the check step builds it
 * with the document at hand (page geometry, labels beside a value) and stores it with the page images; the
 * API serves it; the agent's reasoning leads with the same groups.
 */

/** Bounds of what is stored and served (so the evidence endpoint answers in bounded size). */
export const EVIDENCE_LIMITS = {
  /** Findings listed (strongest first); `findingsTotal` counts them all. */
  maxFindings: 400,
  /** Groups listed (strongest first); `groupsTotal` counts them all. */
  maxGroups: 60,
  /** Pages with findings listed (rendered or not). */
  maxPages: 500,
  /** Characters of a finding's message and of a headline. */
  maxMessageChars: 400,
  maxHeadlineChars: 200,
  /** Characters of one value in `evidence`, `before` or `after`. */
  maxValueChars: 200,
  /** Serialised bytes of one finding's `evidence`. */
  maxEvidenceBytes: 1024,
  /** Members of a group named by id and by check, and regions drawn per group. */
  maxGroupMembers: 20,
  maxGroupChecks: 10,
  maxGroupRegions: 40,
  /** Findings considered for merging by place (beyond them, findings group by check and code only). */
  maxPlacedForMerging: 5000,
} as const;

export const EvidenceFinding = z.object({
  /** `fnd-` + 16 hex: from the detection, check, code and place (and the occurrence among equals). */
  id: z.string(),
  checkId: z.string(),
  code: z.string(),
  severity: z.number().int().min(0).max(10),
  message: z.string(),
  page: z.number().int().positive().nullable(),
  /** In the page's units (PDF points, origin bottom left; image pixels, origin top left). */
  bbox: z.array(z.number()).length(4).nullable(),
  /** [left, top, right, bottom] as fractions of the displayed page, origin top left. */
  bboxFraction: z.array(z.number()).length(4).nullable(),
  evidence: z.record(z.string(), z.unknown()).nullable(),
  before: z.string().nullable(),
  after: z.string().nullable(),
  /** The number of the group the finding belongs to (the number drawn on the page). */
  group: z.number().int().positive().nullable(),
});
export type EvidenceFinding = z.infer<typeof EvidenceFinding>;

export const EvidenceRegion = z.object({
  page: z.number().int().positive(),
  bbox: z.array(z.number()).length(4),
  bboxFraction: z.array(z.number()).length(4).nullable(),
});
export type EvidenceRegion = z.infer<typeof EvidenceRegion>;

export const EvidenceGroup = z.object({
  /** 1-based, strongest first: the number drawn beside its boxes on the page images. */
  number: z.number().int().positive(),
  /** `grp-` + 16 hex, from the detection and its members. */
  id: z.string(),
  headline: z.string(),
  severity: z.number().int().min(0).max(10),
  /** Pages it is on, ascending (empty for document-wide findings). */
  pages: z.array(z.number().int().positive()),
  /** Each place it is on (union of its members' boxes there), at most maxGroupRegions. */
  regions: z.array(EvidenceRegion),
  before: z.string().nullable(),
  after: z.string().nullable(),
  findingIds: z.array(z.string()),
  findingCount: z.number().int().nonnegative(),
  /** The checks that found it (the confirming checks), each code once. */
  checks: z.array(
    z.object({ checkId: z.string(), code: z.string(), severity: z.number().int().min(0).max(10) }),
  ),
});
export type EvidenceGroup = z.infer<typeof EvidenceGroup>;

export const PageImage = z.object({
  /** Object key in the service bucket. */
  key: z.string(),
  widthPx: z.number().int().positive(),
  heightPx: z.number().int().positive(),
  bytes: z.number().int().nonnegative(),
  /** Only for the first-saved image: the 1-based revision it shows. */
  revision: z.number().int().positive().optional(),
});
export type PageImage = z.infer<typeof PageImage>;

export const NOT_RENDERED = ["page_cap", "byte_cap", "time", "error", "unavailable"] as const;

export const EvidencePage = z.object({
  number: z.number().int().positive(),
  /** Size as displayed, in the page's units (points for PDFs, pixels for images); null when unknown. */
  width: z.number().nullable(),
  height: z.number().nullable(),
  rotate: z.number().int(),
  geometry: PageGeometry.nullable(),
  findingCount: z.number().int().nonnegative(),
  groups: z.array(z.number().int().positive()),
  image: PageImage.nullable(),
  /** The page as first saved (earliest revision that parses), for a page an incremental update changed. */
  firstSaved: PageImage.nullable(),
  /** Why the page has no image although it carries findings. */
  notRendered: z.enum(NOT_RENDERED).nullable(),
});
export type EvidencePage = z.infer<typeof EvidencePage>;

export const CheckLine = z.object({
  checkId: z.string(),
  outcome: z.string(),
  severity: z.number().int(),
  summary: z.string(),
  findingCount: z.number().int().nonnegative(),
});
export type CheckLine = z.infer<typeof CheckLine>;

export const RenderInfo = z.object({
  dpi: z.number(),
  maxSidePx: z.number().int(),
  maxImages: z.number().int(),
  maxBytes: z.number().int(),
  images: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  ms: z.number().int().nonnegative(),
  /** What was not rendered and why, in sentences. */
  notes: z.array(z.string()),
});
export type RenderInfo = z.infer<typeof RenderInfo>;

/** What the check step stores at keys.evidence(detection) beside the page images. */
export const EvidenceManifest = z.object({
  version: z.literal(1),
  detection: z.string(),
  contentType: z.string().nullable(),
  pageCount: z.number().int().nonnegative().nullable(),
  findingsTotal: z.number().int().nonnegative(),
  findings: z.array(EvidenceFinding),
  groupsTotal: z.number().int().nonnegative(),
  groups: z.array(EvidenceGroup),
  pages: z.array(EvidencePage),
  checks: z.array(CheckLine),
  render: RenderInfo.nullable(),
});
export type EvidenceManifest = z.infer<typeof EvidenceManifest>;

// ---------------------------------------------------------------------------------------------
// Small values
// ---------------------------------------------------------------------------------------------

export function clip(s: string, max: number): string {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** A copy of a finding's evidence with small values: strings clipped, arrays ≤ 10, depth ≤ 3, ≤ 1 KB. */
export function smallEvidence(e: Finding["evidence"]): Record<string, unknown> | null {
  if (!e) return null;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return clip(v, EVIDENCE_LIMITS.maxValueChars);
    if (typeof v === "number" || typeof v === "boolean" || v === null) return v;
    if (depth >= 3) return typeof v === "object" ? "…" : String(v);
    if (Array.isArray(v)) {
      const items = v.slice(0, 10).map((x) => walk(x, depth + 1));
      return v.length > 10 ? [...items, `… ${v.length - 10} more`] : items;
    }
    if (typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>).slice(0, 20)) {
        if (x !== undefined) out[k] = walk(x, depth + 1);
      }
      return out;
    }
    return String(v);
  };
  const out = walk(e, 0) as Record<string, unknown>;
  const keys = Object.keys(out);
  while (keys.length > 0 && Buffer.byteLength(JSON.stringify(out)) > EVIDENCE_LIMITS.maxEvidenceBytes) {
    delete out[keys.pop() as string];
    out.truncated = true;
  }
  return out;
}

const asText = (v: unknown): string | undefined => {
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(v);
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return (v as string[]).join(" ");
  return undefined;
};

/**
 * The value a finding says was changed, when it says so. The convention for checks (docs/evidence.md): a
 * finding about a changed value puts `before` and `after` (strings) in its evidence. Also read: `hidden` /
 * `shown` (text covered and replaced) and the first edit of `edits` ([{before, after}]).
 */
export function changedValue(f: Finding): { before: string | null; after: string | null } {
  const e = f.evidence ?? {};
  const pick = (b: unknown, a: unknown) => {
    const before = asText(b);
    const after = asText(a);
    if (before === undefined && after === undefined) return undefined;
    if (before !== undefined && after !== undefined && before === after) return undefined;
    return {
      before: before === undefined ? null : clip(before, EVIDENCE_LIMITS.maxValueChars),
      after: after === undefined ? null : clip(after, EVIDENCE_LIMITS.maxValueChars),
    };
  };
  const direct = pick(e.before, e.after);
  if (direct) return direct;
  if (e.hidden !== undefined && e.shown !== undefined) {
    const covered = pick(e.hidden, e.shown);
    if (covered) return covered;
  }
  if (Array.isArray(e.edits)) {
    const edit = (e.edits as Record<string, unknown>[]).find(
      (x) => x && typeof x === "object" && (x.before !== undefined || x.after !== undefined),
    );
    if (edit) {
      const fromEdit = pick(edit.before, edit.after);
      if (fromEdit) return fromEdit;
    }
  }
  return { before: null, after: null };
}

// ---------------------------------------------------------------------------------------------
// Ids
// ---------------------------------------------------------------------------------------------

const hex16 = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 16);

function placeKey(f: Finding): string {
  const box = f.bbox ? f.bbox.map((v) => Math.round(v * 10) / 10).join(",") : "";
  return `${f.page ?? ""}|${box}`;
}

// ---------------------------------------------------------------------------------------------
// Grouping
// ---------------------------------------------------------------------------------------------

interface Item {
  index: number;
  id: string;
  checkId: string;
  finding: Finding;
  severity: number;
  before: string | null;
  after: string | null;
}

const area = (b: readonly number[]) => Math.max(0, b[2]! - b[0]!) * Math.max(0, b[3]! - b[1]!);
const inflate = (b: readonly number[], d: number): BoxTuple => [b[0]! - d, b[1]! - d, b[2]! + d, b[3]! + d];
function overlap(a: readonly number[], b: readonly number[]): number {
  const w = Math.min(a[2]!, b[2]!) - Math.max(a[0]!, b[0]!);
  const h = Math.min(a[3]!, b[3]!) - Math.max(a[1]!, b[1]!);
  return w > 0 && h > 0 ? w * h : 0;
}
export const unionBox = (a: readonly number[], b: readonly number[]): BoxTuple => [
  Math.min(a[0]!, b[0]!),
  Math.min(a[1]!, b[1]!),
  Math.max(a[2]!, b[2]!),
  Math.max(a[3]!, b[3]!),
];
const roundBox = (b: readonly number[]): BoxTuple => b.map((v) => Math.round(v * 100) / 100) as BoxTuple;

/** Boxes further apart than this (page units) never merge; boxes are inflated by it before comparing. */
const NEAR = 1.5;
/** Two boxes describe the same place when their overlap is at least this share of the smaller one. */
const SAME_PLACE_SHARE = 0.25;
/** A box larger than this share of its page is a page-wide finding: it merges only with the same box. */
const PAGE_WIDE_SHARE = 0.3;

class UnionFind {
  private readonly parent: number[];
  constructor(n: number) {
    this.parent = Array.from({ length: n }, (_, i) => i);
  }
  find(i: number): number {
    let r = i;
    while (this.parent[r] !== r) r = this.parent[r] as number;
    while (this.parent[i] !== r) {
      const next = this.parent[i] as number;
      this.parent[i] = r;
      i = next;
    }
    return r;
  }
  join(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
}

/** Where one group of merged findings is: a page and the union of their boxes there. */
interface Place {
  page: number;
  bbox: BoxTuple;
}

interface Draft {
  items: Item[];
  places: Place[];
  before: string | null;
  after: string | null;
  severity: number;
}

export interface EvidenceInput {
  detection: string;
  checks: readonly CheckResult[];
  /** Geometry of the pages findings are on (for fractions); pages without one get no fractions. */
  geometry?: ReadonlyMap<number, PageGeometry>;
  /** The label printed beside a changed value ("Closing balance"), read from the page by the caller. */
  labelOf?: (page: number, bbox: BoxTuple) => string | undefined;
}

export interface BuiltEvidence {
  findings: EvidenceFinding[];
  findingsTotal: number;
  groups: EvidenceGroup[];
  groupsTotal: number;
  /** Group number of every finding id, including the findings beyond the listed ones. */
  groupOf: Map<string, number>;
  /** Places to draw on each page: group number and box in page units. */
  marks: Map<number, { group: number; bbox: BoxTuple }[]>;
  checks: CheckLine[];
}

/** Items of every finding of every check, with their ids (in check order, then finding order). */
function itemsOf(detection: string, checks: readonly CheckResult[]): Item[] {
  const seen = new Map<string, number>();
  const items: Item[] = [];
  for (const check of checks) {
    for (const f of check.findings) {
      const key = `${detection}|${check.checkId}|${f.code}|${placeKey(f)}`;
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      const { before, after } = changedValue(f);
      items.push({
        index: items.length,
        id: `fnd-${hex16(n === 1 ? key : `${key}|${n}`)}`,
        checkId: check.checkId,
        finding: f,
        severity: Math.max(0, Math.min(10, Math.round(f.severity ?? 0))),
        before,
        after,
      });
    }
  }
  return items;
}

const placed = (i: Item) =>
  i.finding.page !== undefined && i.finding.bbox !== undefined && i.finding.bbox.length === 4;

/** Merges findings on the same place of a page, or showing the same changed value on it. */
function mergeByPlace(items: Item[], geometry: EvidenceInput["geometry"]): Item[][] {
  const uf = new UnionFind(items.length);
  const byPage = new Map<number, Item[]>();
  for (const it of items.filter(placed).slice(0, EVIDENCE_LIMITS.maxPlacedForMerging)) {
    const list = byPage.get(it.finding.page as number) ?? [];
    list.push(it);
    byPage.set(it.finding.page as number, list);
  }
  for (const [page, list] of byPage) {
    const g = geometry?.get(page);
    const pageArea = g ? area(g.view) : 0;
    const wide = (b: readonly number[]) => pageArea > 0 && area(b) > PAGE_WIDE_SHARE * pageArea;
    const sorted = [...list].sort((a, b) => (a.finding.bbox?.[0] ?? 0) - (b.finding.bbox?.[0] ?? 0));
    for (let i = 0; i < sorted.length; i++) {
      const a = sorted[i] as Item;
      const ab = inflate(a.finding.bbox as number[], NEAR);
      for (let j = i + 1; j < sorted.length; j++) {
        const b = sorted[j] as Item;
        const bb = inflate(b.finding.bbox as number[], NEAR);
        if (bb[0] > ab[2]) break;
        if (wide(a.finding.bbox as number[]) || wide(b.finding.bbox as number[])) {
          if (placeKey(a.finding) === placeKey(b.finding)) uf.join(a.index, b.index);
          continue;
        }
        const share = overlap(ab, bb) / Math.max(1e-6, Math.min(area(ab), area(bb)));
        if (share >= SAME_PLACE_SHARE) uf.join(a.index, b.index);
      }
    }
    // The same changed value shown on the page, wherever the checks placed it.
    const byAfter = new Map<string, Item>();
    for (const it of list) {
      if (!it.after) continue;
      const first = byAfter.get(it.after);
      if (first) uf.join(first.index, it.index);
      else byAfter.set(it.after, it);
    }
  }
  const sets = new Map<number, Item[]>();
  for (const it of items) {
    const r = uf.find(it.index);
    const list = sets.get(r) ?? [];
    list.push(it);
    sets.set(r, list);
  }
  return [...sets.values()];
}

function draftOf(items: Item[]): Draft {
  const places: Place[] = [];
  for (const it of items) {
    if (!placed(it)) continue;
    const page = it.finding.page as number;
    const box = it.finding.bbox as number[];
    const at = places.find((p) => p.page === page);
    if (at) at.bbox = unionBox(at.bbox, box);
    else places.push({ page, bbox: roundBox(box) });
  }
  const strongest = [...items].sort((a, b) => b.severity - a.severity || a.index - b.index);
  // The changed value the group shows: from its strongest findings that name one, the fullest (a check
  // that compares whole words beats one that saw only the changed glyph).
  const withValue = strongest.filter((i) => i.before !== null || i.after !== null);
  const top = withValue[0]?.severity;
  const length = (i: Item) => (i.before?.length ?? 0) + (i.after?.length ?? 0);
  const valued = withValue
    .filter((i) => i.severity === top)
    .reduce<Item | undefined>((best, i) => (!best || length(i) > length(best) ? i : best), undefined);
  return {
    items,
    places,
    before: valued?.before ?? null,
    after: valued?.after ?? null,
    severity: strongest[0]?.severity ?? 0,
  };
}

/**
 * Findings → groups: first those on the same place of a page (boxes overlapping by a quarter of the smaller)
 * or showing the same changed value; then every group without a changed value merges with the others made
 * of the same check codes ("the same font mix on 31 pages" is one group with 31 places). A group with a
 * changed value stays on its own: each altered value is a headline.
 */
function groupItems(items: Item[], geometry: EvidenceInput["geometry"]): Draft[] {
  const drafts = mergeByPlace(items, geometry).map(draftOf);
  const out: Draft[] = [];
  const byPattern = new Map<string, Draft>();
  for (const d of drafts) {
    if (d.before !== null || d.after !== null) {
      out.push(d);
      continue;
    }
    const key = [...new Set(d.items.map((i) => `${i.checkId}:${i.finding.code}`))].sort().join(" ");
    const known = byPattern.get(key);
    if (!known) {
      byPattern.set(key, d);
      out.push(d);
      continue;
    }
    known.items.push(...d.items);
    known.places.push(...d.places);
    known.severity = Math.max(known.severity, d.severity);
  }
  const firstPlace = (d: Draft) => {
    const p = [...d.places].sort((a, b) => a.page - b.page || b.bbox[3] - a.bbox[3])[0];
    return p ? [p.page, -p.bbox[3]] : [Number.MAX_SAFE_INTEGER, 0];
  };
  return out.sort((a, b) => {
    if (b.severity !== a.severity) return b.severity - a.severity;
    const va = a.after !== null || a.before !== null ? 0 : 1;
    const vb = b.after !== null || b.before !== null ? 0 : 1;
    if (va !== vb) return va - vb;
    const [pa, ya] = firstPlace(a);
    const [pb, yb] = firstPlace(b);
    return (
      (pa as number) - (pb as number) ||
      (ya as number) - (yb as number) ||
      a.items[0]!.index - b.items[0]!.index
    );
  });
}

/**
 * Which findings are about the same value or region (the unit of corroboration in agent/score.ts): for every
 * check, for every finding, a place number shared by the findings whose boxes on one page overlap, or that
 * show the same changed value on it. Findings without a place are each on their own. Unbounded (every
 * finding), unlike the listed groups of buildEvidence.
 */
export function placesOf(checks: readonly CheckResult[], geometry?: EvidenceInput["geometry"]): number[][] {
  const items = itemsOf("", checks);
  const sets = mergeByPlace(items, geometry);
  const placeOf = new Map<number, number>();
  sets.forEach((set, n) => {
    for (const it of set) placeOf.set(it.index, n);
  });
  const out: number[][] = [];
  let i = 0;
  for (const check of checks) out.push(check.findings.map(() => placeOf.get(i++) as number));
  return out;
}

/** "3", "1, 4 and 7", "2–31" (a run), "1–3, 8 and 10–12"; at most 8 parts. */
export function pageList(pages: readonly number[]): string {
  const sorted = [...new Set(pages)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] as number) + 1) j++;
    parts.push(
      j - i >= 2 ? `${sorted[i]}–${sorted[j]}` : j === i ? `${sorted[i]}` : `${sorted[i]}, ${sorted[j]}`,
    );
    i = j + 1;
  }
  const flat = parts.join(", ").split(", ");
  const shown = flat.length > 8 ? [...flat.slice(0, 7), "…"] : flat;
  return shown.length > 1 ? `${shown.slice(0, -1).join(", ")} and ${shown.at(-1)}` : (shown[0] ?? "");
}

const humanCode = (code: string) => {
  const words = code.replace(/[_.-]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** The first sentence of a message without a leading "On page N," (the headline names the page). */
function firstSentence(message: string): string {
  const s = message.replace(/^On page \d+,\s*/i, "").trim();
  const m = /^(.+?[.!?])(\s|$)/.exec(s);
  const one = (m?.[1] ?? s).replace(/[.!?]$/, "");
  return one.charAt(0).toUpperCase() + one.slice(1);
}

function headlineOf(d: Draft, label: string | undefined): string {
  const pages = [...new Set(d.places.map((p) => p.page))].sort((a, b) => a - b);
  const itemPages = [...new Set(d.items.flatMap((i) => (i.finding.page ? [i.finding.page] : [])))];
  const allPages = pages.length > 0 ? pages : itemPages.sort((a, b) => a - b);
  const where =
    allPages.length === 0
      ? ""
      : allPages.length === 1
        ? `page ${allPages[0]}`
        : `pages ${pageList(allPages)}`;
  const q = (s: string) => clip(s, 80);
  if (d.before !== null || d.after !== null) {
    const what = label ? `${label} ` : "";
    const change =
      d.before !== null && d.after !== null
        ? `${q(d.before)} → ${q(d.after)}`
        : d.after !== null
          ? `“${q(d.after)}” added`
          : `“${q(d.before as string)}” removed`;
    return clip(`${what}${change}${where ? `, ${where}` : ""}`, EVIDENCE_LIMITS.maxHeadlineChars);
  }
  const top = [...d.items].sort((a, b) => b.severity - a.severity || a.index - b.index)[0] as Item;
  if (d.items.length > 1 && allPages.length > 1) {
    const codes = [...new Set(d.items.map((i) => i.finding.code))];
    const checks = [...new Set(d.items.map((i) => i.checkId))];
    return clip(
      `${humanCode(top.finding.code)}${codes.length > 1 ? ` (and ${codes.length - 1} related)` : ""} (${checks.join(", ")}) on ${allPages.length} pages: ${pageList(allPages)}`,
      EVIDENCE_LIMITS.maxHeadlineChars,
    );
  }
  const sentence = firstSentence(top.finding.message);
  const many = d.places.length > 1 ? ` (${d.places.length} places)` : "";
  const tail = where && !sentence.includes(where) ? `, ${where}${many}` : many;
  return clip(`${sentence}${tail}`, EVIDENCE_LIMITS.maxHeadlineChars);
}

/**
 * Builds the evidence of a detection from its check results: findings with ids, fractions and changed
 * values, groups with headlines (numbered strongest first), the places to mark on each page, and the
 * per-check lines. Bounded by EVIDENCE_LIMITS whatever the number of findings.
 */
export function buildEvidence(input: EvidenceInput): BuiltEvidence {
  const items = itemsOf(input.detection, input.checks);
  const drafts = groupItems(items, input.geometry);
  const groupOf = new Map<string, number>();
  const marks = new Map<number, { group: number; bbox: BoxTuple }[]>();
  const frac = (page: number, bbox: readonly number[]) => {
    const g = input.geometry?.get(page);
    return g ? (toFraction(g, bbox) ?? null) : null;
  };
  const groups: EvidenceGroup[] = drafts.map((d, i) => {
    const number = i + 1;
    for (const it of d.items) groupOf.set(it.id, number);
    for (const p of d.places) {
      const list = marks.get(p.page) ?? [];
      list.push({ group: number, bbox: p.bbox });
      marks.set(p.page, list);
    }
    const first = d.places[0];
    const label =
      first && (d.before !== null || d.after !== null)
        ? (input.labelOf?.(first.page, first.bbox) ??
          d.items.map((it) => it.finding.evidence?.label).find((l): l is string => typeof l === "string"))
        : undefined;
    const members = [...d.items].sort((a, b) => b.severity - a.severity || a.index - b.index);
    const checks = new Map<string, EvidenceGroup["checks"][number]>();
    for (const it of members) {
      const k = `${it.checkId}:${it.finding.code}`;
      if (!checks.has(k))
        checks.set(k, { checkId: it.checkId, code: it.finding.code, severity: it.severity });
    }
    const pages = [
      ...new Set([
        ...d.places.map((p) => p.page),
        ...d.items.flatMap((it) => (it.finding.page ? [it.finding.page] : [])),
      ]),
    ].sort((a, b) => a - b);
    return {
      number,
      id: `grp-${hex16(`${input.detection}|${members.map((m) => m.id).join(",")}`)}`,
      headline: headlineOf(d, label ? clip(label, 60) : undefined),
      severity: d.severity,
      pages,
      regions: d.places.slice(0, EVIDENCE_LIMITS.maxGroupRegions).map((p) => ({
        page: p.page,
        bbox: p.bbox,
        bboxFraction: frac(p.page, p.bbox),
      })),
      before: d.before,
      after: d.after,
      findingIds: members.slice(0, EVIDENCE_LIMITS.maxGroupMembers).map((m) => m.id),
      findingCount: members.length,
      checks: [...checks.values()].slice(0, EVIDENCE_LIMITS.maxGroupChecks),
    };
  });
  const ordered = [...items].sort(
    (a, b) =>
      b.severity - a.severity ||
      (a.finding.page ?? Number.MAX_SAFE_INTEGER) - (b.finding.page ?? Number.MAX_SAFE_INTEGER) ||
      a.index - b.index,
  );
  const findings: EvidenceFinding[] = ordered.slice(0, EVIDENCE_LIMITS.maxFindings).map((it) => {
    const f = it.finding;
    const bbox = placed(it) ? roundBox(f.bbox as number[]) : null;
    return {
      id: it.id,
      checkId: it.checkId,
      code: f.code,
      severity: it.severity,
      message: clip(f.message, EVIDENCE_LIMITS.maxMessageChars),
      page: f.page ?? null,
      bbox,
      bboxFraction: bbox && f.page ? frac(f.page, bbox) : null,
      evidence: smallEvidence(f.evidence),
      before: it.before,
      after: it.after,
      group: groupOf.get(it.id) ?? null,
    };
  });
  // Marks of the listed groups only: a box on the page always has its headline in the list.
  const listed = EVIDENCE_LIMITS.maxGroups;
  for (const [page, list] of marks) {
    const kept = list.filter((m) => m.group <= listed);
    if (kept.length) marks.set(page, kept);
    else marks.delete(page);
  }
  return {
    findings,
    findingsTotal: items.length,
    groups: groups.slice(0, listed),
    groupsTotal: groups.length,
    groupOf,
    marks,
    checks: input.checks.map((c) => ({
      checkId: c.checkId,
      outcome: c.outcome,
      severity: c.severity,
      summary: clip(c.summary, EVIDENCE_LIMITS.maxMessageChars),
      findingCount: c.findings.length,
    })),
  };
}

/** Pages (1-based) that carry at least one finding, strongest first (then in page order). */
export function pagesWithFindings(
  checks: readonly CheckResult[],
): { page: number; severity: number; count: number }[] {
  const by = new Map<number, { page: number; severity: number; count: number }>();
  for (const c of checks) {
    for (const f of c.findings) {
      if (f.page === undefined) continue;
      const p = by.get(f.page) ?? { page: f.page, severity: 0, count: 0 };
      p.severity = Math.max(p.severity, f.severity ?? 0);
      p.count++;
      by.set(f.page, p);
    }
  }
  return [...by.values()].sort((a, b) => b.severity - a.severity || a.page - b.page);
}
