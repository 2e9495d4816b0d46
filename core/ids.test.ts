import { decodeTime } from "ulid";
import { describe, expect, it } from "vitest";
import { newDetectionId } from "./ids.js";

const timeOf = (id: string) => decodeTime(id.slice(4).toUpperCase());

describe("newDetectionId", () => {
  it("carries the time it is given, earlier times included", () => {
    const now = Date.now();
    const later = newDetectionId(now + 1000);
    const past = newDetectionId(now - 300 * 86_400_000);
    expect(timeOf(later)).toBe(now + 1000);
    expect(timeOf(past)).toBe(now - 300 * 86_400_000);
    expect(past < later).toBe(true);
  });

  it("stays ordered within one millisecond", () => {
    const t = Date.now() + 5000;
    const ids = Array.from({ length: 50 }, () => newDetectionId(t));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^det-[0-9a-hjkmnp-tv-z]{26}$/);
  });
});
