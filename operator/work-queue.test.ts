import { describe, expect, it } from "vitest";
import { WorkQueue } from "./work-queue.js";

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

describe("WorkQueue", () => {
  it("collapses duplicate keys that are waiting", async () => {
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const q = new WorkQueue({
      concurrency: 1,
      handler: async (k) => {
        seen.push(k);
        if (k === "busy") await gate;
      },
    });
    q.add("busy"); // occupies the only worker, so the adds below wait
    q.add("a");
    q.add("a");
    q.add("b");
    q.add("a");
    release();
    await q.idle();
    expect(seen).toEqual(["busy", "a", "b"]);
  });

  it("never runs one key twice at once, and reruns a key added while it ran", async () => {
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const q = new WorkQueue({
      concurrency: 4,
      handler: async () => {
        running++;
        runs++;
        maxRunning = Math.max(maxRunning, running);
        if (runs === 1) await gate;
        running--;
      },
    });
    q.add("a");
    await tick();
    q.add("a"); // while running: marked dirty
    q.add("a");
    await tick();
    expect(maxRunning).toBe(1);
    release();
    await tick(20);
    await q.idle();
    expect(runs).toBe(2);
    expect(maxRunning).toBe(1);
  });

  it("runs different keys concurrently up to the limit", async () => {
    let running = 0;
    let maxRunning = 0;
    const q = new WorkQueue({
      concurrency: 2,
      handler: async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await tick(10);
        running--;
      },
    });
    for (const k of ["a", "b", "c", "d", "e"]) q.add(k);
    await q.idle();
    expect(maxRunning).toBe(2);
  });

  it("addAfter delays, and the earliest delayed add wins", async () => {
    const seen: string[] = [];
    const q = new WorkQueue({ concurrency: 1, handler: async (k) => void seen.push(k) });
    q.addAfter("a", 1000);
    q.addAfter("a", 10);
    await tick(40);
    expect(seen).toEqual(["a"]);
    q.close();
  });

  it("reports handler errors and keeps going", async () => {
    const errors: string[] = [];
    const seen: string[] = [];
    const q = new WorkQueue({
      concurrency: 1,
      handler: async (k) => {
        if (k === "bad") throw new Error("boom");
        seen.push(k);
      },
      onError: (k, e) => errors.push(`${k}:${(e as Error).message}`),
    });
    q.add("bad");
    q.add("good");
    await q.idle();
    expect(errors).toEqual(["bad:boom"]);
    expect(seen).toEqual(["good"]);
  });
});
