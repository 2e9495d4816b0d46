import pino, { type DestinationStream, type Logger } from "pino";

/**
 * The log fields every docverify process shares, in both runtimes: `service` (always "docverify"),
 * `process` (the command: standalone, operator or api) and, on a part's lines, `component` (runner,
 * reconciler, controller, events, scheduler, job-reconciler, job-controller, upload-sweeper,
 * leader-election, api).
 * Step processes log `step` and `detection` instead (bin/step-runtime.ts).
 */
export type ProcessName = "standalone" | "operator" | "api";

export function processLogger(name: ProcessName, level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: "docverify", process: name } };
  return destination ? pino(options, destination) : pino(options);
}

/** The logger of one part of a process: the same key, `component`, in both runtimes. */
export function componentLogger(log: Logger, component: string): Logger {
  return log.child({ component });
}
