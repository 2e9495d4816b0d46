import { AgentStepResult, CheckStepResult, keys, PrepareResult, type StepName } from "./detection.js";
import { EvidenceManifest } from "./evidence.js";
import type { ObjectStore } from "./ports.js";
import { defineStored, readStored, type StoredRead, writeStored } from "./stored.js";

/**
 * What the steps store (core/stored.ts): the full result each step writes (`runs/<detection>/<step>.json`),
 * one stored kind per step, and the check step's evidence manifest. The step runtime writes the results;
 * the reconciler, the agent (the check step's) and the API (the check step's and the manifest, for the
 * evidence) read them through `readStepResult` / `readStored`.
 */
export const STEP_RESULTS = {
  prepare: defineStored({
    what: "the prepare step's result",
    key: (detection: string) => keys.result(detection, "prepare"),
    schema: PrepareResult,
  }),
  check: defineStored({
    what: "the check step's result",
    key: (detection: string) => keys.result(detection, "check"),
    schema: CheckStepResult,
  }),
  agent: defineStored({
    what: "the agent step's result",
    key: (detection: string) => keys.result(detection, "agent"),
    schema: AgentStepResult,
  }),
} as const;

/** The reviewer's evidence manifest the check step stores beside the page images (docs/evidence.md). */
export const EVIDENCE_MANIFEST = defineStored({
  what: "the evidence manifest",
  key: (detection: string) => keys.evidence(detection),
  schema: EvidenceManifest,
});

/** A step's full result as the step wrote it. */
export type StepResult = PrepareResult | CheckStepResult | AgentStepResult;
export type StepResultOf<S extends StepName> = {
  prepare: PrepareResult;
  check: CheckStepResult;
  agent: AgentStepResult;
}[S];

/** Reads and validates step `step`'s result of `detection`. */
export function readStepResult<S extends StepName>(
  objects: ObjectStore,
  bucket: string,
  detection: string,
  step: S,
): Promise<StoredRead<StepResultOf<S>>> {
  const kind = STEP_RESULTS[step] as (typeof STEP_RESULTS)["check"];
  return readStored(objects, bucket, kind, detection) as Promise<StoredRead<StepResultOf<S>>>;
}

/** Validates and writes step `result.step`'s result of `detection`; returns its key. */
export function writeStepResult(
  objects: ObjectStore,
  bucket: string,
  detection: string,
  result: StepResult,
): Promise<string> {
  const kind = STEP_RESULTS[result.step] as (typeof STEP_RESULTS)["check"];
  return writeStored(objects, bucket, kind, result as CheckStepResult, detection);
}
