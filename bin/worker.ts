import { runWorkerLoop } from "../platform/local/worker.js";
import { executeStep } from "./step-runtime.js";

/** `docverify worker`: a warm process of the standalone runner; runs steps sent over IPC, one at a time. */
export async function runWorker(): Promise<number> {
  runWorkerLoop((step, owner, env) => executeStep(step, { ...env, DOCVERIFY_DETECTION: owner }));
  return -1; // keeps running until the parent disconnects
}
