import { describe, expect, it } from "vitest";
import type { CheckResult, Finding } from "./check-result.js";
import { buildEvidence, changedValue, EVIDENCE_LIMITS, pageList, smallEvidence } from "./evidence.js";
import type { PageGeometry } from "./page-geometry.js";

const check = (checkId: string, findings: Finding[]): CheckResult => ({
  checkId,
  outcome: findings.some((f) => (f.severity ?? 0) >= 2) ? "flag" : "pass",
  severity: Math.max(0, ...findings.map((f) => f.severity ?? 0)),
  summary: `${checkId} summary.`,
  findings,
});
const geometry = new Map<number, PageGeometry>(
  [1, 2, 3].map((n) => [n, { number: n, view: [0, 0, 612, 792], rotate: 0 as const, units: "pt" as const }]),
);

describe("changedValue", () => {
  it("reads before/after, covered and replaced text, and the first edit", () => {
    expect(changedValue({ code: "x", message: "", evidence: { before: "1.00", after: "9.00" } })).toEqual({
      before: "1.00",
      after: "9.00",
    });
    expect(changedValue({ code: "x", message: "", evidence: { hidden: ["£1"], shown: ["£9"] } })).toEqual({
      before: "£1",
      after: "£9",
    });
    expect(
      changedValue({
        code: "x",
        message: "",
        evidence: { edits: [{ font: "F1" }, { before: "a", after: "b" }] },
      }),
    ).toEqual({ before: "a", after: "b" });
    expect(changedValue({ code: "x", message: "", evidence: { printed: "£9", expected: "£1" } })).toEqual({
      before: null,
      after: null,
    });
    expect(
      changedValue({ code: "x", message: "", evidence: { before: "same", after: "same" } }).after,
    ).toBeNull();
  });
});

describe("buildEvidence", () => {
  const covered: Finding = {
    code: "text_covered_and_replaced",
    message: "On page 1, a white box is drawn over the net pay.",
    page: 1,
    bbox: [480, 400, 540, 412],
    evidence: { hidden: ["£4,018.52"], shown: ["£5,018.52"] },
    severity: 9,
  };
  const sums: Finding = {
    code: "net_pay_mismatch",
    message: "On page 1, the net pay does not follow from the lines above it.",
    page: 1,
    bbox: [482, 401, 539, 411],
    evidence: { printed: "£5,018.52", expected: "£4,018.52" },
    severity: 9,
  };
  const elsewhere: Finding = { ...sums, code: "total_mismatch", bbox: [100, 100, 150, 110], severity: 6 };

  it("merges findings on the same place into one group listing the confirming checks; others stay apart", () => {
    const b = buildEvidence({
      detection: "det-a",
      checks: [check("layout.overlay", [covered]), check("text.arithmetic", [sums, elsewhere])],
      geometry,
      labelOf: (page, bbox) => (page === 1 && bbox[1] > 300 ? "Net pay" : undefined),
    });
    expect(b.groups.map((g) => [g.number, g.headline, g.findingCount])).toEqual([
      [1, "Net pay £4,018.52 → £5,018.52, page 1", 2],
      [2, "The net pay does not follow from the lines above it, page 1", 1],
    ]);
    expect(b.groups[0]?.checks.map((c) => c.checkId)).toEqual(["layout.overlay", "text.arithmetic"]);
    expect(b.findings.map((f) => f.group)).toEqual([1, 1, 2]);
    expect(b.marks.get(1)).toEqual([
      { group: 1, bbox: [480, 400, 540, 412] },
      { group: 2, bbox: [100, 100, 150, 110] },
    ]);
    expect(b.findings[0]?.bboxFraction).toEqual([0.7843, 0.4798, 0.8824, 0.4949]);
  });

  it("one group for the same finding repeated on many pages, with one place per occurrence", () => {
    const repeated = Array.from({ length: 31 }, (_, i) => ({
      code: "cell_mixed_fonts",
      message: `On page ${(i % 3) + 1}, a cell mixes fonts.`,
      page: (i % 3) + 1,
      bbox: [50, 100 + i * 20, 200, 110 + i * 20],
      severity: 5,
    }));
    const b = buildEvidence({ detection: "det-a", checks: [check("fonts.consistency", repeated)], geometry });
    expect(b.groups).toHaveLength(1);
    expect(b.groups[0]?.headline).toBe("Cell mixed fonts (fonts.consistency) on 3 pages: 1–3");
    expect(b.groups[0]?.regions).toHaveLength(31);
    expect(b.groups[0]?.findingCount).toBe(31);
    expect(b.marks.get(2)?.length).toBe(10);
  });

  it("a page-wide box does not swallow the boxes on it", () => {
    const wide: Finding = {
      code: "page_redrawn",
      message: "The page was redrawn.",
      page: 1,
      bbox: [0, 0, 612, 792],
      severity: 6,
    };
    const b = buildEvidence({
      detection: "d",
      checks: [check("pdf.revisions", [wide]), check("layout.overlay", [covered])],
      geometry,
    });
    expect(b.groups).toHaveLength(2);
  });

  it("ids are deterministic from detection, check, code and place, and unique among equal findings", () => {
    const twin: Finding = { code: "metadata_gap", message: "m", severity: 3 };
    const one = buildEvidence({ detection: "det-a", checks: [check("metadata.dates", [twin, twin])] });
    const again = buildEvidence({ detection: "det-a", checks: [check("metadata.dates", [twin, twin])] });
    const other = buildEvidence({ detection: "det-b", checks: [check("metadata.dates", [twin, twin])] });
    const ids = one.findings.map((f) => f.id);
    expect(new Set(ids).size).toBe(2);
    expect(again.findings.map((f) => f.id)).toEqual(ids);
    expect(other.findings.map((f) => f.id)).not.toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^fnd-[0-9a-f]{16}$/);
  });

  it("stays within its bounds whatever the findings", () => {
    const huge = "x".repeat(10_000);
    const findings: Finding[] = Array.from({ length: 9_000 }, (_, i) => ({
      code: `c${i}`,
      message: huge,
      page: (i % 700) + 1,
      bbox: [i % 600, i % 700, (i % 600) + 10, (i % 700) + 10],
      evidence: {
        a: huge,
        b: [huge, huge, huge],
        c: { d: { e: { f: huge } } },
        before: huge,
        after: `${huge}!`,
      },
      severity: i % 11,
    }));
    const b = buildEvidence({ detection: "d", checks: [check("x.y", findings)] });
    expect(b.findingsTotal).toBe(9_000);
    expect(b.findings).toHaveLength(EVIDENCE_LIMITS.maxFindings);
    expect(b.groups.length).toBeLessThanOrEqual(EVIDENCE_LIMITS.maxGroups);
    for (const f of b.findings) {
      expect(f.message.length).toBeLessThanOrEqual(EVIDENCE_LIMITS.maxMessageChars);
      expect(Buffer.byteLength(JSON.stringify(f.evidence))).toBeLessThanOrEqual(
        EVIDENCE_LIMITS.maxEvidenceBytes + 20,
      );
      expect((f.after ?? "").length).toBeLessThanOrEqual(EVIDENCE_LIMITS.maxValueChars);
    }
    for (const g of b.groups) {
      expect(g.headline.length).toBeLessThanOrEqual(EVIDENCE_LIMITS.maxHeadlineChars);
      expect(g.findingIds.length).toBeLessThanOrEqual(EVIDENCE_LIMITS.maxGroupMembers);
      expect(g.regions.length).toBeLessThanOrEqual(EVIDENCE_LIMITS.maxGroupRegions);
    }
    // the strongest come first
    expect(b.findings[0]?.severity).toBe(10);
  });
});

describe("small values", () => {
  it("smallEvidence clips strings, arrays and depth, and drops keys beyond 1 KB", () => {
    const e = smallEvidence({
      s: "y".repeat(500),
      a: Array.from({ length: 30 }, (_, i) => i),
      deep: { a: { b: { c: 1 } } },
    });
    expect(String(e?.s).length).toBe(EVIDENCE_LIMITS.maxValueChars);
    expect(e?.a).toHaveLength(11);
    expect(e?.deep).toEqual({ a: { b: "…" } });
    const big = smallEvidence(
      Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, "z".repeat(190)])),
    );
    expect(Buffer.byteLength(JSON.stringify(big))).toBeLessThanOrEqual(EVIDENCE_LIMITS.maxEvidenceBytes + 20);
    expect(big?.truncated).toBe(true);
  });

  it("pageList writes runs and cuts long lists", () => {
    expect(pageList([3])).toBe("3");
    expect(pageList([1, 2])).toBe("1 and 2");
    expect(pageList([1, 2, 3, 7, 9, 10, 11])).toBe("1–3, 7 and 9–11");
    expect(pageList(Array.from({ length: 30 }, (_, i) => i * 2 + 1))).toMatch(
      /^1, 3, 5, 7, 9, 11, 13 and …$/,
    );
  });
});
