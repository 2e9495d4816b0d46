import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("./testdata/fake-step.ts", import.meta.url));

describe("runWorkerLoop", () => {
  it("says ready, answers run messages one at a time, and exits when its parent disconnects", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", script, "worker"], {
      stdio: ["ignore", "ignore", "ignore", "ipc"],
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const messages: { type: string; name?: string; exitCode?: number; message?: string }[] = [];
    const got = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (messages.length >= n ? resolve() : child.once("message", check));
        check();
      });
    child.on("message", (m) => messages.push(m as (typeof messages)[number]));
    await got(1);
    expect(messages[0]).toEqual({ type: "ready" });
    child.send({ type: "run", name: "w-1", step: "agent", owner: "det-x", env: { FAKE_SLEEP_MS: "100" } });
    child.send({ type: "run", name: "w-2", step: "prepare", owner: "det-y", env: { FAKE_EXIT: "4" } });
    child.send({ type: "something else" });
    await got(3);
    expect(messages.slice(1).map((m) => [m.type, m.name, m.exitCode])).toEqual([
      ["done", "w-1", 0],
      ["done", "w-2", 4],
    ]);
    expect(JSON.parse(messages[1]!.message!)).toMatchObject({ step: "agent", owner: "det-x" });
    child.disconnect();
    expect(await exited).toBe(0);
  });

  it("a worker of one step kind refuses a step of another kind without running it", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", script, "worker", "--step", "prepare"], {
      stdio: ["ignore", "ignore", "ignore", "ipc"],
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const messages: { type: string; name?: string; exitCode?: number; message?: string }[] = [];
    const got = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (messages.length >= n ? resolve() : child.once("message", check));
        check();
      });
    child.on("message", (m) => messages.push(m as (typeof messages)[number]));
    await got(1);
    child.send({ type: "run", name: "w-1", step: "check", owner: "det-x", env: {} });
    child.send({ type: "run", name: "w-2", step: "prepare", owner: "det-y", env: {} });
    await got(3);
    expect(messages.slice(1)).toEqual([
      {
        type: "done",
        name: "w-1",
        exitCode: 1,
        message: "This worker runs only prepare steps; it was sent a check step, which it did not run.",
      },
      expect.objectContaining({ type: "done", name: "w-2", exitCode: 0 }),
    ]);
    child.disconnect();
    expect(await exited).toBe(0);
  });

  it("refuses to run without an IPC channel, saying who starts it", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", script, "worker"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => child.once("close", (c) => r(c)));
    expect(code).not.toBe(0);
    expect(stderr).toContain("the service starts it, do not run it by hand");
  });
});
