import type { DetectionPolicySpec, SeverityOverride } from "../core/policy.js";
import { UNSWITCHABLE_CHECKS } from "../core/policy.js";
import { DECISION_SCORE, type RescoreSubject, rescore } from "./rescore.js";

/**
 * The calibration report (issue 26, docs/tuning.md): from a tenant's labelled detections (reviewer feedback,
 * `genuine` or `confirmed_fraud`), how often each check code fired on each label, and severity overrides
 * that raise the detection rate minus the false-positive rate, with their effect estimated by k-fold
 * cross-validation: the overrides are chosen on k-1 folds and scored on the fold left out, so the estimate
 * is of documents the choice did not see.
 *
 * What it may propose, and why so little:
 * - only for codes that fired on at least MIN_FIRED labelled documents: below that one odd document moves a
 *   code's firing rate by more than a sixth, and a training fold (4/5 of the history) sees fewer than five
 *   documents with the code, so any choice would follow noise;
 * - only severities 0 (not counted), 2 (note), 4 (anomaly) and 7 (specific): never 8 or more (deciding
 *   alone is a decision the policy's author takes explicitly, with decidesAlone), never a code of
 *   signature.pdf (the contract's authoritative check);
 * - an override is kept on a training fold only when it raises the detection rate minus the false-positive
 *   rate there (Youden's J): fewer false positives may cost detections only when the rate it saves is larger
 *   than the rate it loses, and the report shows both.
 */

/** Fewest labelled documents a code must have fired on for the report to propose an override for it. */
export const MIN_FIRED = 6;
/** Folds of the cross-validation. */
export const FOLDS = 5;
/** Severities an override may propose. */
export const CANDIDATE_SEVERITIES = [0, 2, 4, 7] as const;

export type Label = "genuine" | "confirmed_fraud";

export interface LabelledDetection {
  subject: RescoreSubject;
  label: Label;
}

export interface CodeStats {
  check: string;
  code: string;
  firedGenuine: number;
  firedFraud: number;
  eligible: boolean;
}

export interface Rates {
  falsePositives: number;
  genuine: number;
  detected: number;
  fraud: number;
}

export interface CalibrationReport {
  minFired: number;
  folds: number;
  labelled: { genuine: number; fraud: number };
  codes: CodeStats[];
  /** Under the policy the report starts from (re-scored, not the recorded scores). */
  current: Rates;
  /** The overrides chosen on the whole history: a policy fragment. */
  proposal: { severity: SeverityOverride[] };
  /** The cross-validated estimate of the proposal's effect (pooled over the held-out folds). */
  expected: Rates & {
    fpr: number;
    detection: number;
    /** 95% interval of the FPR / detection rate on a new set of as many labelled documents as the history. */
    fprInterval: [number, number];
    detectionInterval: [number, number];
  };
}

const key = (check: string, code: string) => `${check}\u0000${code}`;

/** The codes that fired (severity ≥ 1) in a detection's check results, before any policy. */
export function firedCodes(s: RescoreSubject): Set<string> {
  const out = new Set<string>();
  for (const c of s.check.checks)
    for (const f of c.findings) if ((f.severity ?? 0) >= 1) out.add(key(c.checkId, f.code));
  return out;
}

/** The policy with `overrides` replacing its own entries for the same check and code. */
export function withOverrides(
  base: DetectionPolicySpec,
  overrides: readonly SeverityOverride[],
): DetectionPolicySpec {
  const replaced = new Set(overrides.map((o) => key(o.check, o.code)));
  return {
    ...base,
    severity: [...base.severity.filter((o) => !replaced.has(key(o.check, o.code))), ...overrides],
  };
}

interface Scored {
  fired: Set<string>;
  label: Label;
  subject: RescoreSubject;
}

function rates(items: readonly Scored[], scores: readonly number[]): Rates {
  let falsePositives = 0;
  let detected = 0;
  let genuine = 0;
  let fraud = 0;
  items.forEach((it, i) => {
    const high = (scores[i] ?? 0) >= DECISION_SCORE;
    if (it.label === "genuine") {
      genuine++;
      if (high) falsePositives++;
    } else {
      fraud++;
      if (high) detected++;
    }
  });
  return { falsePositives, genuine, detected, fraud };
}

/** Detection rate minus false-positive rate (Youden's J): what an override must raise. */
const youden = (r: Rates) =>
  (r.fraud ? r.detected / r.fraud : 0) - (r.genuine ? r.falsePositives / r.genuine : 0);

const scoreUnder = (s: RescoreSubject, policy: DetectionPolicySpec) => rescore(s, policy).newScore ?? 0;

/** The stats of every code that fired, and which are eligible (on `items`). */
function codeStats(items: readonly Scored[]): CodeStats[] {
  const by = new Map<string, CodeStats>();
  for (const it of items)
    for (const k of it.fired) {
      const [check, code] = k.split("\u0000") as [string, string];
      const s = by.get(k) ?? { check, code, firedGenuine: 0, firedFraud: 0, eligible: false };
      if (it.label === "genuine") s.firedGenuine++;
      else s.firedFraud++;
      by.set(k, s);
    }
  for (const s of by.values())
    s.eligible =
      s.firedGenuine + s.firedFraud >= MIN_FIRED &&
      !(UNSWITCHABLE_CHECKS as readonly string[]).includes(s.check);
  return [...by.values()].sort(
    (a, b) =>
      b.firedGenuine + b.firedFraud - (a.firedGenuine + a.firedFraud) ||
      a.check.localeCompare(b.check) ||
      a.code.localeCompare(b.code),
  );
}

/**
 * The overrides chosen on `items` (one pass over the eligible codes, most frequent first): for each, the
 * candidate severity with the highest detection rate minus false-positive rate, when that is higher than
 * with the current severity; the current severity otherwise.
 */
export function chooseOverrides(items: readonly Scored[], base: DetectionPolicySpec): SeverityOverride[] {
  const chosen: SeverityOverride[] = [];
  let policy = base;
  let scores = items.map((it) => scoreUnder(it.subject, policy));
  for (const stat of codeStats(items).filter((s) => s.eligible)) {
    const k = key(stat.check, stat.code);
    const touched = items.map((it, i) => (it.fired.has(k) ? i : -1)).filter((i) => i >= 0);
    const now = rates(items, scores);
    let best: { override: SeverityOverride; scores: number[]; r: Rates } | undefined;
    for (const severity of CANDIDATE_SEVERITIES) {
      const override: SeverityOverride = {
        check: stat.check,
        code: stat.code,
        severity,
        reason: `calibration: fired on ${stat.firedGenuine} genuine and ${stat.firedFraud} fraud labelled documents`,
      };
      const candidate = withOverrides(policy, [
        ...chosen.filter((o) => key(o.check, o.code) !== k),
        override,
      ]);
      const next = [...scores];
      for (const i of touched) next[i] = scoreUnder(items[i]!.subject, candidate);
      const r = rates(items, next);
      if (youden(r) <= youden(best?.r ?? now)) continue;
      best = { override, scores: next, r };
    }
    if (best) {
      chosen.push(best.override);
      policy = withOverrides(base, chosen);
      scores = best.scores;
    }
  }
  return chosen;
}

/** Folds stratified by label and by the codes that fired, then by id: deterministic. */
function folds(items: readonly Scored[], k: number): number[] {
  const order = items
    .map((it, i) => ({ i, sig: `${it.label}|${[...it.fired].sort().join(",")}|${it.subject.id}` }))
    .sort((a, b) => a.sig.localeCompare(b.sig));
  const fold = new Array<number>(items.length).fill(0);
  order.forEach((o, n) => {
    fold[o.i] = n % k;
  });
  return fold;
}

/**
 * The 95% Wilson interval of a rate measured as `x` of `n`, widened for a new sample of `m`: the spread of
 * what a new set of m documents shows is that of the estimate plus its own (effective size nm/(n+m)).
 */
export function predictionInterval(x: number, n: number, m: number = n): [number, number] {
  if (n === 0) return [0, 1];
  const p = x / n;
  const eff = (n * m) / (n + m);
  const z = 1.96;
  const denom = 1 + (z * z) / eff;
  const centre = (p + (z * z) / (2 * eff)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / eff + (z * z) / (4 * eff * eff))) / denom;
  const round = (v: number) => Math.round(v * 10_000) / 10_000;
  return [round(Math.max(0, centre - half)), round(Math.min(1, centre + half))];
}

/** The report over a tenant's labelled detections, starting from `base` (its policy in force). */
export function calibrationReport(
  labelled: readonly LabelledDetection[],
  base: DetectionPolicySpec,
  opts: { folds?: number; futureSize?: number } = {},
): CalibrationReport {
  const items: Scored[] = labelled.map((l) => ({ ...l, fired: firedCodes(l.subject) }));
  const k = Math.max(2, Math.min(opts.folds ?? FOLDS, items.length));
  const current = rates(
    items,
    items.map((it) => scoreUnder(it.subject, base)),
  );
  const foldOf = folds(items, k);
  const heldOut: number[] = new Array(items.length).fill(0);
  for (let f = 0; f < k; f++) {
    const train = items.filter((_, i) => foldOf[i] !== f);
    const policy = withOverrides(base, chooseOverrides(train, base));
    items.forEach((it, i) => {
      if (foldOf[i] === f) heldOut[i] = scoreUnder(it.subject, policy);
    });
  }
  const expected = rates(items, heldOut);
  const genuineFuture = opts.futureSize ?? expected.genuine;
  const fraudFuture = opts.futureSize ?? expected.fraud;
  return {
    minFired: MIN_FIRED,
    folds: k,
    labelled: { genuine: current.genuine, fraud: current.fraud },
    codes: codeStats(items),
    current,
    proposal: { severity: chooseOverrides(items, base) },
    expected: {
      ...expected,
      fpr: expected.genuine ? expected.falsePositives / expected.genuine : 0,
      detection: expected.fraud ? expected.detected / expected.fraud : 0,
      fprInterval: predictionInterval(expected.falsePositives, expected.genuine, genuineFuture),
      detectionInterval: predictionInterval(expected.detected, expected.fraud, fraudFuture),
    },
  };
}
