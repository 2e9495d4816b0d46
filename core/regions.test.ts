import { describe, expect, it } from "vitest";
import { isRegionCode, normalizeRegion, REGION_CODES } from "./regions.js";

describe("regions", () => {
  it("holds the 249 assigned ISO 3166-1 alpha-2 codes, sorted and unique", () => {
    expect(REGION_CODES).toHaveLength(249);
    expect(new Set(REGION_CODES).size).toBe(249);
    expect([...REGION_CODES].sort()).toEqual([...REGION_CODES]);
  });

  it("normalises any case to upper case", () => {
    expect(normalizeRegion("de")).toBe("DE");
    expect(normalizeRegion("Gb")).toBe("GB");
    expect(normalizeRegion(" us ")).toBe("US");
  });

  it("refuses unassigned, reserved and malformed codes", () => {
    for (const v of ["XK", "EU", "UK", "ZZ", "AA", "USA", "D", "", "1A"])
      expect(normalizeRegion(v)).toBeUndefined();
    expect(isRegionCode("de")).toBe(false);
    expect(isRegionCode("DE")).toBe(true);
  });
});
