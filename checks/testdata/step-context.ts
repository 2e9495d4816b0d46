import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { type Config, loadConfig } from "../../core/config.js";
import type { StepInput } from "../../core/detection.js";
import { type Clock, systemClock } from "../../core/ports.js";
import type { StepContext } from "../../core/step-context.js";
import { createLocalObjectStore } from "../../platform/local/object-store.js";

/** A StepContext on a real local object store in a fresh temp directory, for tests of the steps. */
export interface TestStepContext extends StepContext {
  cleanup(): Promise<void>;
}

export async function createTestStepContext(
  overrides: Partial<Config> = {},
  clock: Clock = systemClock,
): Promise<TestStepContext> {
  const root = await mkdtemp(path.join(os.tmpdir(), "docverify-checks-"));
  const objects = createLocalObjectStore(root);
  const config = { ...loadConfig({}), dataDir: root, ...overrides };
  await objects.ensureBucket(config.bucket);
  return {
    objects,
    bucket: config.bucket,
    config,
    log: pino({ level: "silent" }),
    clock,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

let counter = 0;

export function stepInput(
  step: StepInput["step"],
  spec: Partial<StepInput["spec"]> & Pick<StepInput["spec"], "source">,
  document?: StepInput["document"],
): StepInput {
  counter++;
  return {
    detection: `det-test-${process.pid}-${counter}`,
    step,
    attempt: 1,
    spec: {
      docType: "bank_statement",
      region: "GB",
      submittedBy: "client-a",
      sample: false,
      priority: "interactive",
      ...spec,
    },
    ...(document ? { document } : {}),
  };
}
