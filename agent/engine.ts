import type { Logger } from "pino";
import type { CheckResult } from "../core/check-result.js";
import type { EvidenceGroup } from "../core/evidence.js";
import type { PageGeometry } from "../core/page-geometry.js";
import type { DetectionPolicySpec } from "../core/policy.js";
import type { DocType, Verdict } from "../core/verdict.js";

/**
 * What an analysis engine sees: the declared facts, the document's extracted text and the check results.
 * Never the raw document (ARCHITECTURE.md, "Steps and their contract").
 */
export interface AgentInput {
  declaredDocType: DocType;
  /** ISO 3166-1 alpha-2, upper case. */
  region: string;
  /** Extracted text with `--- page N ---` markers; may be empty (image documents without OCR text). */
  text: string;
  /** True when `text` is only the head of a longer extracted text (the step reads a bounded amount). */
  textTruncated?: boolean;
  checks: CheckResult[];
  discovered: string[];
  /** The evidence's headline groups the check step stored (numbered as on the page images), when it did. */
  groups?: EvidenceGroup[];
  /** Geometry of the pages with findings, when the check step stored it (agent/score.ts reads it). */
  geometry?: PageGeometry[];
  /** The document's named producer and creator (a policy's producer lists read them). */
  facts?: { producer?: string; creator?: string };
  /** The tenant's policy (core/policy.ts); the default rules when absent. */
  policy?: DetectionPolicySpec;
}

/** The run an analysis belongs to: its id and a logger that already carries it. */
export interface AnalyzeContext {
  runId: string;
  log: Logger;
}

/** An analysis engine: `rules` (the default) or `llm` (an OpenAI-compatible model, agent/llm-engine.ts). */
export interface AgentEngine {
  /** Stable name, recorded as AgentStepResult.engine (e.g. `rules`). */
  name: string;
  analyze(input: AgentInput, run?: AnalyzeContext): Promise<Verdict>;
}

/**
 * engine_unavailable: the configured engine cannot run (unknown, or its configuration is incomplete);
 * model_failed: the language model failed on every attempt.
 */
export type AgentErrorCode = "engine_unavailable" | "model_failed";

/** An agent failure that is a value: a code and one sentence a person can act on. */
export class AgentError extends Error {
  override name = "AgentError";
  constructor(
    readonly code: AgentErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
