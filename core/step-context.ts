import type { Logger } from "pino";
import type { Config } from "./config.js";
import type { Clock, ObjectStore } from "./ports.js";

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
}
