import type { Config } from "../core/config.js";
import { type AgentEngine, AgentError } from "./engine.js";
import { createLlmClient } from "./llm-client.js";
import { createLlmEngine } from "./llm-engine.js";
import { createRulesEngine } from "./rules-engine.js";

export type EngineSelection =
  | {
      ok: true;
      engine: AgentEngine;
      /** Runs when `engine` fails (DOCVERIFY_LLM_FALLBACK=rules); its verdict is used with the error kept. */
      fallback?: AgentEngine;
    }
  | { ok: false; name: string; error: AgentError };

const unavailable = (name: string, message: string): EngineSelection => ({
  ok: false,
  name,
  error: new AgentError("engine_unavailable", message),
});

/** Time the agent step keeps for itself besides the model calls (reading inputs, writing the result). */
export const STEP_OVERHEAD_MS = 10_000;
const DEFAULT_RETRY_DELAY_MS = 1000;

/**
 * Each model call's timeout: DOCVERIFY_LLM_TIMEOUT_SECONDS, shortened when needed so that both attempts and
 * the pause between them fit in DOCVERIFY_STEP_TIMEOUT_SECONDS (otherwise the step would be killed before
 * it could report agent_error). At least one second.
 */
export function llmCallTimeoutMs(
  llmTimeoutSeconds: number,
  stepTimeoutSeconds: number,
  retryDelayMs: number,
): number {
  const fits = Math.floor((stepTimeoutSeconds * 1000 - STEP_OVERHEAD_MS - retryDelayMs) / 2);
  return Math.max(1000, Math.min(llmTimeoutSeconds * 1000, fits));
}

function selectLlm(
  llm: Config["llm"],
  stepTimeoutSeconds: number,
  options: { retryDelayMs?: number },
): EngineSelection {
  const missing = [
    llm.url ? undefined : "DOCVERIFY_LLM_URL (an OpenAI-compatible base URL such as http://vllm:8000/v1)",
    llm.model ? undefined : "DOCVERIFY_LLM_MODEL (the model name the endpoint serves)",
  ].filter((m): m is string => m !== undefined);
  if (missing.length > 0) {
    return unavailable(
      "llm",
      `The llm agent engine is not configured: set ${missing.join(" and ")}, or set DOCVERIFY_AGENT_ENGINE=rules.`,
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(llm.url as string);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return unavailable(
      "llm",
      "DOCVERIFY_LLM_URL is not an http(s) URL; set it to an OpenAI-compatible base URL such as http://vllm:8000/v1.",
    );
  }
  const retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
  const client = createLlmClient({
    baseUrl: url.href,
    model: llm.model as string,
    apiKey: llm.apiKey,
    timeoutMs: llmCallTimeoutMs(llm.timeoutSeconds, stepTimeoutSeconds, retryDelayMs),
    maxTokens: llm.maxTokens,
  });
  return {
    ok: true,
    engine: createLlmEngine({ client, maxInputChars: llm.maxInputChars, retryDelayMs }),
    ...(llm.fallback === "rules" ? { fallback: createRulesEngine() } : {}),
  };
}

/**
 * The engine DOCVERIFY_AGENT_ENGINE names: `rules` (the default, needs nothing) or `llm` (an
 * OpenAI-compatible model at DOCVERIFY_LLM_URL, with the rules engine as fallback when
 * DOCVERIFY_LLM_FALLBACK=rules). An llm engine without its URL or model is a configuration error that says
 * which variable to set; it does not fall back, so a misconfiguration is seen rather than hidden.
 */
export function selectEngine(
  config: Pick<Config, "agentEngine" | "llm" | "stepTimeoutSeconds">,
  options: { retryDelayMs?: number } = {},
): EngineSelection {
  switch (config.agentEngine) {
    case "rules":
      return { ok: true, engine: createRulesEngine() };
    case "llm":
      return selectLlm(config.llm, config.stepTimeoutSeconds, options);
    default: {
      const name = String(config.agentEngine satisfies never);
      return unavailable(
        name,
        `The agent engine "${name}" is unknown; set DOCVERIFY_AGENT_ENGINE=rules or llm.`,
      );
    }
  }
}
