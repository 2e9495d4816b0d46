// First import: captures the native JSON.stringify before the step code loads pdfjs (see native-json.ts).
import { restoreNativeJson } from "./native-json.js";
import pino from "pino";
import { type Config, loadConfig } from "../core/config.js";
import { StepInput, type StepName, type StepSummary } from "../core/detection.js";
import { type StepResult, writeStepResult } from "../core/step-results.js";
import { type ObjectStore, systemClock } from "../core/ports.js";
import type { StepContext } from "../core/step-context.js";
import { NEUTRAL_LINES } from "./logging.js";
import { createObjectStoreMemory } from "../platform/memory/object-store-memory.js";
import { objectStoreFor, s3ObjectStoreFor } from "./object-stores.js";
import { loadMemoryKey } from "./secrets.js";

/**
 * Runs one step with its configuration taken from `env` (never process.env directly, so a warm worker can
 * run steps with different environments): builds the StepContext, runs the step, writes the full result to
 * the object store and returns the summary line (≤ 4 KB). Exit code 0 = result written.
 */
type StepFunction = (input: StepInput, ctx: StepContext) => Promise<{ failure?: StepSummary["failure"] }>;

/**
 * Each step's code is imported only when that step runs, so a process loads only its own step: the
 * prepare step (which reads untrusted bytes off the network) never loads the PDF parser, the renderer or
 * the OCR engine, and starts faster. A warm worker imports each step once, on first use.
 */
const STEPS: Record<StepName, () => Promise<StepFunction>> = {
  prepare: async () => (await import("../prepare/step.js")).runPrepareStep,
  check: async () => (await import("../checks/step.js")).runCheckStep,
  agent: async () => (await import("../agent/step.js")).runAgentStep,
};

export async function loadStep(step: StepName): Promise<StepFunction> {
  const run = await STEPS[step]();
  // The check step's pdfjs replaces JSON.stringify on import (see native-json.ts): put the native one back.
  restoreNativeJson();
  return run;
}

/**
 * The object store a step uses: S3 in a step Pod (the pod runner sets DOCVERIFY_RUNTIME=cluster), else
 * the standalone data directory.
 */
function stepObjectStore(config: Config, env: Record<string, string | undefined>): ObjectStore {
  return env.DOCVERIFY_RUNTIME === "cluster" ? s3ObjectStoreFor(config) : objectStoreFor(config.dataDir);
}

export async function executeStep(
  step: StepName,
  env: Record<string, string | undefined>,
): Promise<{ exitCode: number; message: string }> {
  const config = loadConfig(env);
  const rawInput = env.DOCVERIFY_STEP_INPUT;
  const log = pino(
    { level: config.logLevel, base: { step, detection: env.DOCVERIFY_DETECTION }, hooks: NEUTRAL_LINES },
    pino.destination({ fd: 2, sync: true }),
  );
  const summary = (s: StepSummary) => JSON.stringify(s).slice(0, 4096);
  try {
    if (!rawInput)
      throw new Error("DOCVERIFY_STEP_INPUT is not set; the reconciler passes the step input in it.");
    const input = StepInput.parse(JSON.parse(rawInput));
    if (input.step !== step)
      throw new Error(`DOCVERIFY_STEP_INPUT is for the ${input.step} step, not ${step}.`);
    const ctx: StepContext = {
      objects: stepObjectStore(config, env),
      bucket: config.bucket,
      config,
      log: log.child({ attempt: input.attempt }),
      clock: systemClock,
    };
    await ctx.objects.ensureBucket(ctx.bucket);
    if (step === "check") {
      // The tenant memory (issue 23): only the check step looks up and fingerprints.
      const cluster = env.DOCVERIFY_RUNTIME === "cluster";
      const key = await loadMemoryKey(config, cluster ? undefined : config.dataDir);
      if (key) ctx.memory = { store: createObjectStoreMemory(ctx.objects, ctx.bucket), key };
      else if (config.memory.enabled)
        ctx.log.warn("the tenant memory is on but no DOCVERIFY_MEMORY_KEY is set: nothing is remembered");
    }
    const run = await loadStep(step);
    // How long the process took to get here (one process per step: its start cost, see bench/scale.ts).
    ctx.log.info({ processUptimeMs: Math.round(process.uptime() * 1000) }, "step code loaded");
    const result = await run(input, ctx);
    const resultKey = await writeStepResult(ctx.objects, ctx.bucket, input.detection, result as StepResult);
    return {
      exitCode: 0,
      message: summary({ ok: !result.failure, step, resultKey, failure: result.failure }),
    };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log.error({ err }, "step crashed");
    return { exitCode: 1, message: summary({ ok: false, step, error: message }) };
  }
}
