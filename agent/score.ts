import type { CheckResult, Finding } from "../core/check-result.js";
import { placesOf } from "../core/evidence.js";
import { type EvidenceKind, isAppearanceKind, LEVEL_SEVERITY } from "../core/finding-levels.js";
import type { PageGeometry } from "../core/page-geometry.js";
import { SCORE_BANDS, scoreBandOf } from "../core/verdict.js";

/**
 * How suspicious a document is: the one place that turns every check's findings into the fraud score (issue
 * 20, docs/calibration.md "Levels and corroboration"). Pure; the constants live in one object so a deployment
 * can tune them.
 *
 * The rules, in order:
 * 1. Every finding has a level (core/finding-levels.ts: note 1-2, anomaly 3-4, specific 5-7, proof 8-10) and a
 *    kind of evidence. A finding about appearance only (a face, a producer name, one odd date, a QR domain,
 *    how an image was captured) is an anomaly at most, whatever its check said.
 * 2. The document reaches 50 only when something decides it:
 *    - **proof**: one finding of level proof (figures that do not add up on a confident reading, a revision
 *      that changed a printed value, text hidden and replaced, a failing signature or check digit, bytes
 *      rewritten under the producer's seal); or
 *    - **corroboration**: two independent kinds of evidence, each at least an anomaly, about the same value or
 *      region (findings whose boxes on one page overlap, or that show the same changed value: the places of
 *      core/evidence.ts). Independent means: different kinds, or the same kind found by two different checks
 *      (two pixel methods), never two appearance kinds together, and an appearance finding only with another
 *      check's finding (a value in Courier and that Courier not embedded is one font choice, described twice
 *      by fonts.consistency). A document-wide finding that is not
 *      about appearance and is at least specific (a rewrite by another tool) corroborates any placed finding
 *      of another kind.
 * 3. Without a decision the score stays below 50 however many anomalies there are: they add up (noisy-OR) into
 *    0-49, so several anomalies about different values rank above one, and a lone specific finding ranks near
 *    the top of that band.
 * 4. With a decision the score is 50 plus the same noisy-OR over all the evidence, into 50-100.
 * A confident declared-vs-found type mismatch is an anomaly (it says the document is not what was declared,
 * not that it was altered); checks that errored and an unconfirmed type add a few points of uncertainty.
 */
export const SCORING = {
  /**
   * p(severity) = probabilityMax / (1 + e^(-(severity - decisiveSeverity) / severitySpread)), 0 for severity 0:
   * the weight of one finding in the noisy-OR. With 4.5 / 0.5 / 0.99: severity 2 → 0.01, 3 → 0.05, 4 → 0.27,
   * 5 → 0.72, 6 → 0.94, 8 → 0.99. It orders documents inside each band; it no longer decides the band.
   */
  decisiveSeverity: 4.5,
  severitySpread: 0.5,
  probabilityMax: 0.99,
  /** The k-th finding (0-based, by severity) of one check counts with weight sameCheckDecay^k. */
  sameCheckDecay: 0.2,
  /** Severity assumed for a flag whose findings carry none and whose check severity is 0. */
  defaultFlagSeverity: 4,
  /** Each side of a corroborating pair must be at least this severe (an anomaly). */
  corroborationMinSeverity: LEVEL_SEVERITY.anomaly[0],
  /** A document-wide, non-appearance finding corroborates placed findings from this severity (specific). */
  documentWideMinSeverity: LEVEL_SEVERITY.specific[0],
  /** Highest score without proof or corroboration. */
  undecidedCeiling: 49,
  /** A type mismatch counts as evidence with p = mismatchProbability × classifier confidence (below 50 alone). */
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

/** One flagged finding as the score counts it. */
export interface CountedFinding {
  finding: Finding;
  /** The severity it counts with (its own, capped at anomaly for an appearance kind). */
  severity: number;
  /** Its place (findings about the same value or region share one); see placesOf in core/evidence.ts. */
  place: number;
  /** True when it is part of a decision (proof, or one side of a corroboration). */
  decisive: boolean;
}

/** What one check contributed to the score, in points (the shares add up to the score before clamping). */
export interface CheckContribution {
  checkId: string;
  outcome: CheckResult["outcome"];
  points: number;
  /** The flagged findings that counted, strongest first, with the severity used. */
  findings: CountedFinding[];
}

/** Why a document reached 50: one proof, or two independent kinds about one value or region. */
export interface Decision {
  why: "proof" | "corroborated";
  /** Set when a tenant's policy made the finding decide alone (the reasoning says so). */
  byPolicy?: boolean;
  /** The findings that decided it (the proof, or the corroborating pair), strongest first. */
  findings: {
    checkId: string;
    code: string;
    kind: EvidenceKind | "unknown";
    severity: number;
    page?: number;
  }[];
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
  /** What decided the score (empty when nothing did: the score is then below 50). */
  decisions: Decision[];
}

/** Options of computeScore beyond the checks and the type. */
export interface ScoreOptions {
  /** Page geometry (for page-wide boxes, which merge only with the same box); optional. */
  geometry?: ReadonlyMap<number, PageGeometry>;
  /**
   * Findings whose severity a tenant's policy set (agent/policy.ts): they count with it, past the appearance
   * cap; at 8 or more only where the policy says the finding decides alone.
   */
  overrides?: ReadonlyMap<Finding, { severity: number; decidesAlone: boolean }>;
}

/** Probability of tampering one finding of this severity stands for. */
export function findingProbability(severity: number, k: ScoringConstants = SCORING): number {
  const s = Math.min(10, Math.max(0, severity));
  if (s === 0) return 0;
  const p = k.probabilityMax / (1 + Math.exp(-(s - k.decisiveSeverity) / k.severitySpread));
  return Math.min(0.99, p);
}

/** The severity a finding counts with: its own, and never above anomaly for a kind about appearance. */
export function countedSeverity(f: Finding, fallback: number): number {
  const s = Math.max(0, Math.min(10, Math.round(f.severity ?? fallback)));
  return isAppearanceKind(f.kind) ? Math.min(s, LEVEL_SEVERITY.anomaly[1]) : s;
}

/** The flagged findings of a check with the severity each counts with, strongest first. */
export function flaggedFindings(
  check: CheckResult,
  k: ScoringConstants = SCORING,
): { finding: Finding; severity: number }[] {
  if (check.outcome !== "flag") return [];
  const fallback = check.severity > 0 ? check.severity : k.defaultFlagSeverity;
  if (check.findings.length === 0) {
    return [{ finding: { code: "flagged", message: check.summary }, severity: fallback }];
  }
  return check.findings
    .map((finding) => ({ finding, severity: countedSeverity(finding, fallback) }))
    .sort((a, b) => b.severity - a.severity);
}

interface Member {
  byPolicy: boolean;
  check: number;
  checkId: string;
  finding: Finding;
  severity: number;
  place: number;
  placed: boolean;
}

const placed = (f: Finding) => f.page !== undefined && f.bbox !== undefined && f.bbox.length === 4;

/**
 * Two findings are independent evidence: other kinds (or one kind from two checks), never two appearance
 * kinds, and an appearance finding only with another check's (a check about appearance would otherwise
 * decide alone).
 */
export function independent(
  a: { checkId: string; kind?: EvidenceKind; method?: string },
  b: { checkId: string; kind?: EvidenceKind; method?: string },
): boolean {
  // One observation reported by two checks (a glyph matching another pixel for pixel, found by pixels.glyphs
  // among all characters and by pixels.amounts among the amounts') is one piece of evidence.
  if (a.method !== undefined && a.method === b.method) return false;
  if (isAppearanceKind(a.kind) && isAppearanceKind(b.kind)) return false;
  if (a.checkId === b.checkId && (isAppearanceKind(a.kind) || isAppearanceKind(b.kind))) return false;
  if (a.kind === b.kind) return a.checkId !== b.checkId;
  return true;
}

/** The observation method a finding's evidence names (`evidence.method`, set by checks/pixel-evidence.ts). */
const methodOf = (f: Finding): { method?: string } =>
  typeof f.evidence?.method === "string" ? { method: f.evidence.method } : {};

const decisionEntry = (m: Member): Decision["findings"][number] => ({
  checkId: m.checkId,
  code: m.finding.code,
  kind: m.finding.kind ?? "unknown",
  severity: m.severity,
  ...(m.finding.page !== undefined ? { page: m.finding.page } : {}),
});

/** The decisions the findings support, and the members that take part in one. */
function decide(members: Member[], k: ScoringConstants): { decisions: Decision[]; decisive: Set<Member> } {
  const decisions: Decision[] = [];
  const decisive = new Set<Member>();
  const proofFrom = LEVEL_SEVERITY.proof[0];
  for (const m of members) {
    if (m.severity >= proofFrom) {
      decisions.push({
        why: "proof",
        ...(m.byPolicy ? { byPolicy: true } : {}),
        findings: [decisionEntry(m)],
      });
      decisive.add(m);
    }
  }
  const byPlace = new Map<number, Member[]>();
  for (const m of members) {
    if (m.severity < k.corroborationMinSeverity) continue;
    byPlace.set(m.place, [...(byPlace.get(m.place) ?? []), m]);
  }
  const documentWide = members.filter(
    (m) => !m.placed && !isAppearanceKind(m.finding.kind) && m.severity >= k.documentWideMinSeverity,
  );
  for (const list of byPlace.values()) {
    const candidates = list.some((m) => m.placed) ? [...list, ...documentWide] : list;
    let best: [Member, Member] | undefined;
    for (let i = 0; i < candidates.length; i++) {
      for (let j = i + 1; j < candidates.length; j++) {
        const a = candidates[i] as Member;
        const b = candidates[j] as Member;
        if (!a.placed && !b.placed) continue;
        if (
          !independent(
            { checkId: a.checkId, kind: a.finding.kind, ...methodOf(a.finding) },
            { checkId: b.checkId, kind: b.finding.kind, ...methodOf(b.finding) },
          )
        )
          continue;
        if (!best || a.severity + b.severity > best[0].severity + best[1].severity) best = [a, b];
      }
    }
    if (!best) continue;
    const pair = [...best].sort((x, y) => y.severity - x.severity);
    for (const m of pair) decisive.add(m);
    decisions.push({ why: "corroborated", findings: pair.map(decisionEntry) });
  }
  decisions.sort(
    (a, b) =>
      (a.why === "proof" ? 0 : 1) - (b.why === "proof" ? 0 : 1) ||
      Math.max(...b.findings.map((f) => f.severity)) - Math.max(...a.findings.map((f) => f.severity)),
  );
  return { decisions, decisive };
}

/**
 * Combines check results and the type assessment into a fraud score 0-100 and attributes it (rules in the
 * comment of SCORING). Each check's `points` says how much it moved this score (the reasoning quotes them).
 */
export function computeScore(
  checks: CheckResult[],
  type: TypeAssessment,
  k: ScoringConstants = SCORING,
  opts: ScoreOptions = {},
): ScoreBreakdown {
  const places = placesOf(checks, opts.geometry);
  const members: Member[] = [];
  const perCheck = checks.map((check, ci) => {
    const fallback = check.severity > 0 ? check.severity : k.defaultFlagSeverity;
    const list =
      check.outcome !== "flag"
        ? []
        : check.findings.length === 0
          ? [{ finding: { code: "flagged", message: check.summary } as Finding, index: -1 }]
          : check.findings.map((finding, index) => ({ finding, index }));
    const counted = list
      .map(({ finding, index }) => {
        const o = opts.overrides?.get(finding);
        const m: Member = {
          byPolicy: o?.decidesAlone === true,
          check: ci,
          checkId: check.checkId,
          finding,
          severity: o
            ? Math.min(o.decidesAlone ? 10 : LEVEL_SEVERITY.specific[1], o.severity)
            : countedSeverity(finding, fallback),
          place: index >= 0 ? (places[ci]?.[index] ?? -1 - members.length) : -1 - ci,
          placed: placed(finding),
        };
        return m;
      })
      .filter((m) => m.severity > 0)
      .sort((a, b) => b.severity - a.severity);
    members.push(...counted);
    const weight = counted.reduce((sum, m, i) => {
      const p = findingProbability(m.severity, k) * k.sameCheckDecay ** i;
      return sum - Math.log(1 - p);
    }, 0);
    return { check, counted, weight };
  });
  const { decisions, decisive } = decide(members, k);

  const mismatchP =
    type.mismatch && type.confidence >= k.mismatchMinConfidence
      ? Math.min(0.99, k.mismatchProbability * type.confidence)
      : 0;
  const mismatchWeight = -Math.log(1 - mismatchP);
  const totalWeight = perCheck.reduce((sum, c) => sum + c.weight, 0) + mismatchWeight;
  const evidence = 1 - Math.exp(-totalWeight);
  const decided = decisions.length > 0;
  const evidencePoints = decided ? 50 + 50 * evidence : k.undecidedCeiling * evidence;
  const share = (weight: number) => (totalWeight > 0 ? (evidencePoints * weight) / totalWeight : 0);

  const errored = checks.filter((c) => c.outcome === "error").length;
  const errorPoints = Math.min(k.errorPointsMax, errored * k.errorPoints);
  const perErrorPoints = errored > 0 ? errorPoints / errored : 0;
  const unconfirmedPoints = type.unconfirmed ? k.unconfirmedTypePoints : 0;

  const contributions: CheckContribution[] = perCheck.map(({ check, counted, weight }) => ({
    checkId: check.checkId,
    outcome: check.outcome,
    points: check.outcome === "error" ? perErrorPoints : share(weight),
    findings: counted.map((m) => ({
      finding: m.finding,
      severity: m.severity,
      place: m.place,
      decisive: decisive.has(m),
    })),
  }));
  const raw = evidencePoints + errorPoints + unconfirmedPoints;
  const ceiling = decided ? 100 : k.undecidedCeiling;
  return {
    score: Math.round(Math.min(ceiling, Math.max(0, raw))),
    contributions,
    mismatchPoints: share(mismatchWeight),
    unconfirmedPoints,
    errorPoints,
    decisions,
  };
}

/**
 * Per-check importance 0-10 (the contract's per_check.importance), from the level of the check's findings and
 * whether they decided: a proof counts its severity (8-10); a finding that corroborated another counts 7 (or
 * its severity when higher); findings that decided nothing count at most 4, so an importance of 5 or more
 * always means "this check took part in a decision". An errored check gets 1 when it added points.
 */
export function importanceOf(contribution: CheckContribution): number {
  if (contribution.outcome === "skip" || contribution.outcome === "pass") return 0;
  if (contribution.outcome === "error") return contribution.points > 0.05 ? 1 : 0;
  let best = 0;
  for (const f of contribution.findings) {
    const v = f.decisive
      ? f.severity >= LEVEL_SEVERITY.proof[0]
        ? f.severity
        : Math.max(7, Math.min(f.severity, 7))
      : Math.max(1, Math.min(f.severity, LEVEL_SEVERITY.anomaly[1]));
    best = Math.max(best, v);
  }
  return Math.min(10, best);
}

export type ScoreBand = "low" | "moderate" | "high";

export function scoreBand(score: number, k: ScoringConstants = SCORING): ScoreBand {
  return scoreBandOf(score, k.bands);
}
