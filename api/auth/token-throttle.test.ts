import pino from "pino";
import { describe, expect, it } from "vitest";
import { createLocalWindowCounter } from "../../platform/local/window-counter.js";
import { manualClock } from "../testdata/app-kit.js";
import { blockSeconds, createTokenThrottle, type TokenThrottleSettings } from "./token-throttle.js";

const SETTINGS: TokenThrottleSettings = {
  windowSeconds: 900,
  maxFailuresPerAddress: 10,
  maxFailuresPerClient: 20,
  knownSeconds: 7 * 24 * 3600,
};

function make(settings: Partial<TokenThrottleSettings> = {}) {
  const clock = manualClock();
  const counter = createLocalWindowCounter({ clock });
  const throttle = createTokenThrottle({
    counter,
    settings: { ...SETTINGS, ...settings },
    log: pino({ level: "silent" }),
  });
  return { clock, counter, throttle };
}

async function fail(throttle: ReturnType<typeof make>["throttle"], n: number, id: string, addr: string) {
  for (let i = 0; i < n; i++) await throttle.recordFailure(id, addr);
}

describe("blockSeconds", () => {
  it("is 0 below the threshold, then doubles from 1 s up to the cap", () => {
    expect([9, 10, 11, 12, 13, 19, 20, 1000].map((n) => blockSeconds(n, 10, 900))).toEqual([
      0, 1, 2, 4, 8, 512, 900, 900,
    ]);
    expect(blockSeconds(50, 0, 900)).toBe(0); // 0 = not limited
  });
});

describe("token throttle", () => {
  it("blocks an address after its failures, for exponentially longer each time", async () => {
    const { throttle, clock } = make();
    await fail(throttle, 9, "mallory", "10.0.0.9");
    expect(await throttle.check("anyone", "10.0.0.9")).toEqual({ allowed: true, lane: "suspect" });
    await fail(throttle, 1, "guess-1", "10.0.0.9");
    expect(await throttle.check("anyone", "10.0.0.9")).toEqual({
      allowed: false,
      retryAfterSeconds: 1,
      reason: "address",
    });
    // Other addresses are not affected.
    expect((await throttle.check("anyone", "10.0.0.10")).allowed).toBe(true);
    clock.advance(1_000);
    expect((await throttle.check("anyone", "10.0.0.9")).allowed).toBe(true);
    await fail(throttle, 1, "guess-2", "10.0.0.9");
    expect(await throttle.check("anyone", "10.0.0.9")).toMatchObject({ retryAfterSeconds: 2 });
    clock.advance(2_000);
    await fail(throttle, 1, "guess-3", "10.0.0.9");
    expect(await throttle.check("anyone", "10.0.0.9")).toMatchObject({ retryAfterSeconds: 4 });
    // The failure window closes 15 minutes after its first failure: counting starts again.
    clock.advance(900_000);
    expect((await throttle.check("anyone", "10.0.0.9")).allowed).toBe(true);
    await fail(throttle, 9, "guess", "10.0.0.9");
    expect((await throttle.check("anyone", "10.0.0.9")).allowed).toBe(true);
  });

  it("blocks a client_id guessed at from many addresses, except from addresses it authenticated from", async () => {
    const { throttle } = make();
    await throttle.recordSuccess("acme", "192.0.2.1");
    for (let i = 0; i < 20; i++) await throttle.recordFailure("acme", `198.51.100.${i}`);
    expect(await throttle.check("acme", "203.0.113.7")).toMatchObject({ allowed: false, reason: "client" });
    expect(await throttle.check("acme", "192.0.2.1")).toEqual({ allowed: true, lane: "known" });
    expect((await throttle.check("other", "203.0.113.7")).allowed).toBe(true);
  });

  it("a known pair passes its address's block, but not its own", async () => {
    const { throttle } = make();
    await throttle.recordSuccess("acme", "192.0.2.1");
    // Someone at the same address guesses at other ids: the address is blocked, acme from it is not.
    for (let i = 0; i < 10; i++) await throttle.recordFailure(`guess-${i}`, "192.0.2.1");
    expect(await throttle.check("stranger", "192.0.2.1")).toMatchObject({
      allowed: false,
      reason: "address",
    });
    expect(await throttle.check("acme", "192.0.2.1")).toEqual({ allowed: true, lane: "known" });
    // Guesses at acme itself from that address block the pair, known or not.
    for (let i = 0; i < 5; i++) await throttle.recordFailure("acme", "192.0.2.1");
    expect(await throttle.check("acme", "192.0.2.1")).toMatchObject({ allowed: false, reason: "pair" });
  });

  it("a success forgives the pair's own failures, not the address's", async () => {
    const { throttle } = make();
    await fail(throttle, 4, "acme", "192.0.2.1");
    await throttle.recordSuccess("acme", "192.0.2.1");
    await fail(throttle, 4, "acme", "192.0.2.1");
    expect((await throttle.check("acme", "192.0.2.1")).allowed).toBe(true);
    // 8 failures from the address so far; 2 more at anyone block the address for strangers.
    await fail(throttle, 2, "x", "192.0.2.1");
    expect(await throttle.check("stranger", "192.0.2.1")).toMatchObject({ reason: "address" });
  });

  it("a known pair stays known for knownSeconds after its last refresh", async () => {
    const { throttle, clock } = make({ knownSeconds: 100 });
    await throttle.recordSuccess("acme", "192.0.2.1");
    await fail(throttle, 20, "acme", "198.51.100.1");
    expect((await throttle.check("acme", "192.0.2.1")).allowed).toBe(true);
    clock.advance(60_000);
    await throttle.recordSuccess("acme", "192.0.2.1"); // past half its life: refreshed
    clock.advance(60_000);
    expect(await throttle.check("acme", "192.0.2.1")).toEqual({ allowed: true, lane: "known" });
    clock.advance(41_000);
    await fail(throttle, 1, "acme", "198.51.100.2"); // the 21st failure in the window: acme blocked again
    expect(await throttle.check("acme", "192.0.2.1")).toMatchObject({ allowed: false, reason: "client" });
  });

  it("puts a known pair first, then addresses without failures, then addresses that failed", async () => {
    const { throttle } = make();
    expect(await throttle.check("acme", "192.0.2.1")).toEqual({ allowed: true, lane: "clean" });
    await throttle.recordFailure("typo", "192.0.2.1");
    expect(await throttle.check("acme", "192.0.2.1")).toEqual({ allowed: true, lane: "suspect" });
    await throttle.recordSuccess("acme", "192.0.2.1");
    expect(await throttle.check("acme", "192.0.2.1")).toEqual({ allowed: true, lane: "known" });
    expect(await throttle.check("other", "192.0.2.1")).toEqual({ allowed: true, lane: "suspect" });
    expect(await throttle.check("other", "192.0.2.2")).toEqual({ allowed: true, lane: "clean" });
  });

  it("0 turns a limit off", async () => {
    const { throttle } = make({ maxFailuresPerAddress: 0, maxFailuresPerClient: 0 });
    await fail(throttle, 100, "acme", "192.0.2.1");
    expect(await throttle.check("acme", "192.0.2.1")).toEqual({ allowed: true, lane: "clean" });
  });

  it("fails open when the counters fail", async () => {
    const errors: unknown[] = [];
    const broken = {
      hit: async () => {
        throw new Error("down");
      },
      peek: async () => {
        throw new Error("down");
      },
      clear: async () => {
        throw new Error("down");
      },
    };
    const throttle = createTokenThrottle({
      counter: broken,
      settings: SETTINGS,
      log: pino({ level: "silent" }),
      onCounterError: () => errors.push(1),
    });
    await throttle.recordFailure("a", "1.2.3.4");
    await throttle.recordSuccess("a", "1.2.3.4");
    expect(await throttle.check("a", "1.2.3.4")).toEqual({ allowed: true, lane: "clean" });
    expect(errors).toHaveLength(3);
  });
});
