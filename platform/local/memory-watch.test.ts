import { spawn, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { HEAP_EXHAUSTED, heapLimitArgs, MemoryWatchdog, residentBytes } from "./memory-watch.js";

describe("the memory cap of a step process", () => {
  it("gives V8 three quarters of the cap", () => {
    expect(heapLimitArgs(1536)).toEqual(["--max-old-space-size=1152"]);
    expect(heapLimitArgs(undefined)).toEqual([]);
  });

  it("recognises V8's own report of an exhausted heap (what a capped process writes before it aborts)", () => {
    const r = spawnSync(
      process.execPath,
      [
        ...heapLimitArgs(64),
        "-e",
        "const a = []; for (;;) a.push(Array.from({ length: 1e5 }, (_, i) => i + 0.5));",
      ],
      { encoding: "utf8" },
    );
    expect(r.status === 134 || r.signal === "SIGABRT").toBe(true);
    expect(r.stderr).toMatch(HEAP_EXHAUSTED);
  });

  it("reads a process's resident size", () => {
    const own = residentBytes(process.pid);
    expect(own).toBeGreaterThan(10 * 1024 * 1024);
    expect(residentBytes(4_194_305)).toBeUndefined(); // above pid_max
  });

  it("calls back once when a watched process passes its limit", async () => {
    const child = spawn(process.execPath, [
      "-e",
      "const held = []; setInterval(() => { if (held.length < 40) held.push(Buffer.alloc(8 << 20, 1)); }, 10);",
    ]);
    const watchdog = new MemoryWatchdog(50);
    try {
      const rss = await new Promise<number>((resolve) => {
        watchdog.watch(child.pid!, 120 * 1024 * 1024, resolve);
      });
      expect(rss).toBeGreaterThan(120 * 1024 * 1024);
    } finally {
      watchdog.close();
      child.kill("SIGKILL");
    }
  });
});
