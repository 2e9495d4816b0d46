import { describe, expect, it } from "vitest";
import { calendarDate, findDates, isoDay, parseDateText, parseDateValue } from "./dates.js";

const days = (text: string, region: string) =>
  findDates(text, region).map((d) => (d.date ? isoDay(d.date) : d.raw));

describe("findDates", () => {
  it("reads numeric dates in the region's order", () => {
    expect(days("03/04/2025", "US")).toEqual(["2025-03-04"]);
    expect(days("03/04/2025", "GB")).toEqual(["2025-04-03"]);
    expect(days("03.04.2025 and 2025-12-31", "DE")).toEqual(["2025-04-03", "2025-12-31"]);
    expect(days("03-04-2025", "US")).toEqual(["2025-04-03"]);
  });

  it("reads long English and German dates", () => {
    expect(days("March 14, 2025 / 14 March 2025", "US")).toEqual(["2025-03-14", "2025-03-14"]);
    expect(days("am 14. März 2025", "DE")).toEqual(["2025-03-14"]);
    expect(days("1 Sept 2025", "GB")).toEqual(["2025-09-01"]);
  });

  it("says which orders make a numeric date real", () => {
    const [feb31] = findDates("31/02/2025", "GB");
    expect(feb31).toMatchObject({ dayFirstValid: false, monthFirstValid: false, format: "slash" });
    expect(feb31?.date).toBeUndefined();
    const [us] = findDates("03/14/2025", "GB");
    expect(us).toMatchObject({ dayFirstValid: false, monthFirstValid: true });
    expect(us?.date).toBeUndefined();
    const [both] = findDates("03/04/2025", "GB");
    expect(both).toMatchObject({ dayFirstValid: true, monthFirstValid: true });
  });

  it("finds no dates in amounts, versions, IBANs or phone numbers", () => {
    expect(findDates("£1,234.56  v1.2.3  DE89 3704 0044  0113 496 0123  12.5.20251", "GB")).toEqual([]);
  });

  it("parses a cell that is exactly one date", () => {
    expect(parseDateText(" 14.03.2025 ", "DE")?.format).toBe("dot");
    expect(parseDateText("on 14.03.2025", "DE")).toBeNull();
  });

  it("knows the calendar", () => {
    expect(calendarDate(2024, 2, 29)).toBeDefined();
    expect(calendarDate(2025, 2, 29)).toBeUndefined();
    expect(calendarDate(2025, 4, 31)).toBeUndefined();
    expect(calendarDate(2025, 13, 1)).toBeUndefined();
  });

  it("reads an impossible numeric date in the other order when asked (eitherOrder)", () => {
    const either = (text: string, region: string) =>
      findDates(text, region, { eitherOrder: true }).map((d) => (d.date ? isoDay(d.date) : d.raw));
    expect(either("03/14/2025", "GB")).toEqual(["2025-03-14"]);
    expect(either("14/03/2025", "US")).toEqual(["2025-03-14"]);
    expect(either("03/04/2025", "US")).toEqual(["2025-03-04"]);
    expect(either("31/02/2025", "GB")).toEqual(["31/02/2025"]);
  });

  it("reads a machine-written date value", () => {
    expect(parseDateValue("20250314", "US")).toBe("2025-03-14");
    expect(parseDateValue("2025-03-01", "GB")).toBe("2025-03-01");
    expect(parseDateValue(" 01.02.2025", "DE")).toBe("2025-02-01");
    expect(parseDateValue("13/25/2025", "US")).toBeUndefined();
    expect(parseDateValue("20251399", "US")).toBeUndefined();
  });
});
