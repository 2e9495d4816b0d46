import type { CheckStepResult, DetectionSpec } from "../core/detection.js";
import type { DetectionPolicySpec, PolicyRef } from "../core/policy.js";
import { analyzeWithRules, SCORING, type ScoringConstants } from "./rules-engine.js";
import { agentInputOf } from "./step.js";

/**
 * A detection re-scored under another policy without re-running its checks (issue 26, docs/tuning.md): the
 * check step's stored result and text go through the rules engine as the agent step gave them
 * (`agentInputOf`), with the other policy. What a policy change would do to a tenant's last detections
 * (`docverify policy dry-run`), and the calibration report's estimate of an override.
 */

/** The score at and above which a detection is reported as likely fraud (the bands' "high" by default). */
export const DECISION_SCORE = 50;

/** What a detection stored that a re-score reads. */
export interface RescoreSubject {
  id: string;
  spec: Pick<DetectionSpec, "docType" | "region">;
  /** The score and policy recorded on the detection, and the engine that gave it. */
  recorded: { score: number | null; policy?: PolicyRef; engine?: string };
  check: CheckStepResult;
  text: string;
}

export interface RescoreRow {
  id: string;
  oldScore: number | null;
  newScore: number | null;
  oldPolicy: PolicyRef | null;
  newPolicy: PolicyRef;
  /** Whether the detection crosses DECISION_SCORE: up (newly at 50 or more), down, or not. */
  crossed: "up" | "down" | null;
  /** Why a detection was not re-scored (its score stays). */
  note?: string;
}

/** Re-scores one detection under `policy` (undefined: the default rules). */
export function rescore(
  s: RescoreSubject,
  policy: DetectionPolicySpec | undefined,
  constants: ScoringConstants = SCORING,
): RescoreRow {
  const newPolicy: PolicyRef = policy
    ? { name: policy.name, version: policy.version }
    : { name: "default", version: 1 };
  const base = { id: s.id, oldScore: s.recorded.score, oldPolicy: s.recorded.policy ?? null, newPolicy };
  if (s.recorded.score === null)
    return {
      ...base,
      newScore: null,
      crossed: null,
      note: "decided by an authoritative check (signature.pdf): no score for a policy to change",
    };
  if (s.recorded.engine !== undefined && s.recorded.engine !== "rules")
    return {
      ...base,
      newScore: s.recorded.score,
      crossed: null,
      note: `scored by the ${s.recorded.engine} engine, whose answer is not recorded on the detection: not re-scored`,
    };
  const verdict = analyzeWithRules(agentInputOf(s.spec, s.check, s.text, policy), constants).verdict;
  const newScore = verdict.fraudScore;
  const was = s.recorded.score >= DECISION_SCORE;
  const is = newScore >= DECISION_SCORE;
  return { ...base, newScore, crossed: was === is ? null : is ? "up" : "down" };
}

export interface RescoreSummary {
  total: number;
  rescored: number;
  changed: number;
  /** Newly at DECISION_SCORE or more / newly below it. */
  crossedUp: number;
  crossedDown: number;
  notRescored: number;
}

export function summarizeRescore(rows: readonly RescoreRow[]): RescoreSummary {
  const rescored = rows.filter((r) => r.note === undefined);
  return {
    total: rows.length,
    rescored: rescored.length,
    changed: rescored.filter((r) => r.newScore !== r.oldScore).length,
    crossedUp: rows.filter((r) => r.crossed === "up").length,
    crossedDown: rows.filter((r) => r.crossed === "down").length,
    notRescored: rows.length - rescored.length,
  };
}
