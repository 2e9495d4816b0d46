import type { Logger } from "pino";
import { STEP_NAMES, type StepName } from "../../core/detection.js";
import type { WorkloadRunner, WorkloadSpec, WorkloadStatus } from "../../core/ports.js";
import {
  createProcessLauncher,
  type Launched,
  MAX_MESSAGE_BYTES,
  type StepLauncher,
  type WorkloadResult,
} from "./step-process.js";
import { createWorkerPool, reapOrphanedWorkers } from "./worker-pool.js";

export { MAX_MESSAGE_BYTES };

export interface LocalWorkloadRunnerOptions {
  /** The program, e.g. process.execPath. */
  command: string;
  /** Arguments before the step's own, e.g. [...process.execArgv, "bin/docverify.js"]. */
  args: string[];
  /**
   * Warm worker processes of each step kind (`command ...args worker --step <step>`: a pool per kind, so
   * a prepare never shares a process with check or agent); 0 = one process per step.
   */
  workers: number;
  /** Environment of every step (give PATH and friends here: nothing else is inherited). */
  baseEnv?: Record<string, string>;
  log: Logger;
  /** Where worker pids are written, so the next start can reap workers orphaned by a kill -9. */
  pidDir?: string;
  /**
   * Memory cap of every step process or worker in MB (memory-watch.ts): V8's heap gets 3/4 of it, and a
   * process whose resident size passes it is killed (Failed "OOMKilled"). None when undefined.
   */
  memoryLimitMb?: number;
  /** With warm workers: the step kinds this runner takes (a pool each); every kind when undefined. */
  steps?: readonly StepName[];
  /** With warm workers: a worker is replaced after this many steps (0 or undefined: never for that). */
  maxStepsPerWorker?: number;
}

interface Workload {
  spec: WorkloadSpec;
  status: WorkloadStatus;
  done: boolean;
  deleted: boolean;
  timer?: NodeJS.Timeout;
  launched?: Launched;
}

/**
 * The standalone adapter of the WorkloadRunner port: a step is `command ...args <step> --detection <owner>`
 * with env `{...baseEnv, ...spec.env}`, run as its own process (workers = 0, step-process.ts) or handed
 * to one of the `workers` warm processes of its step kind's pool (worker-pool.ts). This module keeps the port's side: statuses in
 * memory until deleted (Pending → Running → Succeeded | Failed), the time limit counted from Running
 * (past it the step is killed: Failed "DeadlineExceeded"), and onChange notifications, always after the
 * call that caused them has returned.
 */
export function createLocalWorkloadRunner(opts: LocalWorkloadRunnerOptions): WorkloadRunner {
  const { log } = opts;
  const baseEnv = opts.baseEnv ?? {};
  const poolSize = opts.workers;
  if (!Number.isInteger(poolSize) || poolSize < 0) {
    throw new Error(`The number of workers must be a whole number of at least 0, got ${poolSize}.`);
  }
  const memory = opts.memoryLimitMb ? { memoryLimitMb: opts.memoryLimitMb } : {};
  let launcherFor: (step: StepName) => StepLauncher;
  let launchers: StepLauncher[];
  if (poolSize === 0) {
    const one = createProcessLauncher({ command: opts.command, args: opts.args, log, ...memory });
    launcherFor = () => one;
    launchers = [one];
  } else {
    // One pool per step kind: the prepare step, which reads untrusted bytes off the network, never runs
    // in a process that has loaded the check step's parsers, renderer and OCR engine (nor the agent's
    // code), and a check step's memory is never carried into a prepare. Reaped once for every pool.
    if (opts.pidDir) reapOrphanedWorkers(opts.pidDir, log);
    const pools = Object.fromEntries(
      (opts.steps ?? STEP_NAMES).map((step) => [
        step,
        createWorkerPool({
          command: opts.command,
          args: opts.args,
          size: poolSize,
          env: baseEnv,
          log: log.child({ pool: step }),
          step,
          reap: false,
          ...(opts.maxStepsPerWorker ? { maxSteps: opts.maxStepsPerWorker } : {}),
          ...(opts.pidDir ? { pidDir: opts.pidDir } : {}),
          ...memory,
        }),
      ]),
    ) as Partial<Record<StepName, StepLauncher>>;
    launcherFor = (step) => {
      const pool = pools[step];
      if (!pool)
        throw new Error(`This runner runs only ${Object.keys(pools).join(", ")} steps, not ${step}.`);
      return pool;
    };
    launchers = Object.values(pools) as StepLauncher[];
  }
  const workloads = new Map<string, Workload>();
  const listeners: ((owner: string) => void)[] = [];
  let closed = false;

  function notify(owner: string): void {
    for (const l of [...listeners]) {
      queueMicrotask(() => {
        if (!closed) l(owner);
      });
    }
  }

  function running(w: Workload): void {
    if (w.done) return;
    w.status.state = "Running";
    w.status.startedAt = new Date().toISOString();
    w.timer = setTimeout(() => onDeadline(w), w.spec.timeoutSeconds * 1000);
    notify(w.status.owner);
  }

  function finish(w: Workload, result: WorkloadResult): void {
    if (w.done) return;
    w.done = true;
    clearTimeout(w.timer);
    Object.assign(w.status, result, { finishedAt: new Date().toISOString() });
    for (const k of ["exitCode", "reason", "message"] as const)
      if (w.status[k] === undefined) delete w.status[k];
    if (w.deleted) return;
    log.debug({ workload: w.spec.name, state: result.state, reason: result.reason }, "Workload finished");
    notify(w.status.owner);
  }

  function onDeadline(w: Workload): void {
    if (w.done) return;
    log.warn(
      { workload: w.spec.name, timeoutSeconds: w.spec.timeoutSeconds },
      "Workload exceeded its time limit",
    );
    w.launched?.kill("timeout");
  }

  return {
    async start(spec) {
      if (closed) throw new Error("The workload runner is closed; the service is shutting down.");
      if (workloads.has(spec.name)) return;
      const w: Workload = {
        spec: structuredClone(spec),
        status: { name: spec.name, step: spec.step, owner: spec.owner.name, state: "Pending" },
        done: false,
        deleted: false,
      };
      workloads.set(spec.name, w);
      w.launched = launcherFor(spec.step).launch(
        w.spec,
        { ...baseEnv, ...w.spec.env },
        { running: () => running(w), finished: (result) => finish(w, result) },
      );
    },

    async get(name) {
      const w = workloads.get(name);
      return w ? { ...w.status } : undefined;
    },

    async delete(name) {
      const w = workloads.get(name);
      if (!w) return;
      workloads.delete(name);
      w.deleted = true;
      if (w.done) return;
      clearTimeout(w.timer);
      w.done = true;
      w.launched?.kill("delete");
    },

    onChange(listener) {
      listeners.push(listener);
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const w of workloads.values()) clearTimeout(w.timer);
      await Promise.all(launchers.map((l) => l.close()));
    },
  };
}
