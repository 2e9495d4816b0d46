import type { Config } from "../core/config.js";
import { type AgentEngine, AgentError } from "./engine.js";
import { createRulesEngine } from "./rules-engine.js";

export type EngineSelection =
  | { ok: true; engine: AgentEngine }
  | { ok: false; name: string; error: AgentError };

/**
 * The engine DOCVERIFY_AGENT_ENGINE names. `rules` is the default; `llm` is reserved for the
 * OpenAI-compatible engine of a later version and is refused with a clear error rather than imitated.
 */
export function selectEngine(config: Pick<Config, "agentEngine">): EngineSelection {
  switch (config.agentEngine) {
    case "rules":
      return { ok: true, engine: createRulesEngine() };
    case "llm":
      return {
        ok: false,
        name: "llm",
        error: new AgentError(
          "engine_unavailable",
          "The llm agent engine is not available in this version; set DOCVERIFY_AGENT_ENGINE=rules.",
        ),
      };
    default: {
      const name = String(config.agentEngine satisfies never);
      return {
        ok: false,
        name,
        error: new AgentError(
          "engine_unavailable",
          `The agent engine "${name}" is unknown; set DOCVERIFY_AGENT_ENGINE=rules.`,
        ),
      };
    }
  }
}
