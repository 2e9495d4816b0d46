import { closeSync, ftruncateSync, openSync, writeSync } from "node:fs";
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
  const terminationLog = process.env.DOCVERIFY_TERMINATION_LOG;
  if (terminationLog) writeTerminationMessage(terminationLog, message);
  return exitCode;
}

/**
 * In a Pod the summary is also the container's termination message. The kubelet creates that file before
 * the container starts, so it is only written when it exists (opened without O_CREAT): a step run by
 * anything else never creates a stray /dev/termination-log.
 */
export function writeTerminationMessage(file: string, message: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r+");
    ftruncateSync(fd, 0);
    writeSync(fd, message);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT")
      process.stderr.write(`docverify: could not write the termination message to ${file}: ${String(err)}\n`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
