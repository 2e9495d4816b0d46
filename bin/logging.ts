import { neutralizeForDisplay } from "../core/display-text.js";
import pino, { type DestinationStream, type Logger } from "pino";

/**
 * The log fields every docverify process shares, in both runtimes: `service` (always "docverify"),
 * `process` (the command: standalone, operator or api) and, on a part's lines, `component` (runner,
 * reconciler, controller, events, scheduler, job-reconciler, job-controller, upload-sweeper,
 * leader-election, api).
 * Step processes log `step` and `detection` instead (bin/step-runtime.ts).
 */
/**
 * Every log line with bidirectional controls and zero-width characters (a document's file name, a URL)
 * replaced by visible markers `[U+202E]` (core/display-text.ts), so neither a terminal nor a log viewer
 * shows a name reordered or two names alike that differ.
 */
export const NEUTRAL_LINES = { streamWrite: neutralizeForDisplay };

export type ProcessName = "standalone" | "operator" | "api";

export function processLogger(name: ProcessName, level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: "docverify", process: name }, hooks: NEUTRAL_LINES };
  return destination ? pino(options, destination) : pino(options);
}

/** The logger of one part of a process: the same key, `component`, in both runtimes. */
export function componentLogger(log: Logger, component: string): Logger {
  return log.child({ component });
}
