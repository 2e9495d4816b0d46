/**
 * A stand-in for `docverify` in the workload runner's tests.
 *   fake-step.ts <step> --detection <owner>   one step as its own process
 *   fake-step.ts worker [--step <step>]        a warm worker (runWorkerLoop), of one step kind with --step
 * Behaviour from the step's environment:
 *   FAKE_EXIT=<n>        exit code (default 0)
 *   FAKE_SLEEP_MS=<n>    work this long before answering
 *   FAKE_CRASH=1         worker mode: the whole worker process exits (code 3) mid-step
 *   FAKE_THROW=<text>    worker mode: the handler throws an Error with this message
 *   FAKE_PID_FILE=<path> write the pid of the process running the step there first
 *   FAKE_LONG=1          the summary line is 10 000 characters long
 *   FAKE_TAG=<text>      echoed in the summary
 *   FAKE_GROW_MB=<n>     allocate (and touch) 32 MB buffers outside V8's heap, one every 20 ms, up to n MB
 *   FAKE_HEAP=1          grow V8's heap until it fails
 *   FAKE_RETAIN_MB=<n>   keep n MB allocated after the step (worker mode: the worker stays that large)
 * The summary is a JSON line {step, owner, tag, pid, exitCode}; other lines go to stdout before it and
 * to stderr, and a blank line follows it (the runner keeps the last non-empty line).
 */
import { writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { StepName } from "../../../core/detection.js";
import { runWorkerLoop } from "../worker.js";

const retained: Buffer[] = [];

async function work(step: string, owner: string, env: Record<string, string | undefined>) {
  if (env.FAKE_PID_FILE) writeFileSync(env.FAKE_PID_FILE, String(process.pid));
  if (env.FAKE_GROW_MB) {
    const held: Buffer[] = [];
    for (let mb = 0; mb < Number(env.FAKE_GROW_MB); mb += 32) {
      held.push(Buffer.alloc(32 * 1024 * 1024, 1));
      await sleep(20);
    }
    retained.push(...held);
  }
  if (env.FAKE_HEAP === "1") {
    const heap: number[][] = [];
    for (;;) {
      heap.push(Array.from({ length: 100_000 }, (_, i) => i * 1.5));
      if (heap.length % 50 === 0) await sleep(1);
    }
  }
  if (env.FAKE_RETAIN_MB) retained.push(Buffer.alloc(Number(env.FAKE_RETAIN_MB) * 1024 * 1024, 1));
  console.log(`starting ${step} for ${owner}`);
  console.error(`a diagnostic on stderr for ${owner}`);
  if (env.FAKE_SLEEP_MS) await sleep(Number(env.FAKE_SLEEP_MS));
  const exitCode = Number(env.FAKE_EXIT ?? 0);
  const summary = { step, owner, tag: env.FAKE_TAG ?? null, pid: process.pid, exitCode };
  const message =
    env.FAKE_LONG === "1" ? `${JSON.stringify(summary)} ${"é".repeat(5000)}` : JSON.stringify(summary);
  return { exitCode, message };
}

const [mode, flag, owner] = process.argv.slice(2);
if (mode === "worker") {
  runWorkerLoop(
    async (step: StepName, stepOwner, env) => {
      if (env.FAKE_CRASH === "1") {
        console.log("about to crash");
        process.exit(3);
      }
      const result = await work(step, stepOwner, env);
      if (env.FAKE_THROW) throw new Error(env.FAKE_THROW);
      return result;
    },
    flag === "--step" ? { step: owner as StepName } : {},
  );
} else {
  if (!mode || flag !== "--detection" || !owner) {
    console.error("usage: fake-step.ts <step> --detection <owner> | worker");
    process.exit(64);
  }
  const { exitCode, message } = await work(mode, owner, process.env);
  console.log(message);
  console.log("");
  process.exitCode = exitCode;
}
