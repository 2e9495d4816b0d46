import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { type BackoffPolicy, backoffMs } from "../../core/backoff.js";
import type { WorkloadRunner, WorkloadSpec, WorkloadStatus } from "../../core/ports.js";
import { forEachLine, truncateUtf8 } from "./output-lines.js";
import type { RunStepMessage, StepDoneMessage } from "./worker.js";

export interface LocalWorkloadRunnerOptions {
  /** The program, e.g. process.execPath. */
  command: string;
  /** Arguments before the step's own, e.g. [...process.execArgv, "bin/docverify.js"]. */
  args: string[];
  /** Warm worker processes (`command ...args worker`); 0 = one process per step. */
  workers: number;
  /** Environment of every step (give PATH and friends here: nothing else is inherited). */
  baseEnv?: Record<string, string>;
  log: Logger;
  /** Where worker pids are written, so the next start can reap workers orphaned by a kill -9. */
  pidDir?: string;
}

/** A step's summary line is cut to this many bytes (a Pod's termination message limit). */
export const MAX_MESSAGE_BYTES = 4096;
/** Before replacing a worker that keeps dying before it is ready: 0.25 s, 0.5 s, ... capped at 30 s. */
const RESPAWN_BACKOFF: BackoffPolicy = { firstMs: 250, maxMs: 30_000 };

interface Workload {
  spec: WorkloadSpec;
  status: WorkloadStatus;
  done: boolean;
  deleted: boolean;
  timer?: NodeJS.Timeout;
  /** Direct mode: the step's own process. */
  child?: ChildProcess;
  timedOut?: boolean;
  /** Pool mode: the worker running it. */
  worker?: Worker;
}

interface Worker {
  proc: ChildProcess;
  pid: number | undefined;
  ready: boolean;
  gone: boolean;
  current?: Workload;
  killedFor?: "timeout" | "delete" | "close";
  exited: Promise<void>;
}

const signalCode = (signal: NodeJS.Signals | null) => (signal ? 128 + (constants.signals[signal] ?? 0) : 1);
const describeExit = (code: number | null, signal: NodeJS.Signals | null) =>
  signal ? `signal ${signal}` : `exit code ${code}`;

function isDone(msg: unknown): msg is StepDoneMessage {
  const m = msg as Partial<StepDoneMessage> | null;
  return typeof m === "object" && m !== null && m.type === "done" && typeof m.name === "string";
}

/** Kills a process and, when it leads one, its process group (the step's own children). */
function killTree(proc: ChildProcess, group: boolean): void {
  if (proc.pid === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
  if (group) {
    try {
      process.kill(-proc.pid, "SIGKILL");
      return;
    } catch {
      // not a group leader (yet): fall through to the process itself
    }
  }
  proc.kill("SIGKILL");
}

/**
 * Kills (SIGKILL) the workers a previous run of the service left behind — pids listed in `pidDir` that
 * are still alive and whose command line has a ` worker` argument — and empties the folder.
 * Returns the pids it killed.
 */
export function reapOrphanedWorkers(pidDir: string, log: Logger): number[] {
  mkdirSync(pidDir, { recursive: true });
  const killed: number[] = [];
  for (const file of readdirSync(pidDir)) {
    const m = /^(\d+)\.pid$/.exec(file);
    const pid = m ? Number(m[1]) : undefined;
    if (pid !== undefined && pid !== process.pid) {
      let cmdline = "";
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      } catch {
        // gone (or no /proc): nothing to reap
      }
      if (cmdline.includes(" worker")) {
        try {
          process.kill(pid, "SIGKILL");
          killed.push(pid);
          log.info({ pid }, "Killed a worker left over from a previous run");
        } catch (err) {
          log.warn({ pid, err }, "Could not kill a worker left over from a previous run");
        }
      }
    }
    try {
      unlinkSync(join(pidDir, file));
    } catch {
      // already gone
    }
  }
  return killed;
}

/**
 * The standalone workload runner: each step is `command ...args <step> --detection <owner>` with env
 * `{...baseEnv, ...spec.env}`, run as its own process (workers = 0) or sent to one of `workers` warm
 * processes (`command ...args worker`, see worker.ts) in FIFO order. The step's summary is the last
 * non-empty stdout line (cut to 4 KB); other output goes to the log at debug level.
 * Exit 0 → Succeeded; another exit or a signal → Failed "Error" (exitCode = code, or 128 + signal);
 * past timeoutSeconds (counted from Running) → SIGKILL and Failed "DeadlineExceeded". A worker that dies
 * mid-step fails that workload ("Error") and is replaced. Statuses live in memory until deleted.
 */
export function createLocalWorkloadRunner(opts: LocalWorkloadRunnerOptions): WorkloadRunner {
  const { command, args, log } = opts;
  const baseEnv = opts.baseEnv ?? {};
  const poolSize = opts.workers;
  if (!Number.isInteger(poolSize) || poolSize < 0) {
    throw new Error(`The number of workers must be a whole number of at least 0, got ${poolSize}.`);
  }
  const workloads = new Map<string, Workload>();
  const listeners: ((owner: string) => void)[] = [];
  const children = new Set<ChildProcess>();
  const workers = new Set<Worker>();
  const pending: Workload[] = [];
  const respawnTimers = new Set<NodeJS.Timeout>();
  let respawnFailures = 0;
  let closed = false;

  if (opts.pidDir) reapOrphanedWorkers(opts.pidDir, log);

  function notify(owner: string): void {
    for (const l of [...listeners]) {
      queueMicrotask(() => {
        if (!closed) l(owner);
      });
    }
  }

  function running(w: Workload): void {
    w.status.state = "Running";
    w.status.startedAt = new Date().toISOString();
    w.timer = setTimeout(() => onDeadline(w), w.spec.timeoutSeconds * 1000);
    notify(w.status.owner);
  }

  function finish(
    w: Workload,
    result: Pick<WorkloadStatus, "state" | "exitCode" | "reason" | "message">,
  ): void {
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
    if (w.child) {
      w.timedOut = true;
      killTree(w.child, true);
    } else if (w.worker) {
      w.worker.killedFor = "timeout";
      killTree(w.worker.proc, false);
    }
  }

  const deadlineMessage = (w: Workload) =>
    `The ${w.spec.step} step ran longer than its ${w.spec.timeoutSeconds} s limit and was killed.`;

  // ---- one process per step ----------------------------------------------------------------------

  function startProcess(w: Workload): void {
    const { spec } = w;
    const wlog = log.child({ workload: spec.name });
    const child = spawn(command, [...args, spec.step, "--detection", spec.owner.name], {
      env: { ...baseEnv, ...spec.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group, so a kill reaches the step's children too
    });
    w.child = child;
    children.add(child);
    let lastOut: string | undefined;
    let lastErr: string | undefined;
    forEachLine(child.stdout!, (line) => {
      if (!line.trim()) return;
      if (lastOut !== undefined) wlog.debug({ stream: "stdout" }, lastOut);
      lastOut = line;
    });
    forEachLine(child.stderr!, (line) => {
      if (!line.trim()) return;
      lastErr = line;
      wlog.debug({ stream: "stderr" }, line);
    });
    child.on("error", (err) => {
      children.delete(child);
      finish(w, {
        state: "Failed",
        reason: "Error",
        message: `Could not start the ${spec.step} step (${command}): ${err.message}.`,
      });
    });
    child.on("close", (code, signal) => {
      children.delete(child);
      if (lastOut !== undefined && (code === 0 || w.timedOut)) wlog.debug({ stream: "stdout" }, lastOut);
      if (w.timedOut) {
        finish(w, {
          state: "Failed",
          reason: "DeadlineExceeded",
          exitCode: signalCode(signal),
          message: deadlineMessage(w),
        });
      } else if (code === 0) {
        finish(w, {
          state: "Succeeded",
          exitCode: 0,
          message: truncateUtf8(lastOut ?? "", MAX_MESSAGE_BYTES),
        });
      } else {
        const summary = lastOut ?? lastErr;
        finish(w, {
          state: "Failed",
          reason: "Error",
          exitCode: code ?? signalCode(signal),
          message: truncateUtf8(
            summary ?? `The ${spec.step} step ended with ${describeExit(code, signal)}.`,
            MAX_MESSAGE_BYTES,
          ),
        });
      }
    });
    if (child.pid !== undefined) running(w);
  }

  // ---- warm worker pool --------------------------------------------------------------------------

  function spawnWorker(): void {
    if (closed) return;
    const proc = spawn(command, [...args, "worker"], {
      env: { ...baseEnv },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    let resolveExited: () => void = () => {};
    const worker: Worker = {
      proc,
      pid: proc.pid,
      ready: false,
      gone: false,
      exited: new Promise<void>((r) => (resolveExited = r)),
    };
    workers.add(worker);
    const pidFile = opts.pidDir && proc.pid !== undefined ? join(opts.pidDir, `${proc.pid}.pid`) : undefined;
    if (pidFile) {
      try {
        writeFileSync(pidFile, `${proc.pid}\n`);
      } catch (err) {
        log.warn(
          { err, pidFile },
          "Could not record a worker's pid; a kill -9 of the service may leave it running",
        );
      }
    }
    const wlog = log.child({ worker: proc.pid });
    const forward = (stream: string) => (line: string) => {
      if (line.trim()) wlog.debug({ stream, workload: worker.current?.spec.name }, line);
    };
    forEachLine(proc.stdout!, forward("stdout"));
    forEachLine(proc.stderr!, forward("stderr"));
    proc.on("message", (msg: unknown) => {
      if ((msg as { type?: unknown } | null)?.type === "ready") {
        worker.ready = true;
        respawnFailures = 0;
        dispatch();
      } else if (isDone(msg)) {
        onStepDone(worker, msg);
      }
    });
    const gone = (code: number | null, signal: NodeJS.Signals | null, err?: Error) => {
      if (worker.gone) return;
      worker.gone = true;
      workers.delete(worker);
      if (pidFile) {
        try {
          unlinkSync(pidFile);
        } catch {
          // already gone
        }
      }
      resolveExited();
      onWorkerGone(worker, code, signal, err);
    };
    proc.on("exit", (code, signal) => gone(code, signal));
    proc.on("error", (err) => {
      if (proc.pid === undefined) gone(null, null, err);
    });
  }

  function onWorkerGone(
    worker: Worker,
    code: number | null,
    signal: NodeJS.Signals | null,
    err?: Error,
  ): void {
    const w = worker.current;
    if (w && !w.done) {
      if (worker.killedFor === "timeout") {
        finish(w, {
          state: "Failed",
          reason: "DeadlineExceeded",
          exitCode: signalCode(signal),
          message: deadlineMessage(w),
        });
      } else {
        finish(w, {
          state: "Failed",
          reason: "Error",
          exitCode: code ?? signalCode(signal),
          message: `The worker process running the ${w.spec.step} step exited mid-step (${describeExit(code, signal)}).`,
        });
      }
    }
    if (closed) return;
    if (worker.ready || worker.killedFor) {
      spawnWorker();
      return;
    }
    // Died before it could take work: replace it, waiting longer each time so a broken command cannot spin.
    respawnFailures++;
    const delay = backoffMs(respawnFailures, RESPAWN_BACKOFF);
    log.error(
      { err, code, signal, command, retryInMs: delay },
      `A worker process ended before it was ready (${err ? err.message : describeExit(code, signal)}); check the worker command and its log output`,
    );
    const timer = setTimeout(() => {
      respawnTimers.delete(timer);
      spawnWorker();
    }, delay);
    respawnTimers.add(timer);
  }

  function onStepDone(worker: Worker, msg: StepDoneMessage): void {
    const w = worker.current;
    if (!w || w.spec.name !== msg.name) {
      log.warn({ worker: worker.pid, name: msg.name }, "A worker reported a step it was not running");
      return;
    }
    worker.current = undefined;
    w.worker = undefined;
    const exitCode = Number.isInteger(msg.exitCode) ? msg.exitCode : 1;
    const message = truncateUtf8(typeof msg.message === "string" ? msg.message : "", MAX_MESSAGE_BYTES);
    if (exitCode === 0) finish(w, { state: "Succeeded", exitCode, message });
    else finish(w, { state: "Failed", reason: "Error", exitCode, message });
    dispatch();
  }

  function dispatch(): void {
    for (const worker of workers) {
      if (pending.length === 0) return;
      if (!worker.ready || worker.current || worker.killedFor || worker.gone) continue;
      const w = pending.shift()!;
      worker.current = w;
      w.worker = worker;
      const msg: RunStepMessage = {
        type: "run",
        name: w.spec.name,
        step: w.spec.step,
        owner: w.spec.owner.name,
        env: { ...baseEnv, ...w.spec.env },
      };
      worker.proc.send(msg, (err) => {
        if (!err || w.done) return;
        // The worker cannot take it (its channel closed): it is dying; its exit fails the workload.
        log.warn({ worker: worker.pid, err }, "Could not hand a step to a worker");
        killTree(worker.proc, false);
      });
      running(w);
    }
  }

  if (poolSize > 0) for (let i = 0; i < poolSize; i++) spawnWorker();

  // ---- the port --------------------------------------------------------------------------------------

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
      if (poolSize === 0) {
        startProcess(w);
      } else {
        pending.push(w);
        dispatch();
      }
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
      const queued = pending.indexOf(w);
      if (queued >= 0) pending.splice(queued, 1);
      if (w.child) killTree(w.child, true);
      if (w.worker) {
        w.worker.killedFor = "delete";
        killTree(w.worker.proc, false);
      }
      w.done = true;
    },

    onChange(listener) {
      listeners.push(listener);
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const t of respawnTimers) clearTimeout(t);
      respawnTimers.clear();
      pending.length = 0;
      for (const w of workloads.values()) clearTimeout(w.timer);
      const exits: Promise<unknown>[] = [];
      for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) {
          exits.push(new Promise((r) => child.once("close", r)));
          killTree(child, true);
        }
      }
      for (const worker of workers) {
        worker.killedFor = "close";
        exits.push(worker.exited);
        killTree(worker.proc, false);
      }
      await Promise.all(exits);
    },
  };
}
