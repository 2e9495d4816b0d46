import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { type BackoffPolicy, backoffMs } from "../../core/backoff.js";
import type { StepName } from "../../core/detection.js";
import type { WorkloadSpec } from "../../core/ports.js";
import { HEAP_EXHAUSTED, heapLimitArgs, MemoryWatchdog, outOfMemory, residentBytes } from "./memory-watch.js";
import { forEachLine, truncateUtf8 } from "./output-lines.js";
import {
  deadlineExceeded,
  describeExit,
  killTree,
  type LaunchEvents,
  MAX_MESSAGE_BYTES,
  type StepLauncher,
  signalCode,
} from "./step-process.js";
import type { RunStepMessage, StepDoneMessage } from "./worker.js";

/**
 * A warm worker pool of the standalone workload runner: `size` processes (`command ...args worker`, with
 * `--step <step>` for a pool of one step kind; see worker.ts) that each run one step at a time, handed to them over IPC in FIFO order. A worker that
 * dies mid-step fails that step ("Error") and is replaced; one killed at a step's time limit fails it
 * with DeadlineExceeded; one past its memory cap (memory-watch.ts: V8's heap, or its resident size) fails
 * it with OOMKilled. A worker still holding more than half its cap after a step is replaced before it takes
 * another (V8 and the allocator seldom give memory back), so idle workers stay small. Worker pids are
 * written to `pidDir`, so the next start reaps the workers a kill -9 of the service left behind.
 */

export interface WorkerPoolOptions {
  command: string;
  args: string[];
  /** Warm worker processes, at least 1. */
  size: number;
  /** The workers' own environment (a step's environment travels with the step). */
  env: Record<string, string>;
  log: Logger;
  pidDir?: string;
  /** Memory cap of each worker in MB (memory-watch.ts); none when undefined. */
  memoryLimitMb?: number;
  /** The one step kind this pool's workers run (`worker --step <step>`); any kind when undefined. */
  step?: StepName;
  /** Reap the workers a killed service left in `pidDir` first (default true; false when the caller did). */
  reap?: boolean;
  /** A worker is replaced after this many steps, whatever its memory (a leak cannot build up). */
  maxSteps?: number;
}

/** Before replacing a worker that keeps dying before it is ready: 0.25 s, 0.5 s, ... capped at 30 s. */
const RESPAWN_BACKOFF: BackoffPolicy = { firstMs: 250, maxMs: 30_000 };

interface Job {
  spec: WorkloadSpec;
  env: Record<string, string>;
  events: LaunchEvents;
  worker?: Worker;
}

interface Worker {
  proc: ChildProcess;
  pid: number | undefined;
  ready: boolean;
  gone: boolean;
  current?: Job;
  killedFor?: "timeout" | "delete" | "close" | "memory" | "recycle";
  /** V8 said it reached its heap limit (the worker then aborts). */
  heapExhausted: boolean;
  /** Steps it has run. */
  steps: number;
  exited: Promise<void>;
}

function isDone(msg: unknown): msg is StepDoneMessage {
  const m = msg as Partial<StepDoneMessage> | null;
  return typeof m === "object" && m !== null && m.type === "done" && typeof m.name === "string";
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

export function createWorkerPool(opts: WorkerPoolOptions): StepLauncher {
  const { command, args, log, memoryLimitMb } = opts;
  const watchdog = new MemoryWatchdog();
  const limitBytes = memoryLimitMb ? memoryLimitMb * 1024 * 1024 : undefined;
  const workers = new Set<Worker>();
  const pending: Job[] = [];
  const respawnTimers = new Set<NodeJS.Timeout>();
  let respawnFailures = 0;
  let closed = false;

  if (opts.pidDir && opts.reap !== false) reapOrphanedWorkers(opts.pidDir, log);
  const workerArgs = opts.step ? ["worker", "--step", opts.step] : ["worker"];

  function spawnWorker(): void {
    if (closed) return;
    const proc = spawn(command, [...heapLimitArgs(memoryLimitMb), ...args, ...workerArgs], {
      env: { ...opts.env },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    let resolveExited: () => void = () => {};
    const worker: Worker = {
      proc,
      pid: proc.pid,
      ready: false,
      gone: false,
      heapExhausted: false,
      steps: 0,
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
      if (!line.trim()) return;
      if (stream === "stderr" && HEAP_EXHAUSTED.test(line)) worker.heapExhausted = true;
      wlog.debug({ stream, workload: worker.current?.spec.name }, line);
    };
    const watch =
      limitBytes && proc.pid !== undefined
        ? watchdog.watch(proc.pid, limitBytes, (rss) => {
            if (worker.gone || worker.killedFor) return;
            worker.killedFor = worker.current ? "memory" : "recycle";
            wlog.warn(
              { rssMb: Math.round(rss / 1048576), memoryLimitMb, workload: worker.current?.spec.name },
              "A worker passed its memory limit; killing it",
            );
            killTree(proc, false);
          })
        : undefined;
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
      watch?.stop();
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
    const job = worker.current;
    if (job) {
      if (worker.killedFor === "timeout") {
        job.events.finished(deadlineExceeded(job.spec, signal));
      } else if (worker.killedFor === "memory" || worker.heapExhausted) {
        job.events.finished(outOfMemory(job.spec, memoryLimitMb, code ?? signalCode(signal)));
      } else {
        job.events.finished({
          state: "Failed",
          reason: "Error",
          exitCode: code ?? signalCode(signal),
          message: `The worker process running the ${job.spec.step} step exited mid-step (${describeExit(code, signal)}).`,
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
    const job = worker.current;
    if (!job || job.spec.name !== msg.name) {
      log.warn({ worker: worker.pid, name: msg.name }, "A worker reported a step it was not running");
      return;
    }
    worker.current = undefined;
    job.worker = undefined;
    const exitCode = Number.isInteger(msg.exitCode) ? msg.exitCode : 1;
    const message = truncateUtf8(typeof msg.message === "string" ? msg.message : "", MAX_MESSAGE_BYTES);
    if (exitCode === 0) job.events.finished({ state: "Succeeded", exitCode, message });
    else job.events.finished({ state: "Failed", reason: "Error", exitCode, message });
    recycleIfLarge(worker);
    dispatch();
  }

  /**
   * Replaces an idle worker that has run `maxSteps` steps, or that holds more than half its cap: it would
   * start the next step that large.
   */
  function recycleIfLarge(worker: Worker): void {
    if (worker.pid === undefined || worker.killedFor || worker.gone) return;
    worker.steps++;
    if (opts.maxSteps && worker.steps >= opts.maxSteps) {
      worker.killedFor = "recycle";
      log.info({ worker: worker.pid, steps: worker.steps }, "Replacing a worker that ran its share of steps");
      killTree(worker.proc, false);
      return;
    }
    if (!limitBytes) return;
    const rss = residentBytes(worker.pid);
    if (rss === undefined || rss <= limitBytes / 2) return;
    worker.killedFor = "recycle";
    log.info(
      { worker: worker.pid, rssMb: Math.round(rss / 1048576) },
      "Replacing a worker that kept its memory",
    );
    killTree(worker.proc, false);
  }

  function dispatch(): void {
    for (const worker of workers) {
      if (pending.length === 0) return;
      if (!worker.ready || worker.current || worker.killedFor || worker.gone) continue;
      const job = pending.shift()!;
      worker.current = job;
      job.worker = worker;
      const msg: RunStepMessage = {
        type: "run",
        name: job.spec.name,
        step: job.spec.step,
        owner: job.spec.owner.name,
        env: job.env,
      };
      worker.proc.send(msg, (err) => {
        if (!err || worker.current !== job) return;
        // The worker cannot take it (its channel closed): it is dying; its exit fails the step.
        log.warn({ worker: worker.pid, err }, "Could not hand a step to a worker");
        killTree(worker.proc, false);
      });
      log.debug({ workload: job.spec.name, pid: worker.pid }, "Step handed to a worker");
      job.events.running();
    }
  }

  for (let i = 0; i < opts.size; i++) spawnWorker();

  return {
    launch(spec, env, events) {
      const job: Job = { spec, env, events };
      pending.push(job);
      dispatch();
      return {
        kill(why) {
          const queued = pending.indexOf(job);
          if (queued >= 0) pending.splice(queued, 1);
          const worker = job.worker;
          if (worker) {
            worker.killedFor = why;
            killTree(worker.proc, false);
          }
        },
      };
    },

    async close() {
      closed = true;
      watchdog.close();
      for (const t of respawnTimers) clearTimeout(t);
      respawnTimers.clear();
      pending.length = 0;
      const exits: Promise<unknown>[] = [];
      for (const worker of workers) {
        worker.killedFor = "close";
        exits.push(worker.exited);
        killTree(worker.proc, false);
      }
      await Promise.all(exits);
    },
  };
}
