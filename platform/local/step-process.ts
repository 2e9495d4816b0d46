import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";
import type { Logger } from "pino";
import type { WorkloadSpec, WorkloadStatus } from "../../core/ports.js";
import { HEAP_EXHAUSTED, heapLimitArgs, MemoryWatchdog, outOfMemory } from "./memory-watch.js";
import { forEachLine, truncateUtf8 } from "./output-lines.js";

/**
 * The process spawner of the standalone workload runner: a step as its own process
 * (`command ...args <step> --detection <owner>`, in its own process group), plus what both ways of
 * running a step share — the launcher contract the port (workload-runner.ts) drives, how a process and
 * its children are killed, and how an exit reads as a workload result.
 */

/** A step's summary line is cut to this many bytes (a Pod's termination message limit). */
export const MAX_MESSAGE_BYTES = 4096;

/** How a workload ended, as the port records it. */
export type WorkloadResult = Pick<WorkloadStatus, "state" | "exitCode" | "reason" | "message">;

export interface LaunchEvents {
  /** The step runs (its process or worker has it): the time limit counts from here. */
  running(): void;
  /** The step ended; called at most once (after a kill too, with what the kill caused). */
  finished(result: WorkloadResult): void;
}

export interface Launched {
  /** Stops the step: `timeout` ends it as DeadlineExceeded; `delete` ends it without a result anyone reads. */
  kill(why: "timeout" | "delete"): void;
}

/** A way of running steps: one process per step, or a pool of warm workers. */
export interface StepLauncher {
  launch(spec: WorkloadSpec, env: Record<string, string>, events: LaunchEvents): Launched;
  /** Kills whatever runs and waits until it has exited. */
  close(): Promise<void>;
}

export const signalCode = (signal: NodeJS.Signals | null) =>
  signal ? 128 + (constants.signals[signal] ?? 0) : 1;
export const describeExit = (code: number | null, signal: NodeJS.Signals | null) =>
  signal ? `signal ${signal}` : `exit code ${code}`;

/** The result of a step killed at its time limit. */
export function deadlineExceeded(spec: WorkloadSpec, signal: NodeJS.Signals | null): WorkloadResult {
  return {
    state: "Failed",
    reason: "DeadlineExceeded",
    exitCode: signalCode(signal),
    message: `The ${spec.step} step ran longer than its ${spec.timeoutSeconds} s limit and was killed.`,
  };
}

/** Kills a process and, when it leads one, its process group (the step's own children). */
export function killTree(proc: ChildProcess, group: boolean): void {
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

export interface ProcessLauncherOptions {
  /** The program, e.g. process.execPath. */
  command: string;
  /** Arguments before the step's own, e.g. [...process.execArgv, "bin/docverify.js"]. */
  args: string[];
  log: Logger;
  /** Memory cap of each step process in MB (memory-watch.ts); none when undefined. */
  memoryLimitMb?: number;
}

/**
 * One process per step. The step's summary is the last non-empty stdout line (cut to 4 KB); other output
 * goes to the log at debug level. Exit 0 → Succeeded; another exit or a signal → Failed "Error"
 * (exitCode = code, or 128 + signal, message = the last line it wrote); killed at its time limit →
 * Failed "DeadlineExceeded"; past its memory cap (resident size, or V8's heap) → Failed "OOMKilled".
 */
export function createProcessLauncher(opts: ProcessLauncherOptions): StepLauncher {
  const { command, args, log, memoryLimitMb } = opts;
  const children = new Set<ChildProcess>();
  const watchdog = new MemoryWatchdog();

  return {
    launch(spec, env, events) {
      const wlog = log.child({ workload: spec.name });
      const child = spawn(
        command,
        [...heapLimitArgs(memoryLimitMb), ...args, spec.step, "--detection", spec.owner.name],
        {
          env,
          stdio: ["ignore", "pipe", "pipe"],
          detached: true, // its own process group, so a kill reaches the step's children too
        },
      );
      children.add(child);
      let timedOut = false;
      let overMemory = false;
      let heapExhausted = false;
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
        if (HEAP_EXHAUSTED.test(line)) heapExhausted = true;
        wlog.debug({ stream: "stderr" }, line);
      });
      const watch =
        memoryLimitMb && child.pid !== undefined
          ? watchdog.watch(child.pid, memoryLimitMb * 1024 * 1024, (rss) => {
              overMemory = true;
              wlog.warn(
                { rssMb: Math.round(rss / 1048576), memoryLimitMb },
                "Step passed its memory limit; killing it",
              );
              killTree(child, true);
            })
          : undefined;
      child.on("error", (err) => {
        watch?.stop();
        children.delete(child);
        events.finished({
          state: "Failed",
          reason: "Error",
          message: `Could not start the ${spec.step} step (${command}): ${err.message}.`,
        });
      });
      child.on("close", (code, signal) => {
        watch?.stop();
        children.delete(child);
        if (lastOut !== undefined && (code === 0 || timedOut)) wlog.debug({ stream: "stdout" }, lastOut);
        if (timedOut) {
          events.finished(deadlineExceeded(spec, signal));
        } else if (overMemory || (code !== 0 && heapExhausted)) {
          events.finished(outOfMemory(spec, memoryLimitMb, code ?? signalCode(signal)));
        } else if (code === 0) {
          events.finished({
            state: "Succeeded",
            exitCode: 0,
            message: truncateUtf8(lastOut ?? "", MAX_MESSAGE_BYTES),
          });
        } else {
          const summary = lastOut ?? lastErr;
          events.finished({
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
      if (child.pid !== undefined) {
        wlog.debug({ pid: child.pid }, "Step process started");
        events.running();
      }
      return {
        kill(why) {
          if (why === "timeout") timedOut = true;
          killTree(child, true);
        },
      };
    },

    async close() {
      watchdog.close();
      const exits: Promise<unknown>[] = [];
      for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) {
          exits.push(new Promise((r) => child.once("close", r)));
          killTree(child, true);
        }
      }
      await Promise.all(exits);
    },
  };
}
