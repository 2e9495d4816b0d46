import { STEP_NAMES, type StepName } from "../core/detection.js";
import { runWorkerLoop } from "../platform/local/worker.js";
import { executeStep } from "./step-runtime.js";

/**
 * `docverify worker --step <prepare|check|agent>`: a warm process of the standalone runner's pool for one
 * step kind; runs the steps of that kind sent over IPC, one at a time (and refuses any other kind, so the
 * prepare step never shares a process with the PDF parser, the renderer or the OCR engine).
 */
export async function runWorker(args: string[] = []): Promise<number> {
  const i = args.indexOf("--step");
  const step = i >= 0 ? args[i + 1] : undefined;
  if (step !== undefined && !(STEP_NAMES as readonly string[]).includes(step)) {
    throw new Error(`docverify worker --step takes one of ${STEP_NAMES.join(", ")}, not "${step}".`);
  }
  runWorkerLoop((s, owner, env) => executeStep(s, { ...env, DOCVERIFY_DETECTION: owner }), {
    ...(step !== undefined ? { step: step as StepName } : {}),
  });
  return -1; // keeps running until the parent disconnects
}
