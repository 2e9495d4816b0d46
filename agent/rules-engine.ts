import { DEFAULT_POLICY } from "../core/policy.js";
import type { DocType, PerCheck, Verdict } from "../core/verdict.js";
import { type Classification, classifyDocument, documentWords } from "./classify.js";
import type { AgentEngine, AgentInput } from "./engine.js";
import { applyPolicy, POLICY_CHECK_ID, type PolicyApplication } from "./policy.js";
import { checkReasoning, writeReasoning } from "./reasoning.js";
import {
  computeScore,
  importanceOf,
  SCORING,
  type ScoreBreakdown,
  type ScoringConstants,
  type TypeAssessment,
} from "./score.js";

export { SCORING, type ScoringConstants } from "./score.js";

export interface DocTypeDecision extends TypeAssessment {
  documentTypeMatch: boolean;
  actualDocType: string;
  /** True when the classifier recognised a type with at least SCORING.mismatchMinConfidence. */
  recognised: boolean;
}

/**
 * Declared vs classified type (ARCHITECTURE.md, "Decisions: actual_doc_type"; docs/decisions.md, "Declared
 * type"). The classifier's type counts only when it is recognised: confidence ≥ SCORING.mismatchMinConfidence
 * (0.5). Below that the text is treated as not identifying any type.
 * - declared `other` claims nothing: a match; actual_doc_type names a recognised type in plain words, and
 *   repeats `other` when none was recognised;
 * - a recognised type different from the declared one: no match, actual_doc_type in plain words;
 * - otherwise a match, and actual_doc_type repeats the declared value (unconfirmed when the text did not
 *   show the declared type: the reasoning says it could not be confirmed).
 */
export function decideDocType(
  declared: DocType,
  c: Classification,
  k: ScoringConstants = SCORING,
): DocTypeDecision {
  const recognised = c.docType !== "other" && c.confidence >= k.mismatchMinConfidence;
  const base = { confidence: c.confidence, mismatch: false, unconfirmed: false, recognised };
  if (declared === "other")
    return { ...base, documentTypeMatch: true, actualDocType: recognised ? c.plainWords : declared };
  if (c.docType === declared) return { ...base, documentTypeMatch: true, actualDocType: declared };
  if (recognised) return { ...base, mismatch: true, documentTypeMatch: false, actualDocType: c.plainWords };
  return { ...base, unconfirmed: true, documentTypeMatch: true, actualDocType: declared };
}

/** The rules engine's verdict together with what it was computed from (the LLM engine builds on it). */
export interface RulesAnalysis {
  verdict: Verdict;
  classification: Classification;
  type: DocTypeDecision;
  breakdown: ScoreBreakdown;
  /** The tenant policy applied before the score, and what it changed. */
  policy: PolicyApplication;
}

/** Deterministic analysis: classify the text, decide the type, score the checks and write the reasoning. */
export function analyzeWithRules(input: AgentInput, constants: ScoringConstants = SCORING): RulesAnalysis {
  const classification = classifyDocument(input.text);
  const policy = applyPolicy(input.policy ?? DEFAULT_POLICY, input.checks, {
    declaredDocType: input.declaredDocType,
    region: input.region,
    discovered: input.discovered,
    ...input.facts,
  });
  const scoring = policy.bands ? { ...constants, bands: policy.bands } : constants;
  const type = decideDocType(input.declaredDocType, classification, scoring);
  const breakdown = computeScore(policy.checks, type, scoring, {
    ...(input.geometry ? { geometry: new Map(input.geometry.map((g) => [g.number, g])) } : {}),
    overrides: policy.overrides,
  });

  const perCheck: PerCheck[] = policy.checks
    .map((check, i) => {
      const c = breakdown.contributions[i];
      return { check, points: c?.points ?? 0, importance: c ? importanceOf(c) : 0 };
    })
    .filter(({ check }) => check.checkId !== POLICY_CHECK_ID)
    .sort((a, b) => b.importance - a.importance || b.points - a.points)
    .map(({ check, importance }) => ({
      checkId: check.checkId,
      importance,
      reasoning: checkReasoning(check),
    }));

  const reasoning = writeReasoning({
    declaredDocType: input.declaredDocType,
    classification,
    documentTypeMatch: type.documentTypeMatch,
    typeUnconfirmed: type.unconfirmed,
    typeRecognised: type.recognised,
    breakdown,
    checks: policy.checks,
    discovered: input.discovered,
    policy: { ref: policy.policy, departures: policy.departures, isDefault: input.policy === undefined },
    hasText: documentWords(input.text) !== "",
    ...(input.groups ? { groups: input.groups } : {}),
  });

  const verdict: Verdict = {
    fraudScore: breakdown.score,
    documentTypeMatch: type.documentTypeMatch,
    actualDocType: type.actualDocType,
    reasoning,
    perCheck,
    policy: policy.policy,
  };
  return { verdict, classification, type, breakdown, policy };
}

/** The default engine: deterministic rules over the check results and the text's document type. */
export function createRulesEngine(constants: ScoringConstants = SCORING): AgentEngine {
  return {
    name: "rules",
    async analyze(input: AgentInput): Promise<Verdict> {
      return analyzeWithRules(input, constants).verdict;
    },
  };
}
