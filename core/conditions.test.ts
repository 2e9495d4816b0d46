import { describe, expect, it } from "vitest";
import { getCondition, setCondition } from "./conditions.js";

const t0 = new Date("2030-01-01T00:00:00.000Z");
const t1 = new Date("2030-01-01T00:01:00.000Z");

describe("setCondition", () => {
  it("adds a condition with the time and the generation observed", () => {
    const list = setCondition(
      undefined,
      { type: "Ready", status: "False", reason: "Queued", message: "m" },
      { now: t0, generation: 1 },
    );
    expect(list).toEqual([
      {
        type: "Ready",
        status: "False",
        reason: "Queued",
        message: "m",
        lastTransitionTime: t0.toISOString(),
        observedGeneration: 1,
      },
    ]);
  });

  it("keeps lastTransitionTime unless the status flips, and always takes the new generation, reason and message", () => {
    const first = setCondition(
      undefined,
      { type: "Ready", status: "False", reason: "A", message: "a" },
      { now: t0, generation: 1 },
    );
    const same = setCondition(
      first,
      { type: "Ready", status: "False", reason: "B", message: "b" },
      { now: t1, generation: 2 },
    );
    expect(getCondition(same, "Ready")).toMatchObject({
      reason: "B",
      lastTransitionTime: t0.toISOString(),
      observedGeneration: 2,
    });
    const flipped = setCondition(
      same,
      { type: "Ready", status: "True", reason: "C", message: "c" },
      { now: t1, generation: 2 },
    );
    expect(getCondition(flipped, "Ready")).toMatchObject({
      status: "True",
      lastTransitionTime: t1.toISOString(),
    });
    expect(first).toHaveLength(1);
    expect(getCondition(first, "Ready")?.reason).toBe("A"); // the input list is not changed
  });

  it("leaves other types alone and omits observedGeneration when the object has none", () => {
    const two = setCondition(
      setCondition(
        undefined,
        { type: "Ready", status: "False", reason: "A", message: "a" },
        { now: t0, generation: 4 },
      ),
      { type: "Progressing", status: "True", reason: "P", message: "p" },
      { now: t1, generation: undefined },
    );
    expect(two.map((c) => c.type)).toEqual(["Ready", "Progressing"]);
    expect(two[0]?.observedGeneration).toBe(4);
    expect("observedGeneration" in two[1]!).toBe(false);
  });
});
