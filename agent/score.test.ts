import { describe, expect, it } from "vitest";
import type { CheckResult, Finding } from "../core/check-result.js";
import type { EvidenceKind } from "../core/finding-levels.js";
import {
  computeScore,
  findingProbability,
  importanceOf,
  independent,
  SCORING,
  scoreBand,
  type TypeAssessment,
} from "./score.js";

const NO_TYPE_ISSUE: TypeAssessment = { mismatch: false, unconfirmed: false, confidence: 0.9 };

function flag(checkId: string, ...severities: number[]): CheckResult {
  const findings: Finding[] = severities.map((severity, i) => ({
    code: `finding_${i}`,
    message: `Finding ${i} of ${checkId}.`,
    severity,
  }));
  return check(checkId, findings);
}

function check(checkId: string, findings: Finding[]): CheckResult {
  const severities = findings.map((f) => f.severity ?? 0);
  const top = Math.max(0, ...severities);
  return {
    checkId,
    outcome: top >= 2 ? "flag" : "pass",
    severity: top >= 2 ? top : 0,
    summary: `${checkId} flagged.`,
    findings,
  };
}

/** A finding of a kind at a place: page 1, a box around x (10 pt wide), or document-wide. */
function at(
  code: string,
  kind: EvidenceKind,
  severity: number,
  x?: number,
  extra: Partial<Finding> = {},
): Finding {
  return {
    code,
    message: `${code}.`,
    severity,
    kind,
    ...(x !== undefined ? { page: 1, bbox: [x, 700, x + 10, 710] } : {}),
    ...extra,
  };
}

const pass = (checkId: string): CheckResult => ({
  checkId,
  outcome: "pass",
  severity: 0,
  summary: `${checkId} found nothing.`,
  findings: [],
});
const errored = (checkId: string): CheckResult => ({
  checkId,
  outcome: "error",
  severity: 0,
  summary: `${checkId} could not read the file.`,
  findings: [],
});
const skipped = (checkId: string): CheckResult => ({
  checkId,
  outcome: "skip",
  severity: 0,
  summary: `${checkId} does not apply to images.`,
  findings: [],
});

const score = (checks: CheckResult[], type = NO_TYPE_ISSUE) => computeScore(checks, type).score;

describe("scope 1 rules: appearance never decides alone", () => {
  it("a value in another face, alone, stays below 50 whatever severity its check gave it", () => {
    const fonts = check("fonts.consistency", [at("value_font_differs", "appearance", 7, 100)]);
    expect(score([fonts])).toBeLessThan(50);
    expect(computeScore([fonts], NO_TYPE_ISSUE).contributions[0]?.findings[0]?.severity).toBe(4);
  });

  it("a print-to-PDF producer chain, one odd date or a foreign QR domain, alone, stays below 50", () => {
    expect(
      score([check("metadata.producer", [at("producer_chain_rewritten", "provenance", 5)])]),
    ).toBeLessThan(50);
    expect(score([check("text.identifiers", [at("date_impossible", "plausibility", 7, 300)])])).toBeLessThan(
      50,
    );
    expect(score([check("qr.codes", [at("qr_domain_foreign", "provenance", 6)])])).toBeLessThan(50);
  });

  it("several appearance findings about different values keep the document below 50", () => {
    const fonts = check("fonts.consistency", [
      at("value_font_differs", "appearance", 4, 100),
      at("value_font_differs", "appearance", 4, 300),
      at("cell_mixed_fonts", "appearance", 4, 500),
    ]);
    const producer = check("metadata.producer", [at("producer_chain_rewritten", "provenance", 4)]);
    const dates = check("text.identifiers", [at("transactions_out_of_order", "plausibility", 4, 200)]);
    const qr = check("qr.codes", [at("qr_domain_foreign", "provenance", 4)]);
    expect(score([fonts, producer, dates, qr])).toBeLessThan(50);
  });

  it("two appearance kinds about the same value do not corroborate each other", () => {
    const fonts = check("fonts.consistency", [at("value_font_differs", "appearance", 4, 100)]);
    const dates = check("text.identifiers", [at("date_impossible", "plausibility", 4, 102)]);
    expect(score([fonts, dates])).toBeLessThan(50);
  });

  it("a declared-type mismatch alone stays below 50", () => {
    expect(score([], { mismatch: true, unconfirmed: false, confidence: 1 })).toBeLessThan(50);
    expect(score([], { mismatch: true, unconfirmed: false, confidence: 1 })).toBeGreaterThan(0);
  });

  it("a specific finding alone ranks high but below 50", () => {
    const s = score([check("pdf.structure", [at("rewritten_by_other_tool", "structure", 6)])]);
    expect(s).toBeLessThan(50);
    expect(s).toBeGreaterThan(35);
  });
});

describe("scope 1 rules: proof, or two independent kinds about the same value", () => {
  it("one proof decides alone", () => {
    expect(
      score([check("text.arithmetic", [at("running_balance_mismatch", "arithmetic", 9, 100)])]),
    ).toBeGreaterThanOrEqual(90);
    expect(score([check("signature.pdf", [at("signature_invalid", "signature", 9)])])).toBeGreaterThanOrEqual(
      90,
    );
  });

  it("the value in another face AND that face added by a later revision, on the same value, decides", () => {
    const fonts = check("fonts.consistency", [at("value_font_differs", "appearance", 4, 100)]);
    const revisions = check("pdf.revisions", [at("revision_added_fonts", "structure", 5, 101)]);
    const b = computeScore([fonts, revisions], NO_TYPE_ISSUE);
    expect(b.score).toBeGreaterThanOrEqual(50);
    expect(b.decisions[0]).toMatchObject({ why: "corroborated" });
    expect(b.decisions[0]?.findings.map((f) => f.code).sort()).toEqual([
      "revision_added_fonts",
      "value_font_differs",
    ]);
  });

  it("the value in another face AND that face not embedded (one check, one font choice) does not decide", () => {
    // PDFKit and TCPDF set identifiers in base-14 Courier, never embedded, among embedded subsets.
    const fonts = check("fonts.consistency", [
      at("value_font_differs", "appearance", 4, 100),
      at("font_origin_mixed", "structure", 3, 100),
    ]);
    expect(score([fonts])).toBeLessThan(50);
    // The same font choice with a later revision that added the face: two checks, and it decides.
    const revisions = check("pdf.revisions", [at("revision_added_fonts", "structure", 5, 100)]);
    expect(score([fonts, revisions])).toBeGreaterThanOrEqual(50);
  });

  it("the value in another face AND the row's arithmetic breaking at that value decides", () => {
    const fonts = check("fonts.consistency", [at("value_font_differs", "appearance", 4, 100)]);
    // A mismatch on a low-confidence reading is a note (2): the pair must be at least anomalies…
    const weak = check("text.arithmetic", [at("running_balance_mismatch", "arithmetic", 2, 100)]);
    expect(score([fonts, weak])).toBeLessThan(50);
    // …an anomaly-level mismatch (a reading neither confirmed nor weak) corroborates the face.
    const mid = check("text.arithmetic", [at("running_balance_mismatch", "arithmetic", 4, 100)]);
    expect(score([fonts, mid])).toBeGreaterThanOrEqual(50);
  });

  it("the same evidence about two different values does not corroborate", () => {
    const fonts = check("fonts.consistency", [at("value_font_differs", "appearance", 4, 100)]);
    const revisions = check("pdf.revisions", [at("revision_added_fonts", "structure", 5, 400)]);
    expect(score([fonts, revisions])).toBeLessThan(50);
  });

  it("findings that show the same changed value corroborate wherever their boxes are", () => {
    const fonts = check("fonts.consistency", [
      at("value_font_differs", "appearance", 4, 100, { evidence: { before: "10.00", after: "90.00" } }),
    ]);
    const overlay = check("layout.overlay", [
      at("text_covered", "structure", 4, 300, { evidence: { before: "10.00", after: "90.00" } }),
    ]);
    expect(score([fonts, overlay])).toBeGreaterThanOrEqual(50);
  });

  it("two pixel methods on one value corroborate; one pixel method alone does not decide", () => {
    const noise = check("pixels.noise", [at("noise_inconsistent", "pixels", 4, 100)]);
    const glyphs = check("pixels.glyphs", [at("glyph_cloned", "pixels", 4, 102)]);
    expect(score([noise])).toBeLessThan(50);
    expect(score([noise, glyphs])).toBeGreaterThanOrEqual(50);
    // The same method twice on one value is one piece of evidence.
    const twice = check("pixels.noise", [
      at("noise_inconsistent", "pixels", 4, 100),
      at("noise_flat", "pixels", 4, 101),
    ]);
    expect(score([twice])).toBeLessThan(50);
  });

  it("one observation reported by two pixel checks (a glyph twin, among all characters and among the amounts') does not corroborate itself", () => {
    const twin = { evidence: { kind: "pixels", method: "glyph_twin" } };
    const glyphs = check("pixels.glyphs", [at("glyph_identical", "pixels", 4, 100, twin)]);
    const amounts = check("pixels.amounts", [at("amount_glyph_copied", "pixels", 4, 102, twin)]);
    expect(score([glyphs, amounts])).toBeLessThan(50);
    // Another pixel method on the same amount still corroborates either of them.
    const look = check("pixels.amounts", [at("amount_look_differs", "pixels", 4, 101)]);
    expect(score([glyphs, look])).toBeGreaterThanOrEqual(50);
  });

  it("on a scan: an OCR-read sum confirmed as an anomaly and pixels.amounts on the amount it accuses corroborate (image pixels, origin top left)", () => {
    const geometry = new Map([
      [1, { number: 1, view: [0, 0, 1654, 2339], rotate: 0 as const, units: "px" as const }],
    ]);
    const scored = (checks: CheckResult[]) => computeScore(checks, NO_TYPE_ISSUE, SCORING, { geometry });
    // The arithmetic's box is the OCR word of the total; the pixel check's, the ink of its characters.
    const sum = (severity: number) =>
      check("text.arithmetic", [
        {
          code: "total_mismatch",
          message: "The total 40.371,20 € is not the sum of the amounts above it.",
          severity,
          kind: "arithmetic",
          page: 1,
          bbox: [1401.1, 1161.3, 1535.7, 1184.3],
          evidence: {
            printed: "40.371,20 €",
            expected: "10.371,20 €",
            before: "10.371,20 €",
            after: "40.371,20 €",
          },
        },
      ]);
    const amount = check("pixels.amounts", [
      at("amount_look_differs", "pixels", 3, undefined, { page: 1, bbox: [1404, 1163, 1535, 1181] }),
    ]);
    const elsewhere = check("pixels.amounts", [
      at("amount_look_differs", "pixels", 3, undefined, { page: 1, bbox: [1404, 1663, 1535, 1681] }),
    ]);
    // An OCR-read sum kept a note (its figures doubted) corroborates nothing; confirmed (3) it does.
    expect(scored([sum(2), amount]).score).toBeLessThan(50);
    expect(scored([sum(3)]).score).toBeLessThan(50);
    expect(scored([sum(3), elsewhere]).score).toBeLessThan(50);
    const decided = scored([sum(3), amount]);
    expect(decided.score).toBeGreaterThanOrEqual(50);
    expect(decided.decisions[0]).toMatchObject({ why: "corroborated" });
  });

  it("a document-wide rewrite by another tool corroborates a placed anomaly of another kind, not alone", () => {
    const rewrite = check("pdf.structure", [at("rewritten_by_other_tool", "structure", 6)]);
    const fonts = check("fonts.consistency", [at("value_font_differs", "appearance", 4, 100)]);
    expect(score([rewrite])).toBeLessThan(50);
    expect(score([rewrite, fonts])).toBeGreaterThanOrEqual(50);
    // A document-wide appearance finding corroborates nothing.
    const producer = check("metadata.producer", [at("producer_names_editor", "provenance", 4)]);
    expect(score([producer, fonts])).toBeLessThan(50);
  });

  it("orders decided documents by their evidence: more evidence scores higher", () => {
    const proof = score([check("text.arithmetic", [at("total_mismatch", "arithmetic", 8, 100)])]);
    const more = score([
      check("text.arithmetic", [at("total_mismatch", "arithmetic", 8, 100)]),
      check("pdf.revisions", [at("revision_changed_text", "structure", 9, 100)]),
    ]);
    expect(more).toBeGreaterThanOrEqual(proof);
  });
});

describe("computeScore", () => {
  it("gives 0 when nothing is flagged", () => {
    const result = computeScore(
      [pass("file.type"), pass("metadata.dates"), skipped("signature.pdf")],
      NO_TYPE_ISSUE,
    );
    expect(result.score).toBe(0);
    expect(result.decisions).toEqual([]);
    expect(result.contributions.every((c) => c.points === 0)).toBe(true);
  });

  it("adds undecided findings up with diminishing returns, below 50", () => {
    const one = score([flag("a", 4)]);
    const two = score([flag("a", 4), flag("b", 4)]);
    const three = score([flag("a", 4), flag("b", 4), flag("c", 4)]);
    expect(two).toBeGreaterThan(one);
    expect(three).toBeGreaterThan(two);
    expect(three - two).toBeLessThanOrEqual(two - one);
    expect(score([flag("a", 6), flag("b", 6), flag("c", 6), flag("d", 6)])).toBeLessThan(50);
  });

  it("damps further findings of the same check", () => {
    const sameCheck = score([flag("a", 4, 4)]);
    const twoChecks = score([flag("a", 4), flag("b", 4)]);
    const single = score([flag("a", 4)]);
    expect(sameCheck).toBeGreaterThan(single);
    expect(sameCheck).toBeLessThan(twoChecks);
  });

  it("ignores a mismatch below the confidence threshold", () => {
    expect(score([], { mismatch: true, unconfirmed: false, confidence: 0.3 })).toBe(0);
  });

  it("adds only a few points per errored check, capped", () => {
    const one = computeScore([errored("metadata.dates")], NO_TYPE_ISSUE);
    expect(one.score).toBe(SCORING.errorPoints);
    expect(one.contributions[0]?.points).toBe(SCORING.errorPoints);
    const many = computeScore([errored("a"), errored("b"), errored("c"), errored("d")], NO_TYPE_ISSUE);
    expect(many.score).toBe(SCORING.errorPointsMax);
  });

  it("adds a little when the declared type could not be confirmed", () => {
    expect(score([], { mismatch: false, unconfirmed: true, confidence: 0 })).toBe(
      SCORING.unconfirmedTypePoints,
    );
  });

  it("clamps: 100 at most when decided, 49 at most when not", () => {
    const proofs = Array.from({ length: 12 }, (_, i) => flag(`c${i}`, 10, 10));
    expect(
      computeScore([...proofs, errored("x")], NO_TYPE_ISSUE, {
        ...SCORING,
        errorPoints: 80,
        errorPointsMax: 200,
      }).score,
    ).toBe(100);
    const anomalies = Array.from({ length: 12 }, (_, i) => flag(`c${i}`, 4));
    expect(
      computeScore([...anomalies, errored("x")], NO_TYPE_ISSUE, {
        ...SCORING,
        errorPoints: 80,
        errorPointsMax: 200,
      }).score,
    ).toBe(49);
    expect(computeScore([errored("x")], NO_TYPE_ISSUE, { ...SCORING, errorPoints: -50 }).score).toBe(0);
  });

  it("attributes the evidence points to the checks in proportion to their weight", () => {
    const result = computeScore([flag("strong", 9), flag("mild", 3), pass("quiet")], NO_TYPE_ISSUE);
    const [strong, mild, quiet] = result.contributions;
    expect(strong?.points).toBeGreaterThan(mild?.points ?? Infinity);
    expect(mild?.points).toBeGreaterThan(0);
    expect(quiet?.points).toBe(0);
    expect(Math.round(result.contributions.reduce((s, c) => s + c.points, 0))).toBe(result.score);
  });

  it("ignores findings of checks that passed and falls back to the check severity", () => {
    const informational: CheckResult = {
      ...pass("file.type"),
      findings: [{ code: "note", message: "Name and content agree.", severity: 9 }],
    };
    expect(score([informational])).toBe(0);
    const noFindingSeverity: CheckResult = {
      checkId: "metadata.dates",
      outcome: "flag",
      severity: 8,
      summary: "Dates disagree.",
      findings: [{ code: "x", message: "Dates disagree." }],
    };
    expect(score([noFindingSeverity])).toBeGreaterThanOrEqual(50);
  });
});

describe("independence", () => {
  it("is other kinds, or one non-appearance kind from two checks, never two appearance kinds, never appearance within one check", () => {
    expect(independent({ checkId: "a", kind: "appearance" }, { checkId: "b", kind: "structure" })).toBe(true);
    // One check's two findings (a value in Courier, and that Courier not embedded) are one observation.
    expect(independent({ checkId: "a", kind: "appearance" }, { checkId: "a", kind: "structure" })).toBe(
      false,
    );
    expect(independent({ checkId: "a", kind: "pixels" }, { checkId: "b", kind: "pixels" })).toBe(true);
    expect(independent({ checkId: "a", kind: "pixels" }, { checkId: "a", kind: "pixels" })).toBe(false);
    // One observation (a method two checks share) found by both is not two kinds of evidence.
    expect(
      independent(
        { checkId: "a", kind: "pixels", method: "glyph_twin" },
        { checkId: "b", kind: "pixels", method: "glyph_twin" },
      ),
    ).toBe(false);
    // Two observations of one check, neither about appearance (an IBAN's check digits, and the IBAN against
    // the sort code printed beside it).
    expect(independent({ checkId: "a", kind: "identifier" }, { checkId: "a", kind: "consistency" })).toBe(
      true,
    );
    expect(independent({ checkId: "a", kind: "appearance" }, { checkId: "b", kind: "provenance" })).toBe(
      false,
    );
    expect(independent({ checkId: "a", kind: "appearance" }, { checkId: "b", kind: "appearance" })).toBe(
      false,
    );
  });
});

describe("importance (per_check)", () => {
  const importances = (checks: CheckResult[]) =>
    computeScore(checks, NO_TYPE_ISSUE).contributions.map((c) => importanceOf(c));

  it("is 0 for passes and skips, at most 4 for findings that decided nothing", () => {
    expect(importances([pass("a"), skipped("b")])).toEqual([0, 0]);
    expect(importances([flag("a", 4), flag("b", 6)])).toEqual([4, 4]);
  });

  it("is the severity of a proof, and 7 for each side of a corroboration", () => {
    expect(importances([flag("a", 9)])).toEqual([9]);
    const fonts = check("fonts.consistency", [at("value_font_differs", "appearance", 4, 100)]);
    const revisions = check("pdf.revisions", [at("revision_added_fonts", "structure", 5, 101)]);
    expect(importances([fonts, revisions])).toEqual([7, 7]);
  });
});

describe("helpers", () => {
  it("maps severity to a growing probability below 1", () => {
    const ps = Array.from({ length: 11 }, (_, s) => findingProbability(s));
    for (let s = 1; s <= 10; s++) expect(ps[s]).toBeGreaterThan(ps[s - 1] ?? Infinity);
    expect(ps[0]).toBe(0);
    expect(ps[10]).toBeLessThan(1);
  });

  it("names score bands", () => {
    expect(scoreBand(0)).toBe("low");
    expect(scoreBand(29)).toBe("low");
    expect(scoreBand(30)).toBe("moderate");
    expect(scoreBand(60)).toBe("high");
  });
});
