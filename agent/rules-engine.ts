import type { DocType, PerCheck, Verdict } from "../core/verdict.js";
import { type Classification, classifyDocument, documentWords } from "./classify.js";
import type { AgentEngine, AgentInput } from "./engine.js";
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
}

/** Deterministic analysis: classify the text, decide the type, score the checks and write the reasoning. */
export function analyzeWithRules(input: AgentInput, constants: ScoringConstants = SCORING): RulesAnalysis {
  const classification = classifyDocument(input.text);
  const type = decideDocType(input.declaredDocType, classification, constants);
  const breakdown = computeScore(input.checks, type, constants, {
    ...(input.geometry ? { geometry: new Map(input.geometry.map((g) => [g.number, g])) } : {}),
  });

  const perCheck: PerCheck[] = input.checks
    .map((check, i) => {
      const c = breakdown.contributions[i];
      return { check, points: c?.points ?? 0, importance: c ? importanceOf(c) : 0 };
    })
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
    checks: input.checks,
    discovered: input.discovered,
    hasText: documentWords(input.text) !== "",
    ...(input.groups ? { groups: input.groups } : {}),
  });

  const verdict: Verdict = {
    fraudScore: breakdown.score,
    documentTypeMatch: type.documentTypeMatch,
    actualDocType: type.actualDocType,
    reasoning,
    perCheck,
  };
  return { verdict, classification, type, breakdown };
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
