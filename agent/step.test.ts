import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CheckResult } from "../core/check-result.js";
import { loadConfig } from "../core/config.js";
import { AgentStepResult, type CheckStepResult, keys, type StepInput } from "../core/detection.js";
import { FAILURE_MESSAGES } from "../core/failure-codes.js";
import { type ObjectStore, systemClock } from "../core/ports.js";
import type { StepContext } from "../core/step-context.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import type { AgentEngine } from "./engine.js";
import { createRulesEngine } from "./rules-engine.js";
import { MAX_TEXT_CHARS, readTextHead, runAgentStep } from "./step.js";

const BUCKET = "docverify";
const DETECTION = "det-01jqz8t3m2k4n5p6q7r8s9t0vw";
const RUN_ID = /^run-[0-9a-hjkmnp-tv-z]{26}$/;

const STATEMENT_TEXT = `--- page 1 ---
Northbridge Bank plc — Bank Statement
Sort code 20-45-77   Account number 41234567
Statement period 01/03/2025 to 31/03/2025
--- page 2 ---
Opening balance £2,314.08   Closing balance £3,959.88`;

const datesFlag: CheckResult = {
  checkId: "metadata.dates",
  outcome: "flag",
  severity: 9,
  summary: "The PDF was modified before it was created.",
  findings: [
    {
      code: "modified_before_created",
      message: "The modification date is earlier than the creation date.",
      severity: 9,
      evidence: { created: "2025-04-02T10:00:00Z", modified: "2024-11-30T08:12:00Z" },
    },
  ],
};

let root: string;
let objects: ObjectStore;

function context(env: Record<string, string> = {}): StepContext {
  return {
    objects,
    bucket: BUCKET,
    config: loadConfig(env),
    log: pino({ level: "silent" }),
    clock: systemClock,
  };
}

const stepInput = (docType: StepInput["spec"]["docType"] = "bank_statement"): StepInput => ({
  detection: DETECTION,
  step: "agent",
  attempt: 1,
  spec: {
    source: { url: "https://example.com/statement.pdf" },
    docType,
    region: "GB",
    submittedBy: "client-a",
    sample: false,
    priority: "interactive",
  },
});

async function writeCheckResult(result: Partial<CheckStepResult> = {}): Promise<void> {
  const full: CheckStepResult = {
    step: "check",
    checks: [datesFlag],
    discovered: ["metadata_present"],
    textKey: keys.text(DETECTION),
    ...result,
  };
  await objects.put(BUCKET, keys.result(DETECTION, "check"), JSON.stringify(full), {
    contentType: "application/json",
  });
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "docverify-agent-"));
  objects = createLocalObjectStore(root);
  await objects.ensureBucket(BUCKET);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("runAgentStep", () => {
  it("reads the check results and text from the object store and returns a verdict", async () => {
    await writeCheckResult();
    await objects.put(BUCKET, keys.text(DETECTION), STATEMENT_TEXT);
    const result = await runAgentStep(stepInput(), context());

    expect(AgentStepResult.safeParse(result).success).toBe(true);
    expect(result.failure).toBeUndefined();
    expect(result.error).toBeUndefined();
    expect(result.runId).toMatch(RUN_ID);
    expect(result.engine).toBe("rules");
    expect(result.verdict?.fraudScore).toBeGreaterThanOrEqual(60);
    expect(result.verdict?.documentTypeMatch).toBe(true);
    expect(result.verdict?.actualDocType).toBe("bank_statement");
    expect(result.verdict?.perCheck).toEqual([
      expect.objectContaining({ checkId: "metadata.dates", importance: expect.any(Number) }),
    ]);
    expect(result.verdict?.reasoning).toContain("2024-11-30T08:12:00Z");
    expect(result.verdict?.reasoning).toContain("metadata_present");
  });

  it("reads the text from the key the check result names", async () => {
    const textKey = `runs/${DETECTION}/extracted/other-text.txt`;
    await writeCheckResult({ checks: [], textKey });
    await objects.put(BUCKET, textKey, STATEMENT_TEXT);
    const result = await runAgentStep(stepInput("payslip"), context());
    expect(result.verdict?.documentTypeMatch).toBe(false);
    expect(result.verdict?.actualDocType).toBe("bank statement");
  });

  it("analyses the check results alone when there is no text", async () => {
    await writeCheckResult({ checks: [] });
    const result = await runAgentStep(stepInput(), context());
    expect(result.verdict?.fraudScore).toBeLessThan(20);
    expect(result.verdict?.reasoning).toContain("no extractable text");
  });

  it("fails with agent_failed when the check results are missing", async () => {
    const result = await runAgentStep(stepInput(), context());
    expect(AgentStepResult.safeParse(result).success).toBe(true);
    expect(result.failure).toEqual({ code: "agent_failed", message: FAILURE_MESSAGES.agent_failed });
    expect(result.error).toMatch(/check results of this detection are missing/);
    expect(result.error).toContain(keys.result(DETECTION, "check"));
    expect(result.runId).toMatch(RUN_ID);
    expect(result.engine).toBe("rules");
    expect(result.verdict).toBeUndefined();
  });

  it("fails with agent_failed when the check results are not valid JSON or not the expected shape", async () => {
    await objects.put(BUCKET, keys.result(DETECTION, "check"), "{ not json");
    const broken = await runAgentStep(stepInput(), context());
    expect(broken.failure?.code).toBe("agent_failed");
    expect(broken.error).toMatch(/not valid JSON/);

    await objects.put(
      BUCKET,
      keys.result(DETECTION, "check"),
      JSON.stringify({ step: "check", checks: "none" }),
    );
    const misshapen = await runAgentStep(stepInput(), context());
    expect(misshapen.failure?.code).toBe("agent_failed");
    expect(misshapen.error).toMatch(/do not have the expected shape \(checks: /);
  });

  it("fails with agent_failed when the check step itself failed", async () => {
    await writeCheckResult({
      checks: [],
      failure: { code: "check_failed", message: FAILURE_MESSAGES.check_failed },
    });
    const result = await runAgentStep(stepInput(), context());
    expect(result.failure?.code).toBe("agent_failed");
    expect(result.error).toContain("check_failed");
  });

  it("refuses an llm engine without its URL or model, saying which variables to set", async () => {
    await writeCheckResult();
    const result = await runAgentStep(stepInput(), context({ DOCVERIFY_AGENT_ENGINE: "llm" }));
    expect(result.failure).toEqual({ code: "agent_failed", message: FAILURE_MESSAGES.agent_failed });
    expect(result.error).toBe(
      "The llm agent engine is not configured: set DOCVERIFY_LLM_URL (an OpenAI-compatible base URL such as " +
        "http://vllm:8000/v1) and DOCVERIFY_LLM_MODEL (the model name the endpoint serves), or set " +
        "DOCVERIFY_AGENT_ENGINE=rules.",
    );
    expect(result.engine).toBe("llm");
    expect(result.runId).toMatch(RUN_ID);
    expect(result.verdict).toBeUndefined();

    const noModel = await runAgentStep(
      stepInput(),
      context({ DOCVERIFY_AGENT_ENGINE: "llm", DOCVERIFY_LLM_URL: "http://127.0.0.1:9/v1" }),
    );
    expect(noModel.error).toMatch(/^The llm agent engine is not configured: set DOCVERIFY_LLM_MODEL \(/);

    const badUrl = await runAgentStep(
      stepInput(),
      context({
        DOCVERIFY_AGENT_ENGINE: "llm",
        DOCVERIFY_LLM_URL: "ftp://models/v1",
        DOCVERIFY_LLM_MODEL: "m",
      }),
    );
    expect(badUrl.failure?.code).toBe("agent_failed");
    expect(badUrl.error).toMatch(/^DOCVERIFY_LLM_URL is not an http\(s\) URL; set it to/);
  });

  it("uses the fallback engine's verdict when the engine fails, keeping the error", async () => {
    await writeCheckResult();
    await objects.put(BUCKET, keys.text(DETECTION), STATEMENT_TEXT);
    const crashing: AgentEngine = {
      name: "crashing",
      async analyze() {
        throw new Error("boom");
      },
    };
    const result = await runAgentStep(stepInput(), context(), {
      engine: crashing,
      fallback: createRulesEngine(),
    });
    expect(AgentStepResult.safeParse(result).success).toBe(true);
    expect(result.failure).toBeUndefined();
    expect(result.engine).toBe("rules");
    expect(result.verdict?.fraudScore).toBeGreaterThanOrEqual(60);
    expect(result.error).toBe(
      "The crashing agent engine failed: boom; the rules engine's verdict was used instead.",
    );
  });

  it("turns an engine exception into agent_failed with one sentence and no stack", async () => {
    await writeCheckResult();
    const crashing: AgentEngine = {
      name: "crashing",
      async analyze() {
        const err = new Error("the model endpoint answered 503:\n    at analyze (engine.ts:1:1)");
        throw err;
      },
    };
    const result = await runAgentStep(stepInput(), context(), { engine: crashing });
    expect(result.failure?.code).toBe("agent_failed");
    expect(result.error).toBe("The crashing agent engine failed: the model endpoint answered 503.");
    expect(result.engine).toBe("crashing");
    expect(result.runId).toMatch(RUN_ID);
  });

  it("rejects an invalid verdict from an engine", async () => {
    await writeCheckResult();
    const sloppy: AgentEngine = {
      name: "sloppy",
      async analyze() {
        return {
          fraudScore: 140,
          documentTypeMatch: true,
          actualDocType: null,
          reasoning: null,
          perCheck: [],
        };
      },
    };
    const result = await runAgentStep(stepInput(), context(), { engine: sloppy });
    expect(result.failure?.code).toBe("agent_failed");
    expect(result.error).toMatch(/^The sloppy agent engine produced an invalid verdict \(fraudScore: /);
  });

  it("gives every run its own id", async () => {
    await writeCheckResult();
    const a = await runAgentStep(stepInput(), context());
    const b = await runAgentStep(stepInput(), context());
    expect(a.runId).not.toBe(b.runId);
  });
});

describe("readTextHead", () => {
  it("returns short text whole", async () => {
    await objects.put(BUCKET, "t/short.txt", "Grüße aus Köln");
    expect(await readTextHead(objects, BUCKET, "t/short.txt")).toBe("Grüße aus Köln");
  });

  it("bounds long text to the maximum number of characters, multi-byte characters intact", async () => {
    const long = "ä€𝄞x".repeat(Math.ceil(MAX_TEXT_CHARS / 4) + 5000);
    await objects.put(BUCKET, "t/long.txt", long);
    const head = await readTextHead(objects, BUCKET, "t/long.txt");
    expect(head).toHaveLength(MAX_TEXT_CHARS);
    expect(head).toBe(long.slice(0, MAX_TEXT_CHARS));
    expect(await readTextHead(objects, BUCKET, "t/long.txt", 7)).toBe("ä€𝄞x".repeat(2).slice(0, 7));
  });
});
