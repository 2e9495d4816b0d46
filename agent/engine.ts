import type { CheckResult } from "../core/check-result.js";
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
  checks: CheckResult[];
  discovered: string[];
}

/** An analysis engine. The rules engine is the default; an LLM engine can sit beside it later. */
export interface AgentEngine {
  /** Stable name, recorded as AgentStepResult.engine (e.g. `rules`). */
  name: string;
  analyze(input: AgentInput): Promise<Verdict>;
}

export type AgentErrorCode = "engine_unavailable";

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
