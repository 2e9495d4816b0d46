import { describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.js";
import { llmCallTimeoutMs, STEP_OVERHEAD_MS, selectEngine } from "./select-engine.js";

describe("selectEngine", () => {
  it("selects the rules engine by default, with no fallback", () => {
    const selection = selectEngine(loadConfig({}));
    expect(selection.ok && selection.engine.name).toBe("rules");
    expect(selection.ok && selection.fallback).toBeUndefined();
  });

  it("selects the llm engine when configured, with the rules engine as fallback only when asked", () => {
    const env = {
      DOCVERIFY_AGENT_ENGINE: "llm",
      DOCVERIFY_LLM_URL: "http://vllm:8000/v1",
      DOCVERIFY_LLM_MODEL: "m",
    };
    const plain = selectEngine(loadConfig(env));
    expect(plain.ok && plain.engine.name).toBe("llm");
    expect(plain.ok && plain.fallback).toBeUndefined();

    const withFallback = selectEngine(loadConfig({ ...env, DOCVERIFY_LLM_FALLBACK: "rules" }));
    expect(withFallback.ok && withFallback.engine.name).toBe("llm");
    expect(withFallback.ok && withFallback.fallback?.name).toBe("rules");
  });

  it("does not fall back when the llm engine is misconfigured", () => {
    const selection = selectEngine(
      loadConfig({
        DOCVERIFY_AGENT_ENGINE: "llm",
        DOCVERIFY_LLM_MODEL: "m",
        DOCVERIFY_LLM_FALLBACK: "rules",
      }),
    );
    expect(selection.ok).toBe(false);
    expect(!selection.ok && selection.error.code).toBe("engine_unavailable");
    expect(!selection.ok && selection.error.message).toMatch(
      /^The llm agent engine is not configured: set DOCVERIFY_LLM_URL /,
    );
  });
});

describe("llmCallTimeoutMs", () => {
  it("uses DOCVERIFY_LLM_TIMEOUT_SECONDS when two attempts fit in the step timeout", () => {
    expect(llmCallTimeoutMs(60, 300, 1000)).toBe(60_000);
  });

  it("shortens each call so both attempts and the pause fit in the step timeout", () => {
    const ms = llmCallTimeoutMs(60, 120, 1000);
    expect(ms).toBe((120_000 - STEP_OVERHEAD_MS - 1000) / 2);
    expect(2 * ms + 1000 + STEP_OVERHEAD_MS).toBeLessThanOrEqual(120_000);
  });

  it("never goes below one second", () => {
    expect(llmCallTimeoutMs(60, 5, 1000)).toBe(1000);
  });
});
