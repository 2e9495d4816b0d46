import type { AgentInput } from "./engine.js";
import type { LlmAnswer } from "./llm-prompt.js";
import { capReasoning, groupsOf, writeFindingsSection } from "./reasoning.js";
import type { RulesAnalysis } from "./rules-engine.js";
import { SCORING, type ScoringConstants } from "./score.js";
import { DOC_TYPE_WORDS, DOC_TYPES, type DocType, type PerCheck, type Verdict } from "../core/verdict.js";

/**
 * The hybrid verdict of the LLM engine: the rules engine's verdict and the model's answer, combined so the
 * model can add judgement but cannot argue a deterministic finding away.
 *
 *   blend       = round(rulesWeight × rules score + modelWeight × model score)      (0.5 / 0.5)
 *   decided     = the rules found proof or corroborated evidence (agent/score.ts: the rules score is ≥ 50)
 *   fraud_score = max(rules score, blend) when decided, else min(blend, undecidedCeiling = 49)
 *
 * So with a deterministic decision the model can raise the score but never lower it below the rules score;
 * without one, rules and model count equally inside the band below 50: the model orders documents but
 * cannot, on its own word, make a document "likely tampered" (issue 20: evidence must corroborate). per_check lists every check that ran, in the rules
 * engine's order, with the model's importance and reasoning where it gave them for that check id (ids the
 * model invented are dropped; a check it left out keeps the rules engine's entry). The type decision is the
 * model's, normalised to ARCHITECTURE.md's actual_doc_type rule. The reasoning is the model's, then how the
 * score was combined, then the deterministic findings section with every flagged finding and its evidence.
 */
export const HYBRID = {
  rulesWeight: 0.5,
  modelWeight: 0.5,
} as const;

export type HybridConstants = { [K in keyof typeof HYBRID]: number };

/** The model's own reasoning, quoted at most this long (the whole reasoning stays within 4 KB). */
const MAX_MODEL_REASONING_CHARS = 1500;
const MAX_TYPE_WORDS_CHARS = 80;
const MAX_CHECK_REASONING_CHARS = 600;

export interface HybridScore {
  score: number;
  rulesScore: number;
  modelScore: number;
  blend: number;
  /** True when the rules decided (proof or corroboration): their score is then a floor. */
  decided: boolean;
  /** The floor that applied (0 when none). */
  floor: number;
}

export function hybridScore(
  rulesScore: number,
  modelScore: number,
  decided: boolean,
  h: HybridConstants = HYBRID,
  k: ScoringConstants = SCORING,
): HybridScore {
  const blend = Math.round(h.rulesWeight * rulesScore + h.modelWeight * modelScore);
  const floor = decided ? rulesScore : 0;
  const score = decided
    ? Math.min(100, Math.max(0, floor, blend))
    : Math.min(k.undecidedCeiling, Math.max(0, blend));
  return { score, rulesScore, modelScore, blend, decided, floor };
}

function clip(text: string, max: number): string {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** Plain words for a type the model named: a doc-type value becomes its words ("utility_bill" → "utility bill"). */
function plainWords(answer: string): { words: string; docType?: DocType } {
  const trimmed = clip(answer.replace(/\s+/g, " "), MAX_TYPE_WORDS_CHARS);
  const key = trimmed.toLowerCase().replace(/[\s-]+/g, "_");
  const byKey = DOC_TYPES.find((t) => t === key);
  if (byKey) return { words: DOC_TYPE_WORDS[byKey], docType: byKey };
  const byWords = DOC_TYPES.find((t) => DOC_TYPE_WORDS[t] === trimmed.toLowerCase());
  return byWords ? { words: trimmed, docType: byWords } : { words: trimmed };
}

/**
 * The model's type decision under ARCHITECTURE.md's rule: on a match actual_doc_type is the declared value;
 * otherwise plain words; a declared `other` always matches and names what was found. An answer that says
 * "no match" but names the declared type (or nothing) counts as a match; an empty name falls back to the
 * rules engine's words.
 */
export function normaliseDocType(
  declared: DocType,
  answer: Pick<LlmAnswer, "document_type_match" | "actual_doc_type">,
  rules: Pick<Verdict, "actualDocType">,
): Pick<Verdict, "documentTypeMatch" | "actualDocType"> {
  const named = plainWords(answer.actual_doc_type);
  if (declared === "other") {
    const words = named.words === "" || named.docType === "other" ? rules.actualDocType : named.words;
    return { documentTypeMatch: true, actualDocType: words };
  }
  if (answer.document_type_match || named.words === "" || named.docType === declared) {
    return { documentTypeMatch: true, actualDocType: declared };
  }
  return { documentTypeMatch: false, actualDocType: named.words };
}

/** per_check over every check that ran: the model's entry for a known id where it gave one, else the rules'. */
export function mergePerCheck(rules: PerCheck[], model: LlmAnswer["per_check"]): PerCheck[] {
  const known = new Set(rules.map((r) => r.checkId));
  const byId = new Map<string, LlmAnswer["per_check"][number]>();
  for (const entry of model) {
    if (known.has(entry.check_id) && !byId.has(entry.check_id) && entry.reasoning.trim() !== "") {
      byId.set(entry.check_id, entry);
    }
  }
  return rules.map((r) => {
    const m = byId.get(r.checkId);
    return m
      ? {
          checkId: r.checkId,
          importance: m.importance,
          reasoning: clip(m.reasoning, MAX_CHECK_REASONING_CHARS),
        }
      : r;
  });
}

function scoreParagraph(s: HybridScore, h: HybridConstants): string {
  const base =
    `Score ${s.score}/100, combining the deterministic rules (${s.rulesScore}/100) and the language model's ` +
    `assessment (${s.modelScore}/100) as ${h.rulesWeight} × rules + ${h.modelWeight} × model = ${s.blend}`;
  if (s.decided && s.floor >= s.blend) {
    return (
      `${base}; the deterministic checks decided this document (proof, or two independent kinds of evidence ` +
      `about one value), which keeps the score at least at the rules score (${s.floor}): the model cannot lower it.`
    );
  }
  if (!s.decided && s.blend > s.score) {
    return (
      `${base}; no deterministic finding is proof or corroborated, so the score stays below 50 whatever the ` +
      `model says (${s.score}).`
    );
  }
  return `${base}.`;
}

/** The LLM engine's verdict from the rules analysis and the model's answer. */
export function combineVerdict(
  input: AgentInput,
  rules: RulesAnalysis,
  answer: LlmAnswer,
  opts: { hybrid?: HybridConstants; scoring?: ScoringConstants; model?: string } = {},
): Verdict {
  const h = opts.hybrid ?? HYBRID;
  const score = hybridScore(
    rules.verdict.fraudScore,
    answer.fraud_score,
    rules.breakdown.decisions.length > 0,
    h,
    opts.scoring,
  );
  const type = normaliseDocType(input.declaredDocType, answer, rules.verdict);
  const modelReasoning = clip(answer.reasoning, MAX_MODEL_REASONING_CHARS);
  const by = opts.model ? ` (${opts.model})` : "";
  const reasoning = capReasoning([
    modelReasoning === ""
      ? `The language model${by} gave no reasoning.`
      : `Language model assessment${by}: ${modelReasoning}`,
    scoreParagraph(score, h),
    writeFindingsSection(rules.breakdown, input.groups ?? groupsOf(input.checks)) ??
      "Deterministic findings: no check flagged anything.",
  ]);
  return {
    fraudScore: score.score,
    ...type,
    reasoning,
    perCheck: mergePerCheck(rules.verdict.perCheck, answer.per_check),
  };
}
