import { describe, expect, it } from "vitest";
import { backoffMs } from "./backoff.js";

describe("backoffMs", () => {
  const policy = { firstMs: 250, maxMs: 3_000 };

  it("doubles from the first delay after each failure in a row", () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, policy))).toEqual([250, 500, 1000, 2000]);
  });

  it("stops at the cap, however many failures", () => {
    expect(backoffMs(5, policy)).toBe(3_000);
    expect(backoffMs(1_000, policy)).toBe(3_000);
    expect(backoffMs(Number.MAX_SAFE_INTEGER, policy)).toBe(3_000);
  });

  it("treats no failure yet like the first one", () => {
    expect(backoffMs(0, policy)).toBe(250);
    expect(backoffMs(-3, policy)).toBe(250);
  });
});
