/**
 * Dates as PDF Info dictionaries (`D:YYYYMMDDHHmmSSOHH'mm'`, PDF 32000-1 §7.9.4, every legal partial
 * form and the common sloppy variants) and XMP (ISO 8601 subsets, W3C-DTF) write them.
 */

export type DatePrecision = "year" | "month" | "day" | "hour" | "minute" | "second";

export interface ParsedDate {
  raw: string;
  /** The instant; for a date without zone, its wall-clock time read as UTC. */
  utc: Date;
  /** The wall-clock time as written, read as UTC. */
  wall: Date;
  /** Minutes east of UTC; null when the string carries no zone. */
  offsetMinutes: number | null;
  precision: DatePrecision;
}

const PRECISIONS: DatePrecision[] = ["year", "month", "day", "hour", "minute", "second"];

/** How long a value of this precision spans (the uncertainty of comparing it). */
export function precisionSpanMs(p: DatePrecision): number {
  switch (p) {
    case "year":
      return 366 * 86_400_000;
    case "month":
      return 31 * 86_400_000;
    case "day":
      return 86_400_000;
    case "hour":
      return 3_600_000;
    case "minute":
      return 60_000;
    case "second":
      return 0;
  }
}

function build(
  raw: string,
  parts: (string | undefined)[],
  zone: { sign: string; hh?: string; mm?: string } | undefined,
  fractionMs = 0,
): ParsedDate | undefined {
  const [y, mo = "01", d = "01", h = "00", mi = "00", s = "00"] = parts;
  if (y === undefined) return undefined;
  const n = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const [year, month, day, hour, minute, second] = n;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  const wallMs = Date.UTC(year, month - 1, day, hour, minute, second) + fractionMs;
  // Date.UTC maps years 0-99 to 1900-1999; the formats here always carry four digits.
  const wall = new Date(wallMs);
  if (year < 100) wall.setUTCFullYear(year);
  let offsetMinutes: number | null = null;
  if (zone) {
    if (zone.sign === "Z" || zone.sign === "z") offsetMinutes = 0;
    else if (zone.hh !== undefined) {
      const oh = Number(zone.hh);
      const om = Number(zone.mm ?? "0");
      if (oh > 23 || om > 59) return undefined;
      offsetMinutes = (zone.sign === "-" ? -1 : 1) * (oh * 60 + om);
    } else return undefined; // a sign with no hours
  }
  const precision = PRECISIONS[parts.filter((p) => p !== undefined).length - 1] as DatePrecision;
  const utc = new Date(wall.getTime() - (offsetMinutes ?? 0) * 60_000);
  return { raw, utc, wall, offsetMinutes, precision };
}

const PDF_DATE =
  /^\s*(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz+-])(?:(\d{2})'?(?:(\d{2})'?)?)?)?\s*$/;
/**
 * Sloppy forms real writers produce, read leniently: LibreOffice on a server in UTC writes `Z'` (a stray
 * apostrophe after the Z); some writers drop the offset's sign (`…5301'00'`). The first is UTC; the second
 * is read as a wall-clock time without a zone, since the sign is unknown.
 */
const PDF_DATE_Z_APOSTROPHE = /^\s*(?:D:)?(\d{14})[Zz]'(?:00'?(?:00'?)?)?\s*$/;
const PDF_DATE_UNSIGNED_OFFSET = /^\s*(?:D:)?(\d{14})(\d{2})'(\d{2})'?\s*$/;

/** Parses a PDF date string; undefined when it is not one (or names an impossible time). */
export function parsePdfDate(raw: string): ParsedDate | undefined {
  const m = PDF_DATE.exec(raw);
  if (!m) return parseSloppyPdfDate(raw);
  // Partial forms must be prefixes: no day without a month, etc. (the regex already enforces order).
  const sign = m[7];
  return build(raw, [m[1], m[2], m[3], m[4], m[5], m[6]], sign ? { sign, hh: m[8], mm: m[9] } : undefined);
}

function parseSloppyPdfDate(raw: string): ParsedDate | undefined {
  const z = PDF_DATE_Z_APOSTROPHE.exec(raw);
  const u = z ? undefined : PDF_DATE_UNSIGNED_OFFSET.exec(raw);
  const digits = z?.[1] ?? u?.[1];
  if (!digits) return undefined;
  if (u && (Number(u[2]) > 14 || Number(u[3]) > 59)) return undefined;
  const parts = [0, 4, 6, 8, 10, 12].map((at, i) => digits.slice(at, i === 0 ? 4 : at + 2));
  return build(raw, parts, z ? { sign: "Z" } : undefined);
}

const ISO_DATE =
  /^\s*(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?)?)?)?\s*$/;

/** Parses an ISO 8601 / XMP date; undefined when it is not one. */
export function parseIsoDate(raw: string): ParsedDate | undefined {
  const m = ISO_DATE.exec(raw);
  if (!m) return undefined;
  const fractionMs = m[7] ? Math.round(Number(`0.${m[7]}`) * 1000) : 0;
  let zone: { sign: string; hh?: string; mm?: string } | undefined;
  const z = m[8];
  if (z === "Z" || z === "z") zone = { sign: "Z" };
  else if (z) {
    const digits = z.slice(1).replace(":", "");
    zone = { sign: z.slice(0, 1), hh: digits.slice(0, 2), mm: digits.slice(2, 4) || "00" };
  }
  return build(raw, [m[1], m[2], m[3], m[4], m[5], m[6]], zone, fractionMs);
}

/** Either form: Info dates are sometimes written in ISO form and XMP dates in PDF form. */
export function parseAnyDate(raw: string): ParsedDate | undefined {
  return /^\s*D:/.test(raw) || /^\s*\d{5,}/.test(raw)
    ? (parsePdfDate(raw) ?? parseIsoDate(raw))
    : (parseIsoDate(raw) ?? parsePdfDate(raw));
}

/**
 * `a - b` in milliseconds, and how uncertain that difference is. Two dates with zones compare as
 * instants; when either lacks a zone, the wall-clock times are compared and any whole-quarter-hour
 * difference up to 14 hours could be the unknown zone.
 */
export function compareDates(
  a: ParsedDate,
  b: ParsedDate,
): { diffMs: number; zoneUnknown: boolean; precisionMs: number } {
  const zoned = a.offsetMinutes !== null && b.offsetMinutes !== null;
  const diffMs = zoned ? a.utc.getTime() - b.utc.getTime() : a.wall.getTime() - b.wall.getTime();
  const precisionMs = Math.max(precisionSpanMs(a.precision), precisionSpanMs(b.precision));
  return {
    diffMs,
    zoneUnknown: !zoned && (a.offsetMinutes !== null || b.offsetMinutes !== null),
    precisionMs,
  };
}

/** UTC offsets in use (whole hours, and :30 / :45 ones), in minutes, up to ±14 h. */
const ZONE_OFFSETS_MS: number[] = (() => {
  const out = new Set<number>();
  for (let h = 0; h <= 14; h++) {
    for (const m of [0, 30, 45]) {
      const minutes = h * 60 + m;
      if (minutes > 14 * 60) continue;
      out.add(minutes * 60_000);
      out.add(-minutes * 60_000);
    }
  }
  return [...out];
})();

/**
 * True when two dates name the same moment within `toleranceMs`, allowing for coarse precision and, when
 * one side lacks a zone, for any real zone offset (whole hours, :30 and :45 offsets, up to ±14 h).
 */
export function sameMoment(a: ParsedDate, b: ParsedDate, toleranceMs: number): boolean {
  const { diffMs, zoneUnknown, precisionMs } = compareDates(a, b);
  const tol = toleranceMs + precisionMs;
  if (Math.abs(diffMs) <= tol) return true;
  if (!zoneUnknown) return false;
  return ZONE_OFFSETS_MS.some((offset) => Math.abs(diffMs - offset) <= tol);
}

export function formatParsed(d: ParsedDate): string {
  const iso = d.wall
    .toISOString()
    .replace(/\.000Z$/, "")
    .replace(/Z$/, "");
  if (d.offsetMinutes === null) return `${iso} (no time zone)`;
  if (d.offsetMinutes === 0) return `${iso}Z`;
  const sign = d.offsetMinutes < 0 ? "-" : "+";
  const abs = Math.abs(d.offsetMinutes);
  return `${iso}${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}
