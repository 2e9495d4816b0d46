import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";

describe("loadConfig: the llm engine settings", () => {
  it("defaults to the rules engine and documented llm limits", () => {
    const config = loadConfig({});
    expect(config.agentEngine).toBe("rules");
    expect(config.llm).toEqual({
      url: undefined,
      model: undefined,
      apiKey: undefined,
      timeoutSeconds: 60,
      maxTokens: 1500,
      maxInputChars: 60_000,
      fallback: "none",
    });
  });

  it("reads every DOCVERIFY_LLM_ variable", () => {
    const config = loadConfig({
      DOCVERIFY_AGENT_ENGINE: "llm",
      DOCVERIFY_LLM_URL: "http://vllm:8000/v1",
      DOCVERIFY_LLM_MODEL: "meta-llama/Llama-3.1-70B-Instruct",
      DOCVERIFY_LLM_API_KEY: "sk-1",
      DOCVERIFY_LLM_TIMEOUT_SECONDS: "30",
      DOCVERIFY_LLM_MAX_TOKENS: "800",
      DOCVERIFY_LLM_MAX_INPUT_CHARS: "20000",
      DOCVERIFY_LLM_FALLBACK: "rules",
    });
    expect(config.agentEngine).toBe("llm");
    expect(config.llm).toEqual({
      url: "http://vllm:8000/v1",
      model: "meta-llama/Llama-3.1-70B-Instruct",
      apiKey: "sk-1",
      timeoutSeconds: 30,
      maxTokens: 800,
      maxInputChars: 20_000,
      fallback: "rules",
    });
  });

  it("refuses invalid values with the variable's name", () => {
    expect(() => loadConfig({ DOCVERIFY_LLM_FALLBACK: "maybe" })).toThrow(ConfigError);
    expect(() => loadConfig({ DOCVERIFY_LLM_FALLBACK: "maybe" })).toThrow(/DOCVERIFY_LLM_FALLBACK/);
    expect(() => loadConfig({ DOCVERIFY_LLM_TIMEOUT_SECONDS: "0" })).toThrow(/DOCVERIFY_LLM_TIMEOUT_SECONDS/);
    expect(() => loadConfig({ DOCVERIFY_LLM_MAX_INPUT_CHARS: "10" })).toThrow(
      /expected a whole number ≥ 1000/,
    );
  });
});

describe("loadConfig: the review link", () => {
  it("lasts 900 s unless DOCVERIFY_REVIEW_LINK_TTL_SECONDS says otherwise", () => {
    expect(loadConfig({}).reviewLinkTtlSeconds).toBe(900);
    expect(loadConfig({ DOCVERIFY_REVIEW_LINK_TTL_SECONDS: "60" }).reviewLinkTtlSeconds).toBe(60);
    expect(() => loadConfig({ DOCVERIFY_REVIEW_LINK_TTL_SECONDS: "0" })).toThrow(
      /DOCVERIFY_REVIEW_LINK_TTL_SECONDS/,
    );
  });
});

describe("loadConfig: archive and the resource size guard", () => {
  it("archives after an hour by default, 0 keeps, and guards resources at 512 KiB", () => {
    const c = loadConfig({});
    expect(c.archiveAfterSeconds).toBe(3600);
    expect(c.archiveSweepSeconds).toBe(60);
    expect(c.maxResourceBytes).toBe(512 * 1024);
    expect(loadConfig({ DOCVERIFY_ARCHIVE_AFTER_SECONDS: "0" }).archiveAfterSeconds).toBe(0);
    expect(loadConfig({ DOCVERIFY_MAX_RESOURCE_BYTES: "1048576" }).maxResourceBytes).toBe(1048576);
  });

  it("refuses a size guard beyond 1 MiB or below 64 KiB", () => {
    expect(() => loadConfig({ DOCVERIFY_MAX_RESOURCE_BYTES: "2000000" })).toThrow(
      /DOCVERIFY_MAX_RESOURCE_BYTES: expected at most 1048576/,
    );
    expect(() => loadConfig({ DOCVERIFY_MAX_RESOURCE_BYTES: "1000" })).toThrow(
      /DOCVERIFY_MAX_RESOURCE_BYTES: expected a whole number ≥ 65536/,
    );
    expect(() => loadConfig({ DOCVERIFY_ARCHIVE_AFTER_SECONDS: "-1" })).toThrow(
      /DOCVERIFY_ARCHIVE_AFTER_SECONDS/,
    );
  });
});
