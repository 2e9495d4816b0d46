import type { StepName } from "../core/detection.js";
import { executeStep } from "./step-runtime.js";

/** `docverify <step> --detection <id>`: one step as its own process; the summary is the last stdout line. */
export async function runStepCommand(step: StepName, args: string[]): Promise<number> {
  const i = args.indexOf("--detection");
  const detection = i >= 0 ? args[i + 1] : undefined;
  if (!detection) {
    process.stderr.write(`docverify ${step}: --detection <id> is required\n`);
    return 2;
  }
  const env = { ...process.env, DOCVERIFY_DETECTION: detection };
  const { exitCode, message } = await executeStep(step, env);
  process.stdout.write(`${message}\n`);
  return exitCode;
}
