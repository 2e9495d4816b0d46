import type { Logger } from "pino";
import type { Config } from "./config.js";
import type { Clock, ObjectStore } from "./ports.js";
import type { TenantMemory } from "./tenant-memory.js";

export type { Logger };

/**
 * What a step (prepare, check, agent) gets besides its StepInput. bin/ builds it from the step's
 * environment; tests build it from real local adapters. A step never reads process.env itself.
 */
export interface StepContext {
  objects: ObjectStore;
  /** The service's own bucket (S3_BUCKET). */
  bucket: string;
  config: Config;
  log: Logger;
  clock: Clock;
  /**
   * The tenant memory and the deployment's memory key (the check step looks up and fingerprints with them);
   * absent when the memory is off (DOCVERIFY_MEMORY=off) and in the evaluation harness.
   */
  memory?: { store: TenantMemory; key: Uint8Array };
}
