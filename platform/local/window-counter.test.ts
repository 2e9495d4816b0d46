import { describe, expect, it } from "vitest";
import { describeWindowCounterContract } from "../testdata/window-counter-contract.js";
import { createLocalWindowCounter } from "./window-counter.js";

function manualClock() {
  let t = Date.parse("2030-01-02T03:04:05.000Z");
  return {
    now: () => new Date(t),
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describeWindowCounterContract("local", async () => {
  const clock = manualClock();
  const counter = createLocalWindowCounter({ clock });
  return { counter, replicas: [counter], pass: async (ms) => clock.advance(ms) };
});

describe("local window counter", () => {
  it("keeps at most maxKeys keys: closed windows go first, then the oldest", async () => {
    const clock = manualClock();
    const counter = createLocalWindowCounter({ clock, maxKeys: 3 });
    await counter.hit("short", 1_000);
    await counter.hit("a", 60_000);
    await counter.hit("b", 60_000);
    clock.advance(2_000);
    await counter.hit("c", 60_000); // "short" has closed: swept, nothing else lost
    expect((await counter.peek("a")).count).toBe(1);
    await counter.hit("d", 60_000); // full of open windows: the oldest ("a") is forgotten
    expect((await counter.peek("a")).count).toBe(0);
    for (const k of ["b", "c", "d"]) expect((await counter.peek(k)).count).toBe(1);
  });
});
