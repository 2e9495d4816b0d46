import { describe, expect, it } from "vitest";
import { parseAnyDate, parseIsoDate, parsePdfDate, sameMoment } from "./pdf-date.js";

const iso = (s: string) => new Date(s).toISOString();

describe("parsePdfDate", () => {
  it.each([
    ["D:2025", "2025-01-01T00:00:00.000Z", "year", null],
    ["D:202503", "2025-03-01T00:00:00.000Z", "month", null],
    ["D:20250314", "2025-03-14T00:00:00.000Z", "day", null],
    ["D:2025031409", "2025-03-14T09:00:00.000Z", "hour", null],
    ["D:202503140926", "2025-03-14T09:26:00.000Z", "minute", null],
    ["D:20250314092653", "2025-03-14T09:26:53.000Z", "second", null],
    ["D:20250314092653Z", "2025-03-14T09:26:53.000Z", "second", 0],
    ["D:20250314092653Z00'00'", "2025-03-14T09:26:53.000Z", "second", 0],
    ["D:20250314092653+01'00'", "2025-03-14T08:26:53.000Z", "second", 60],
    ["D:20250314092653-05'30'", "2025-03-14T14:56:53.000Z", "second", -330],
    ["D:20250314092653+01'00", "2025-03-14T08:26:53.000Z", "second", 60],
    ["D:20250314092653+0100", "2025-03-14T08:26:53.000Z", "second", 60],
    ["D:20250314092653+01", "2025-03-14T08:26:53.000Z", "second", 60],
    ["20250314092653+01'00'", "2025-03-14T08:26:53.000Z", "second", 60],
    // LibreOffice on a server in UTC writes a stray apostrophe after the Z.
    ["D:20261124042501Z'", "2026-11-24T04:25:01.000Z", "second", 0],
    // A writer that drops the offset's sign: the wall-clock time, zone unknown.
    ["D:2025012915363401'00'", "2025-01-29T15:36:34.000Z", "second", null],
  ])("%s", (raw, utc, precision, offset) => {
    const d = parsePdfDate(raw);
    expect(d?.utc.toISOString()).toBe(utc);
    expect(d?.precision).toBe(precision);
    expect(d?.offsetMinutes).toBe(offset);
  });

  it.each([
    "",
    "D:",
    "D:25",
    "D:20251314",
    "D:20250230",
    "D:20250314250000",
    "D:20250314096000",
    "D:191000101120000",
    "yesterday",
    "D:20250314092653+",
    "D:20250314092653Z'x",
    "D:2025031409265399'00'",
  ])("rejects %j", (raw) => {
    expect(parsePdfDate(raw)).toBeUndefined();
  });
});

describe("parseIsoDate", () => {
  it.each([
    ["2025", "2025-01-01T00:00:00.000Z", "year", null],
    ["2025-03", "2025-03-01T00:00:00.000Z", "month", null],
    ["2025-03-14", "2025-03-14T00:00:00.000Z", "day", null],
    ["2025-03-14T09:26", "2025-03-14T09:26:00.000Z", "minute", null],
    ["2025-03-14T09:26:53", "2025-03-14T09:26:53.000Z", "second", null],
    ["2025-03-14T09:26:53.25Z", "2025-03-14T09:26:53.250Z", "second", 0],
    ["2025-03-14T09:26:53+01:00", "2025-03-14T08:26:53.000Z", "second", 60],
    ["2025-03-14T09:26:53-0530", "2025-03-14T14:56:53.000Z", "second", -330],
    ["2025-03-14 09:26:53+01", "2025-03-14T08:26:53.000Z", "second", 60],
  ])("%s", (raw, utc, precision, offset) => {
    const d = parseIsoDate(raw);
    expect(d?.utc.toISOString()).toBe(utc);
    expect(d?.precision).toBe(precision);
    expect(d?.offsetMinutes).toBe(offset);
  });

  it.each(["2025-13-01", "2025-02-29", "2025-03-14T24:00:00", "14/03/2025", "2025-03-14T09:26:53+25:00"])(
    "rejects %j",
    (raw) => {
      expect(parseIsoDate(raw)).toBeUndefined();
    },
  );

  it("accepts either form through parseAnyDate", () => {
    expect(parseAnyDate("D:20250314092653Z")?.utc.toISOString()).toBe(iso("2025-03-14T09:26:53Z"));
    expect(parseAnyDate("2025-03-14T09:26:53Z")?.utc.toISOString()).toBe(iso("2025-03-14T09:26:53Z"));
    expect(parseAnyDate("20250314092653Z")?.utc.toISOString()).toBe(iso("2025-03-14T09:26:53Z"));
  });
});

describe("sameMoment", () => {
  const p = (s: string) => parseAnyDate(s)!;
  it("compares zoned dates as instants", () => {
    expect(sameMoment(p("D:20250314092653+01'00'"), p("2025-03-14T08:26:53Z"), 120_000)).toBe(true);
    expect(sameMoment(p("D:20250314092653+01'00'"), p("2025-03-14T09:26:53Z"), 120_000)).toBe(false);
  });
  it("allows any zone when one side has none", () => {
    expect(sameMoment(p("D:20250314092653"), p("2025-03-14T09:26:53-05:00"), 120_000)).toBe(true);
    expect(sameMoment(p("D:20250314092653"), p("2025-03-14T14:26:53Z"), 120_000)).toBe(true);
    expect(sameMoment(p("D:20250314092653"), p("2025-03-14T09:40:53Z"), 120_000)).toBe(false);
    expect(sameMoment(p("D:20250314092653"), p("2025-03-16T09:26:53Z"), 120_000)).toBe(false);
  });
  it("widens the tolerance for coarse dates", () => {
    expect(sameMoment(p("D:20250314"), p("2025-03-14T17:00:00Z"), 120_000)).toBe(true);
    expect(sameMoment(p("D:20250314"), p("2025-03-16T17:00:00Z"), 120_000)).toBe(false);
  });
});
