import { describe, expect, it } from "vitest";
import { createVerifyGate, GateBusyError, type GateLane } from "./verify-gate.js";

/** A task the test finishes by hand; `started` resolves once the gate lets it run. */
function task(log: string[], name: string) {
  let finish!: () => void;
  let markStarted!: () => void;
  const started = new Promise<void>((r) => {
    markStarted = r;
  });
  const fn = () =>
    new Promise<string>((resolve) => {
      log.push(name);
      markStarted();
      finish = () => resolve(name);
    });
  return { fn, started, finish: () => finish() };
}

/** Lets every queued microtask and promise callback run. */
const settle = () => new Promise((r) => setImmediate(r));

describe("verification gate", () => {
  it("runs at most `concurrency` checks at once; the next starts when one ends", async () => {
    const gate = createVerifyGate({ concurrency: 2 });
    const log: string[] = [];
    const tasks = ["a", "b", "c"].map((n) => task(log, n));
    const runs = tasks.map((t, i) => gate.run({ source: `s${i}`, lane: "clean" }, t.fn));
    await settle();
    expect(log).toEqual(["a", "b"]);
    expect(gate.stats()).toEqual({ running: 2, queued: 1 });
    tasks[0]!.finish();
    await tasks[2]!.started;
    expect(log).toEqual(["a", "b", "c"]);
    tasks[1]!.finish();
    tasks[2]!.finish();
    expect(await Promise.all(runs)).toEqual(["a", "b", "c"]);
    expect(gate.stats()).toEqual({ running: 0, queued: 0 });
  });

  it("serves the known lane first, then clean and suspect sources, each round-robin", async () => {
    const gate = createVerifyGate({ concurrency: 1, reserved: 0 });
    const log: string[] = [];
    const first = task(log, "first");
    const runs: Promise<string>[] = [gate.run({ source: "x", lane: "clean" }, first.fn)];
    await first.started;
    // A suspect source queues two, a busy clean source five, a second clean source one, then a known
    // caller arrives last.
    const queued: { n: string; source: string; lane: GateLane }[] = [
      { n: "s1", source: "s", lane: "suspect" },
      { n: "s2", source: "s", lane: "suspect" },
      ...["a1", "a2", "a3", "a4", "a5"].map((n) => ({ n, source: "a", lane: "clean" as const })),
      { n: "b1", source: "b", lane: "clean" },
      { n: "known", source: "c", lane: "known" },
    ];
    for (const { n, source, lane } of queued) {
      runs.push(
        gate.run({ source, lane }, async () => {
          log.push(n);
          return n;
        }),
      );
    }
    first.finish();
    await Promise.all(runs);
    expect(log).toEqual(["first", "known", "a1", "b1", "a2", "a3", "a4", "a5", "s1", "s2"]);
  });

  it("refuses a source's check past maxPerSource, and a normal caller past maxQueued", async () => {
    const gate = createVerifyGate({ concurrency: 1, maxPerSource: 2, maxQueued: 2 });
    const log: string[] = [];
    const blocker = task(log, "a");
    const quick = (n: string) => async () => {
      log.push(n);
      return n;
    };
    const runs = [
      gate.run({ source: "one", lane: "clean" }, blocker.fn),
      gate.run({ source: "one", lane: "clean" }, quick("b")),
    ];
    await blocker.started;
    await expect(gate.run({ source: "one", lane: "known" }, quick("x"))).rejects.toBeInstanceOf(
      GateBusyError,
    );
    runs.push(gate.run({ source: "two", lane: "clean" }, quick("c")));
    await expect(gate.run({ source: "three", lane: "clean" }, quick("x"))).rejects.toThrow(/waiting/);
    // The known lane is not bounded by maxQueued (only by maxPerSource), and has a slot of its own.
    runs.push(gate.run({ source: "four", lane: "known" }, quick("d")));
    expect(gate.stats()).toEqual({ running: 2, queued: 2 });
    blocker.finish();
    expect(await Promise.all(runs)).toEqual(["a", "b", "c", "d"]);
    expect(log).toEqual(["a", "d", "b", "c"]);
    expect(gate.stats()).toEqual({ running: 0, queued: 0 });
  });

  it("keeps `reserved` slots for the known lane: a known caller never waits for strangers", async () => {
    const gate = createVerifyGate({ concurrency: 1, reserved: 1 });
    const log: string[] = [];
    const stranger = task(log, "stranger");
    const known = task(log, "known");
    const known2 = task(log, "known2");
    const runs = [
      gate.run({ source: "s", lane: "clean" }, stranger.fn),
      gate.run({ source: "t", lane: "clean" }, async () => "queued"),
      gate.run({ source: "k", lane: "known" }, known.fn),
      gate.run({ source: "k2", lane: "known" }, known2.fn),
    ];
    await known.started;
    expect(log).toEqual(["stranger", "known"]);
    expect(gate.stats()).toEqual({ running: 2, queued: 2 });
    // The stranger's slot frees: the waiting known caller goes first, then (with a normal slot) the stranger.
    stranger.finish();
    await known2.started;
    expect(gate.stats()).toEqual({ running: 2, queued: 1 });
    known.finish();
    known2.finish();
    expect(await Promise.all(runs)).toEqual(["stranger", "queued", "known", "known2"]);
  });

  it("frees the slot when a check throws", async () => {
    const gate = createVerifyGate({ concurrency: 1, maxPerSource: 1 });
    await expect(
      gate.run({ source: "s", lane: "clean" }, async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await gate.run({ source: "s", lane: "clean" }, async () => "ok")).toBe("ok");
    expect(gate.stats()).toEqual({ running: 0, queued: 0 });
  });
});
