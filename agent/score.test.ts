import { describe, expect, it } from "vitest";
import type { CheckResult, Finding } from "../core/check-result.js";
import {
  computeScore,
  findingProbability,
  importanceOf,
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
  return {
    checkId,
    outcome: "flag",
    severity: Math.max(...severities),
    summary: `${checkId} flagged.`,
    findings,
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

describe("computeScore", () => {
  it("gives a low score when nothing is flagged", () => {
    const result = computeScore(
      [pass("file.type"), pass("metadata.dates"), skipped("signature.pdf")],
      NO_TYPE_ISSUE,
    );
    expect(result.score).toBeLessThan(20);
    expect(result.score).toBe(0);
    expect(result.contributions.every((c) => c.points === 0)).toBe(true);
  });

  it("puts one strong finding (severity 8 or more) at 60 or above on its own", () => {
    expect(computeScore([flag("metadata.dates", 8)], NO_TYPE_ISSUE).score).toBeGreaterThanOrEqual(60);
    expect(computeScore([flag("metadata.dates", 9)], NO_TYPE_ISSUE).score).toBeGreaterThanOrEqual(60);
    expect(
      computeScore([flag("metadata.dates", 9), pass("file.type")], NO_TYPE_ISSUE).score,
    ).toBeGreaterThanOrEqual(60);
  });

  it("adds mild findings up with diminishing returns", () => {
    const one = computeScore([flag("a", 3)], NO_TYPE_ISSUE).score;
    const two = computeScore([flag("a", 3), flag("b", 3)], NO_TYPE_ISSUE).score;
    const three = computeScore([flag("a", 3), flag("b", 3), flag("c", 3)], NO_TYPE_ISSUE).score;
    expect(two).toBeGreaterThan(one);
    expect(three).toBeGreaterThan(two);
    expect(three - two).toBeLessThanOrEqual(two - one);
    // Calibrated (docs/calibration.md): three faint findings (severity 1) stay below "likely tampered".
    const faint = computeScore([flag("a", 1), flag("b", 1), flag("c", 1)], NO_TYPE_ISSUE).score;
    expect(faint).toBeLessThan(50);
  });

  it("damps further findings of the same check", () => {
    const sameCheck = computeScore([flag("a", 5, 5)], NO_TYPE_ISSUE).score;
    const twoChecks = computeScore([flag("a", 5), flag("b", 5)], NO_TYPE_ISSUE).score;
    const single = computeScore([flag("a", 5)], NO_TYPE_ISSUE).score;
    expect(sameCheck).toBeGreaterThan(single);
    expect(sameCheck).toBeLessThan(twoChecks);
  });

  it("adds a substantial amount for a confident type mismatch", () => {
    const without = computeScore([flag("a", 3)], NO_TYPE_ISSUE);
    const withMismatch = computeScore([flag("a", 3)], {
      mismatch: true,
      unconfirmed: false,
      confidence: 0.9,
    });
    expect(withMismatch.score - without.score).toBeGreaterThanOrEqual(25);
    expect(withMismatch.mismatchPoints).toBeGreaterThan(0);
    const alone = computeScore([], { mismatch: true, unconfirmed: false, confidence: 0.9 });
    expect(alone.score).toBeGreaterThanOrEqual(SCORING.bands.moderate);
  });

  it("ignores a mismatch below the confidence threshold", () => {
    const weak = computeScore([], { mismatch: true, unconfirmed: false, confidence: 0.3 });
    expect(weak.score).toBe(0);
  });

  it("adds only a few points per errored check, capped", () => {
    const one = computeScore([errored("metadata.dates")], NO_TYPE_ISSUE);
    expect(one.score).toBe(SCORING.errorPoints);
    expect(one.contributions[0]?.points).toBe(SCORING.errorPoints);
    const many = computeScore([errored("a"), errored("b"), errored("c"), errored("d")], NO_TYPE_ISSUE);
    expect(many.score).toBe(SCORING.errorPointsMax);
    expect(many.score).toBeLessThan(10);
  });

  it("adds a little when the declared type could not be confirmed", () => {
    expect(computeScore([], { mismatch: false, unconfirmed: true, confidence: 0 }).score).toBe(
      SCORING.unconfirmedTypePoints,
    );
  });

  it("clamps the score to 0-100", () => {
    const checks = Array.from({ length: 12 }, (_, i) => flag(`c${i}`, 10, 10));
    const result = computeScore(
      checks,
      { mismatch: true, unconfirmed: false, confidence: 1 },
      {
        ...SCORING,
        errorPoints: 50,
        errorPointsMax: 200,
      },
    );
    expect(result.score).toBeLessThanOrEqual(100);
    const withErrors = computeScore([...checks, errored("x"), errored("y")], NO_TYPE_ISSUE, {
      ...SCORING,
      errorPoints: 80,
      errorPointsMax: 200,
    });
    expect(withErrors.score).toBe(100);
    const negative = computeScore([errored("x")], NO_TYPE_ISSUE, { ...SCORING, errorPoints: -50 });
    expect(negative.score).toBe(0);
  });

  it("attributes the evidence points to the checks in proportion to their weight", () => {
    const result = computeScore([flag("strong", 9), flag("mild", 3), pass("quiet")], NO_TYPE_ISSUE);
    const [strong, mild, quiet] = result.contributions;
    expect(strong?.points).toBeGreaterThan(mild?.points ?? Infinity);
    expect(mild?.points).toBeGreaterThan(0);
    expect(quiet?.points).toBe(0);
    const total = result.contributions.reduce((s, c) => s + c.points, 0);
    expect(Math.round(total)).toBe(result.score);
  });

  it("ignores findings of checks that passed and falls back to the check severity", () => {
    const informational: CheckResult = {
      ...pass("file.type"),
      findings: [{ code: "note", message: "Name and content agree.", severity: 9 }],
    };
    expect(computeScore([informational], NO_TYPE_ISSUE).score).toBe(0);
    const noFindingSeverity: CheckResult = {
      checkId: "metadata.dates",
      outcome: "flag",
      severity: 8,
      summary: "Dates disagree.",
      findings: [{ code: "x", message: "Dates disagree." }],
    };
    expect(computeScore([noFindingSeverity], NO_TYPE_ISSUE).score).toBeGreaterThanOrEqual(60);
  });
});

describe("the severity scale (docs/calibration.md)", () => {
  const alone = (...s: number[]) => computeScore([flag("a", ...s)], NO_TYPE_ISSUE).score;
  const apart = (...s: number[]) =>
    computeScore(
      s.map((x, i) => flag(`c${i}`, x)),
      NO_TYPE_ISSUE,
    ).score;

  it("lets one specific finding (5 and up) decide alone, never one anomaly (4 or less)", () => {
    for (const s of [5, 6, 7, 8, 9, 10]) expect(alone(s), `severity ${s}`).toBeGreaterThanOrEqual(50);
    for (const s of [1, 2, 3, 4]) expect(alone(s), `severity ${s}`).toBeLessThan(50);
  });

  it("keeps notes low: one finding of 3, or two of 2 from two checks, stay below 30", () => {
    expect(alone(3)).toBeLessThan(30);
    expect(apart(2, 2)).toBeLessThan(30);
    expect(apart(3, 3)).toBeLessThan(30);
  });

  it("lets independent anomalies corroborate each other", () => {
    expect(apart(4, 4)).toBeGreaterThan(alone(4));
    expect(apart(4, 4, 4)).toBeGreaterThanOrEqual(50);
  });
});

describe("helpers", () => {
  it("maps severity to a growing probability below 1", () => {
    const ps = Array.from({ length: 11 }, (_, s) => findingProbability(s));
    for (let s = 1; s <= 10; s++) expect(ps[s]).toBeGreaterThan(ps[s - 1] ?? Infinity);
    expect(ps[0]).toBe(0);
    expect(ps[10]).toBeLessThan(1);
  });

  it("maps points to importance 0-10", () => {
    expect(importanceOf(0)).toBe(0);
    expect(importanceOf(2)).toBe(1);
    expect(importanceOf(64)).toBe(7);
    expect(importanceOf(150)).toBe(10);
  });

  it("names score bands", () => {
    expect(scoreBand(0)).toBe("low");
    expect(scoreBand(29)).toBe("low");
    expect(scoreBand(30)).toBe("moderate");
    expect(scoreBand(60)).toBe("high");
  });
});
