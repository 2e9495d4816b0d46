import { readFileSync } from "node:fs";
import type { WorkloadSpec } from "../../core/ports.js";
import type { WorkloadResult } from "./step-process.js";

/**
 * The memory cap of a standalone step process (the cluster's is the step Pod's memory limit, read back as
 * OOMKilled from the Pod's status): V8's heap is limited to three quarters of the cap when the process
 * starts (`--max-old-space-size`), and a watchdog reads each process's resident size every 250 ms and kills
 * it once it passes the cap (buffers, pdfjs's decoded data, canvases and sharp live outside V8's heap).
 * Either way the step ends Failed with reason OOMKilled, as a Pod would.
 */

/** V8's last words when a heap limit is reached (it then aborts: SIGABRT, exit code 134). */
export const HEAP_EXHAUSTED =
  /JavaScript heap out of memory|Reached heap limit|Ineffective mark-compacts near heap limit/;

/** The node options that limit V8's heap for a step process capped at `memoryMb`. */
export function heapLimitArgs(memoryMb: number | undefined): string[] {
  if (!memoryMb) return [];
  return [`--max-old-space-size=${Math.max(64, Math.floor((memoryMb * 3) / 4))}`];
}

/** Resident memory of a process in bytes (VmRSS from /proc); undefined when it is gone or /proc is missing. */
export function residentBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "latin1"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The result of a step stopped for its memory (by the watchdog, or by V8 at its heap limit). */
export function outOfMemory(
  spec: WorkloadSpec,
  memoryMb: number | undefined,
  exitCode: number,
): WorkloadResult {
  return {
    state: "Failed",
    reason: "OOMKilled",
    exitCode,
    message: memoryMb
      ? `The ${spec.step} step used more than its ${memoryMb} MB of memory and was stopped.`
      : `The ${spec.step} step ran out of memory.`,
  };
}

interface Watched {
  pid: number;
  limitBytes: number;
  onExceeded: (rss: number) => void;
}

/**
 * One timer for every watched process: each is read every `intervalMs` and `onExceeded` is called once
 * when its resident size passes its limit (the watch then ends; the caller kills the process).
 */
export class MemoryWatchdog {
  private watched = new Set<Watched>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly intervalMs = 250) {}

  watch(pid: number, limitBytes: number, onExceeded: (rss: number) => void): { stop(): void } {
    const w: Watched = { pid, limitBytes, onExceeded };
    this.watched.add(w);
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), this.intervalMs);
      this.timer.unref();
    }
    return { stop: () => this.unwatch(w) };
  }

  private unwatch(w: Watched): void {
    this.watched.delete(w);
    if (this.watched.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private sweep(): void {
    for (const w of [...this.watched]) {
      const rss = residentBytes(w.pid);
      if (rss === undefined) continue;
      if (rss > w.limitBytes) {
        this.unwatch(w);
        w.onExceeded(rss);
      }
    }
  }

  close(): void {
    this.watched.clear();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
