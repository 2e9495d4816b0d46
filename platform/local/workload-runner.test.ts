import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { WorkloadRunner, WorkloadSpec, WorkloadStatus } from "../../core/ports.js";
import { createLocalWorkloadRunner, MAX_MESSAGE_BYTES } from "./workload-runner.js";

const script = fileURLToPath(new URL("./testdata/fake-step.ts", import.meta.url));
const command = process.execPath;
const args = ["--import", "tsx", script];

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "docverify-runner-"));
  cleanups.push(() => rm(d, { recursive: true, force: true }));
  return d;
}

interface LogLine {
  level: number;
  msg: string;
  stream?: string;
  workload?: string;
  pid?: number;
}

function newRunner(
  workers: number,
  extra: {
    baseEnv?: Record<string, string>;
    pidDir?: string;
    command?: string;
    memoryLimitMb?: number;
    maxStepsPerWorker?: number;
    steps?: ("prepare" | "check" | "agent")[];
  } = {},
) {
  const logs: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split("\n")) if (line) logs.push(JSON.parse(line) as LogLine);
      cb();
    },
  });
  const changes: string[] = [];
  const runner = createLocalWorkloadRunner({
    command: extra.command ?? command,
    args,
    workers,
    baseEnv: extra.baseEnv ?? { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    log: pino({ level: "debug" }, sink),
    ...(extra.pidDir ? { pidDir: extra.pidDir } : {}),
    ...(extra.memoryLimitMb ? { memoryLimitMb: extra.memoryLimitMb } : {}),
    ...(extra.maxStepsPerWorker ? { maxStepsPerWorker: extra.maxStepsPerWorker } : {}),
    ...(extra.steps ? { steps: extra.steps } : {}),
  });
  runner.onChange((owner) => changes.push(owner));
  cleanups.push(() => runner.close());
  return { runner, logs, changes };
}

let seq = 0;
function spec(env: Record<string, string> = {}, timeoutSeconds = 60): WorkloadSpec {
  const owner = `det-${++seq}`;
  return { name: `${owner}-check-1`, step: "check", owner: { name: owner }, env, timeoutSeconds };
}

async function waitFor<T>(probe: () => Promise<T | undefined | false>, what: string): Promise<T> {
  const deadline = Date.now() + 25_000;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const finished = (runner: WorkloadRunner, name: string) =>
  waitFor(async () => {
    const s = await runner.get(name);
    return s && (s.state === "Succeeded" || s.state === "Failed") ? s : undefined;
  }, `${name} to finish`);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const pidFrom = (file: string) =>
  waitFor(async () => {
    const text = await readFile(file, "utf8").catch(() => "");
    return text ? Number(text) : undefined;
  }, `a pid in ${file}`);
/**
 * The pid of the process running a workload, from the runner's own log line when it starts the step
 * (its process, or the worker it hands it to): known before any time limit counts, however slowly the
 * step itself starts on a loaded machine.
 */
const pidRunning = (logs: LogLine[], name: string) =>
  waitFor(
    async () => logs.find((l) => l.workload === name && typeof l.pid === "number")?.pid,
    `the pid running ${name}`,
  );
const summary = (s: WorkloadStatus) =>
  JSON.parse(s.message ?? "") as { step: string; owner: string; tag: string | null; pid: number };

describe.each([
  { mode: "one process per step", workers: 0 },
  { mode: "warm workers", workers: 1 },
])("createLocalWorkloadRunner ($mode)", ({ workers }) => {
  it("runs a step to Succeeded with its summary line as message and its other output in the log", async () => {
    const { runner, logs, changes } = newRunner(workers, { baseEnv: { FAKE_TAG: "base" } });
    const own = spec({ FAKE_TAG: "own" });
    const inherited = spec();
    await runner.start(own);
    await runner.start(inherited);
    const s = await finished(runner, own.name);
    expect(s).toMatchObject({
      name: own.name,
      step: "check",
      owner: own.owner.name,
      state: "Succeeded",
      exitCode: 0,
    });
    expect(s.reason).toBeUndefined();
    expect(summary(s)).toMatchObject({ step: "check", owner: own.owner.name, tag: "own" });
    expect(Date.parse(s.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(s.startedAt!));
    expect(summary(await finished(runner, inherited.name)).tag).toBe("base");
    const debug = logs.filter((l) => l.level === 20).map((l) => l.msg);
    expect(debug).toContain(`starting check for ${own.owner.name}`);
    expect(debug).toContain(`a diagnostic on stderr for ${own.owner.name}`);
    expect(changes.filter((o) => o === own.owner.name)).toHaveLength(2); // Running, Succeeded
  });

  it("reports a non-zero exit as Failed with reason Error and the exit code", async () => {
    const { runner } = newRunner(workers);
    const s = spec({ FAKE_EXIT: "2" });
    await runner.start(s);
    const st = await finished(runner, s.name);
    expect(st).toMatchObject({ state: "Failed", reason: "Error", exitCode: 2 });
    expect(summary(st).owner).toBe(s.owner.name);
  });

  it("kills a step past its time limit and reports DeadlineExceeded", async () => {
    const dir = await tempDir();
    const { runner, changes, logs } = newRunner(workers);
    // The step may be killed before it has even started up (a loaded machine): its pid comes from the
    // runner, not from the step.
    const s = spec({ FAKE_SLEEP_MS: "60000" }, 1);
    await runner.start(s);
    const pid = await pidRunning(logs, s.name);
    const st = await finished(runner, s.name);
    expect(st).toMatchObject({ state: "Failed", reason: "DeadlineExceeded", exitCode: 137 });
    expect(st.message).toBe("The check step ran longer than its 1 s limit and was killed.");
    expect(alive(pid)).toBe(false);
    expect(changes).toEqual([s.owner.name, s.owner.name]);
    // The runner goes on working (with a replacement worker in pool mode).
    const next = spec({ FAKE_PID_FILE: join(dir, "next") });
    await runner.start(next);
    expect((await finished(runner, next.name)).state).toBe("Succeeded");
    expect(await pidFrom(join(dir, "next"))).not.toBe(pid);
  });

  it("start of an existing name is a no-op, also after it finished", async () => {
    const { runner, changes } = newRunner(workers);
    const s = spec({ FAKE_TAG: "first" });
    await runner.start(s);
    await runner.start({ ...s, env: { FAKE_TAG: "second" } });
    const st = await finished(runner, s.name);
    await runner.start({ ...s, env: { FAKE_TAG: "third" } });
    await new Promise((r) => setTimeout(r, 50));
    expect(await runner.get(s.name)).toEqual(st);
    expect(summary(st).tag).toBe("first");
    expect(changes).toEqual([s.owner.name, s.owner.name]);
  });

  it("get of an unknown name is undefined; delete forgets a finished workload and is idempotent", async () => {
    const { runner } = newRunner(workers);
    expect(await runner.get("never-started")).toBeUndefined();
    await runner.delete("never-started");
    const s = spec();
    await runner.start(s);
    await finished(runner, s.name);
    await runner.delete(s.name);
    expect(await runner.get(s.name)).toBeUndefined();
    await runner.delete(s.name);
    // A deleted name can be started again.
    await runner.start(s);
    expect((await finished(runner, s.name)).state).toBe("Succeeded");
  });

  it("delete kills a running workload and forgets it", async () => {
    const dir = await tempDir();
    const { runner, changes } = newRunner(workers);
    const s = spec({ FAKE_SLEEP_MS: "60000", FAKE_PID_FILE: join(dir, "pid") });
    await runner.start(s);
    const pid = await pidFrom(join(dir, "pid"));
    expect((await runner.get(s.name))?.state).toBe("Running");
    await runner.delete(s.name);
    expect(await runner.get(s.name)).toBeUndefined();
    await waitFor(async () => !alive(pid), `process ${pid} to be killed`);
    const next = spec();
    await runner.start(next);
    expect((await finished(runner, next.name)).state).toBe("Succeeded");
    // Running only: a deleted workload reports no further change.
    expect(changes.filter((o) => o === s.owner.name)).toEqual([s.owner.name]);
  });

  it("cuts a long summary to 4096 bytes without splitting a character", async () => {
    const { runner } = newRunner(workers);
    const s = spec({ FAKE_LONG: "1" });
    await runner.start(s);
    const st = await finished(runner, s.name);
    const bytes = Buffer.byteLength(st.message ?? "");
    expect(bytes).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(bytes).toBeGreaterThan(MAX_MESSAGE_BYTES - 4);
    expect(st.message).toMatch(/^\{"step":"check".*é$/);
  });

  it("notifies onChange after start returns, never inside it", async () => {
    const { runner } = newRunner(workers);
    const seen: string[] = [];
    let inside = false;
    runner.onChange((owner) => seen.push(inside ? `${owner} (inside start)` : owner));
    const s = spec();
    inside = true;
    const started = runner.start(s);
    inside = false;
    await started;
    await finished(runner, s.name);
    expect(seen).toEqual([s.owner.name, s.owner.name]);
  });

  it("stops a step whose resident memory passes its cap: OOMKilled, and the next step runs", async () => {
    const { runner } = newRunner(workers, { memoryLimitMb: 256 });
    const s = spec({ FAKE_GROW_MB: "1536" });
    await runner.start(s);
    const st = await finished(runner, s.name);
    expect(st).toMatchObject({
      state: "Failed",
      reason: "OOMKilled",
      message: "The check step used more than its 256 MB of memory and was stopped.",
    });
    const next = spec();
    await runner.start(next);
    expect((await finished(runner, next.name)).state).toBe("Succeeded");
  });

  it("limits V8's heap to three quarters of the cap: a step that exhausts it is OOMKilled", async () => {
    const { runner } = newRunner(workers, { memoryLimitMb: 200 });
    const s = spec({ FAKE_HEAP: "1" });
    await runner.start(s);
    const st = await finished(runner, s.name);
    expect(st).toMatchObject({ state: "Failed", reason: "OOMKilled" });
  });

  it("close kills what runs", async () => {
    const dir = await tempDir();
    const { runner } = newRunner(workers);
    const s = spec({ FAKE_SLEEP_MS: "60000", FAKE_PID_FILE: join(dir, "pid") });
    await runner.start(s);
    const pid = await pidFrom(join(dir, "pid"));
    await runner.close();
    expect(alive(pid)).toBe(false);
    await expect(runner.start(spec())).rejects.toThrow(/closed/);
  });
});

describe("createLocalWorkloadRunner (one process per step)", () => {
  it("fails a step whose command cannot start, saying why", async () => {
    const { runner } = newRunner(0, { command: "/nonexistent/docverify" });
    const s = spec();
    await runner.start(s);
    const st = await finished(runner, s.name);
    expect(st).toMatchObject({ state: "Failed", reason: "Error" });
    expect(st.message).toMatch(/^Could not start the check step \(\/nonexistent\/docverify\): .*ENOENT/);
  });

  it("passes the step and owner as arguments and only the given environment", async () => {
    const { runner } = newRunner(0, { baseEnv: {} });
    const s = spec({ FAKE_TAG: "only" });
    await runner.start(s);
    const st = await finished(runner, s.name);
    expect(st.state).toBe("Succeeded");
    expect(summary(st)).toMatchObject({ step: "check", owner: s.owner.name, tag: "only" });
  });
});

describe("createLocalWorkloadRunner (warm workers)", () => {
  it("keeps a pool per step kind: a prepare never runs in the process of a check or an agent step", async () => {
    const { runner } = newRunner(1);
    const ofStep = (step: "prepare" | "check" | "agent") => {
      const s = spec();
      return { ...s, step, name: s.name.replace("-check-", `-${step}-`) };
    };
    const steps = [ofStep("check"), ofStep("prepare"), ofStep("agent"), ofStep("prepare"), ofStep("check")];
    const pids: number[] = [];
    for (const s of steps) {
      await runner.start(s);
      const done = summary(await finished(runner, s.name));
      expect(done.step).toBe(s.step);
      pids.push(done.pid);
    }
    const [check1, prepare1, agent, prepare2, check2] = pids;
    expect(prepare2).toBe(prepare1); // warm: the same prepare worker again
    expect(check2).toBe(check1);
    expect(new Set([prepare1, check1, agent]).size).toBe(3);
  });

  it("replaces a worker after maxStepsPerWorker steps, whatever its memory", async () => {
    const { runner } = newRunner(1, { maxStepsPerWorker: 2 });
    const pids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const s = spec();
      await runner.start(s);
      pids.push(summary(await finished(runner, s.name)).pid);
    }
    expect(pids[1]).toBe(pids[0]);
    expect(pids[2]).not.toBe(pids[0]);
  });

  it("runs only the step kinds it was given (a cluster step worker's one kind)", async () => {
    const { runner } = newRunner(1, { steps: ["check"] });
    const s = spec();
    await expect(
      runner.start({ ...s, step: "prepare", name: s.name.replace("-check-", "-prepare-") }),
    ).rejects.toThrow(/runs only check steps, not prepare/);
    await runner.start(s);
    expect((await finished(runner, s.name)).state).toBe("Succeeded");
  });

  it("reuses a warm worker for one step after another", async () => {
    const { runner } = newRunner(1);
    const a = spec();
    const b = spec();
    await runner.start(a);
    const pa = summary(await finished(runner, a.name)).pid;
    await runner.start(b);
    const pb = summary(await finished(runner, b.name)).pid;
    expect(pb).toBe(pa);
  });

  it("answers exit code 1 with the error's message when the step handler throws", async () => {
    const { runner } = newRunner(1);
    const s = spec({ FAKE_THROW: "the document vanished" });
    await runner.start(s);
    expect(await finished(runner, s.name)).toMatchObject({
      state: "Failed",
      reason: "Error",
      exitCode: 1,
      message: "the document vanished",
    });
  });

  it("keeps steps Pending in FIFO order while every worker is busy", async () => {
    const { runner } = newRunner(1);
    const a = spec({ FAKE_SLEEP_MS: "300" });
    const b = spec();
    const c = spec();
    await runner.start(a);
    await runner.start(b);
    await runner.start(c);
    expect((await runner.get(b.name))?.state).toBe("Pending");
    expect((await runner.get(c.name))?.state).toBe("Pending");
    expect((await runner.get(b.name))?.startedAt).toBeUndefined();
    const [sa, sb, sc] = [
      await finished(runner, a.name),
      await finished(runner, b.name),
      await finished(runner, c.name),
    ];
    const t = (iso: string | undefined) => Date.parse(iso!);
    expect(t(sb.startedAt)).toBeGreaterThanOrEqual(t(sa.finishedAt));
    expect(t(sc.startedAt)).toBeGreaterThanOrEqual(t(sb.finishedAt));
    expect(new Set([sa, sb, sc].map((s) => summary(s).pid)).size).toBe(1);
  });

  it("runs as many steps at once as there are workers", async () => {
    const dir = await tempDir();
    const { runner } = newRunner(2);
    const a = spec({ FAKE_SLEEP_MS: "60000", FAKE_PID_FILE: join(dir, "a") });
    const b = spec({ FAKE_SLEEP_MS: "60000", FAKE_PID_FILE: join(dir, "b") });
    const c = spec();
    for (const s of [a, b, c]) await runner.start(s);
    const [pa, pb] = [await pidFrom(join(dir, "a")), await pidFrom(join(dir, "b"))];
    expect(pa).not.toBe(pb);
    expect((await runner.get(c.name))?.state).toBe("Pending");
    await runner.delete(a.name);
    expect((await finished(runner, c.name)).state).toBe("Succeeded");
    expect((await runner.get(b.name))?.state).toBe("Running");
  });

  it("fails the step of a worker that dies mid-step and replaces the worker", async () => {
    const dir = await tempDir();
    const { runner } = newRunner(1);
    const s = spec({ FAKE_CRASH: "1" });
    await runner.start(s);
    const st = await finished(runner, s.name);
    expect(st).toMatchObject({ state: "Failed", reason: "Error", exitCode: 3 });
    expect(st.message).toBe("The worker process running the check step exited mid-step (exit code 3).");
    const next = spec({ FAKE_PID_FILE: join(dir, "next") });
    await runner.start(next);
    expect((await finished(runner, next.name)).state).toBe("Succeeded");
    expect(alive(await pidFrom(join(dir, "next")))).toBe(true);
  });

  it("replaces a worker that keeps more than half its cap after a step, before it takes another", async () => {
    const { runner } = newRunner(1, { memoryLimitMb: 400 });
    const big = spec({ FAKE_RETAIN_MB: "260" });
    await runner.start(big);
    const first = summary(await finished(runner, big.name)).pid;
    const small = spec();
    await runner.start(small);
    const second = summary(await finished(runner, small.name)).pid;
    expect(second).not.toBe(first);
    await waitFor(async () => !alive(first), `worker ${first} to exit`);
    // A worker that stays small is kept.
    const again = spec();
    await runner.start(again);
    expect(summary(await finished(runner, again.name)).pid).toBe(second);
  });

  it("records worker pids and on creation reaps the workers a killed service left behind", async () => {
    const pidDir = await tempDir();
    const idle = ["-e", "setInterval(() => {}, 1000)"];
    const started: ChildProcess[] = [];
    const launch = (argv: string[]) => {
      const p = spawn(process.execPath, argv, { stdio: "ignore" });
      started.push(p);
      cleanups.push(async () => p.kill("SIGKILL"));
      return p;
    };
    const orphan = launch([...idle, "worker"]); // looks like `docverify worker`
    const stranger = launch(idle); // a pid reused by some other program
    const orphanExit = new Promise((r) => orphan.once("exit", (_c, sig) => r(sig)));
    await writeFile(join(pidDir, `${orphan.pid}.pid`), `${orphan.pid}\n`);
    await writeFile(join(pidDir, `${stranger.pid}.pid`), `${stranger.pid}\n`);
    await writeFile(join(pidDir, "4194305.pid"), "4194305\n"); // above pid_max: long gone

    const { runner } = newRunner(1, { pidDir });
    expect(await orphanExit).toBe("SIGKILL");
    expect(alive(stranger.pid!)).toBe(true);
    const s = spec();
    await runner.start(s);
    const workerPid = summary(await finished(runner, s.name)).pid;
    // One worker per step kind (size 1): three pid files, the check worker's among them.
    const files = await readdir(pidDir);
    expect(files).toHaveLength(3);
    expect(files).toContain(`${workerPid}.pid`);
    await runner.close();
    expect(await readdir(pidDir)).toEqual([]);
    expect(started).toHaveLength(2);
  });
});
