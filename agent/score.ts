import type { CheckResult, Finding } from "../core/check-result.js";
import { SCORE_BANDS, scoreBandOf } from "../core/verdict.js";

/**
 * How the rules engine turns check results into a fraud score: a small pure function with named constants.
 *
 * Model: every flagged finding is treated as independent evidence of tampering with a probability derived
 * from its severity, and the pieces are combined as a noisy-OR (1 - Π(1 - p)), so one strong finding
 * dominates and several mild ones add up with diminishing returns. Further findings of the same check are
 * damped (they usually describe the same problem). A declared-vs-found document-type mismatch is one more
 * piece of evidence. Checks that errored add a few fixed points of uncertainty; passes and skips add nothing.
 *
 * Severity is the checks' shared scale (docs/calibration.md, "Severity"): 1-2 a note, 3-4 an anomaly
 * genuine documents also show (never decisive alone), 5 and up specific evidence of an edit or of a
 * rewrite after issue (decisive alone), 8-10 proof-grade. The probability of one finding is a logistic
 * curve of its severity that rises steeply between "anomaly" and "specific".
 *
 * The constants live in one object so a deployment can tune them; docs/calibration.md says how they were
 * calibrated (bench/calibrate.ts, on synthetic, real-world and real-producer documents with whole producer
 * families held out) and how to re-tune them on a deployment's own documents.
 */
export const SCORING = {
  /**
   * p(severity) = probabilityMax / (1 + e^(-(severity - decisiveSeverity) / severitySpread)), 0 for severity 0.
   * decisiveSeverity is where one finding counts as an even chance (× probabilityMax); severitySpread how
   * sharply the curve rises around it. With 4.5 / 0.5 / 0.99: severity 2 → 0.01, 3 → 0.05, 4 → 0.27,
   * 5 → 0.72, 6 → 0.94, 8 → 0.99. In words: one finding of severity 5 or more makes a document "likely
   * tampered" (≥ 50), one or two anomalies of 4 do not, three from three checks do, and a note (≤ 3) barely
   * moves the score. Calibrated on the combined set with whole producer families held out
   * (docs/calibration.md).
   */
  decisiveSeverity: 4.5,
  severitySpread: 0.5,
  probabilityMax: 0.99,
  /** The k-th finding (0-based, by severity) of one check counts with weight sameCheckDecay^k. */
  sameCheckDecay: 0.2,
  /** Severity assumed for a flag whose findings carry none and whose check severity is 0. */
  defaultFlagSeverity: 5,
  /** A type mismatch counts as evidence with p = mismatchProbability × classifier confidence. */
  mismatchProbability: 0.6,
  /**
   * Classifier confidence from which its type counts as recognised: below it a different type is no mismatch
   * (document_type_match stays true, actual_doc_type repeats the declared type, the reasoning says the type
   * could not be confirmed), and a declared `other` is not given a guessed name. docs/decisions.md.
   */
  mismatchMinConfidence: 0.5,
  /** Points of uncertainty per check that errored, and their cap. */
  errorPoints: 3,
  errorPointsMax: 8,
  /** Points when the declared type could not be confirmed from the text (no text, or too weak a signal). */
  unconfirmedTypePoints: 3,
  /** Score bands for the reasoning's first sentence: below `moderate` is low, from `high` on is high. */
  bands: SCORE_BANDS,
} as const;

export type ScoringConstants = {
  [K in keyof typeof SCORING]: (typeof SCORING)[K] extends number
    ? number
    : { moderate: number; high: number };
};

export interface TypeAssessment {
  /** True when the declared type differs from a confident classification (and the declaration was not `other`). */
  mismatch: boolean;
  /** True when the declared type could be neither confirmed nor contradicted. */
  unconfirmed: boolean;
  /** Classifier confidence, 0-1. */
  confidence: number;
}

/** What one check contributed to the score, in points (the shares add up to the score before clamping). */
export interface CheckContribution {
  checkId: string;
  outcome: CheckResult["outcome"];
  points: number;
  /** The flagged findings that counted, strongest first, with the severity used. */
  findings: { finding: Finding; severity: number }[];
}

export interface ScoreBreakdown {
  score: number;
  contributions: CheckContribution[];
  /** Points the type mismatch contributed (0 when none). */
  mismatchPoints: number;
  /** Points for an unconfirmed declared type (0 when none). */
  unconfirmedPoints: number;
  /** Points all errored checks contributed together. */
  errorPoints: number;
}

/** Probability of tampering one finding of this severity stands for. */
export function findingProbability(severity: number, k: ScoringConstants = SCORING): number {
  const s = Math.min(10, Math.max(0, severity));
  if (s === 0) return 0;
  const p = k.probabilityMax / (1 + Math.exp(-(s - k.decisiveSeverity) / k.severitySpread));
  return Math.min(0.99, p);
}

/** The flagged findings of a check with the severity each counts with, strongest first. */
export function flaggedFindings(
  check: CheckResult,
  k: ScoringConstants = SCORING,
): CheckContribution["findings"] {
  if (check.outcome !== "flag") return [];
  const fallback = check.severity > 0 ? check.severity : k.defaultFlagSeverity;
  if (check.findings.length === 0) {
    return [{ finding: { code: "flagged", message: check.summary }, severity: fallback }];
  }
  return check.findings
    .map((finding) => ({ finding, severity: finding.severity ?? fallback }))
    .sort((a, b) => b.severity - a.severity);
}

/** Evidence weight (−ln(1 − p)) of a check's flagged findings, damped within the check. */
function checkWeight(findings: CheckContribution["findings"], k: ScoringConstants): number {
  return findings.reduce((sum, { severity }, i) => {
    const p = findingProbability(severity, k) * k.sameCheckDecay ** i;
    return sum - Math.log(1 - p);
  }, 0);
}

/**
 * Combines check results and the type assessment into a fraud score 0-100 and attributes it.
 * The noisy-OR part is split among its sources in proportion to their evidence weight, so each check's
 * `points` says how much it moved this score (the basis of per_check importance).
 */
export function computeScore(
  checks: CheckResult[],
  type: TypeAssessment,
  k: ScoringConstants = SCORING,
): ScoreBreakdown {
  const perCheck = checks.map((check) => {
    const findings = flaggedFindings(check, k);
    return { check, findings, weight: checkWeight(findings, k) };
  });
  const mismatchP =
    type.mismatch && type.confidence >= k.mismatchMinConfidence
      ? Math.min(0.99, k.mismatchProbability * type.confidence)
      : 0;
  const mismatchWeight = -Math.log(1 - mismatchP);
  const totalWeight = perCheck.reduce((sum, c) => sum + c.weight, 0) + mismatchWeight;
  const evidencePoints = 100 * (1 - Math.exp(-totalWeight));
  const share = (weight: number) => (totalWeight > 0 ? (evidencePoints * weight) / totalWeight : 0);

  const errored = checks.filter((c) => c.outcome === "error").length;
  const errorPoints = Math.min(k.errorPointsMax, errored * k.errorPoints);
  const perErrorPoints = errored > 0 ? errorPoints / errored : 0;
  const unconfirmedPoints = type.unconfirmed ? k.unconfirmedTypePoints : 0;

  const contributions: CheckContribution[] = perCheck.map(({ check, findings, weight }) => ({
    checkId: check.checkId,
    outcome: check.outcome,
    points: check.outcome === "error" ? perErrorPoints : share(weight),
    findings,
  }));
  const raw = evidencePoints + errorPoints + unconfirmedPoints;
  return {
    score: Math.round(Math.min(100, Math.max(0, raw))),
    contributions,
    mismatchPoints: share(mismatchWeight),
    unconfirmedPoints,
    errorPoints,
  };
}

/** Per-check importance 0-10 from the points a check contributed: one step per 10 points, at least 1 if any. */
export function importanceOf(points: number): number {
  if (points <= 0.05) return 0;
  return Math.min(10, Math.max(1, Math.ceil(points / 10)));
}

export type ScoreBand = "low" | "moderate" | "high";

export function scoreBand(score: number, k: ScoringConstants = SCORING): ScoreBand {
  return scoreBandOf(score, k.bands);
}
