/**
 * Calendar dates printed in a document's text, with the format they were written in, so checks can
 * tell impossible dates (31/02/2025), dates that only make sense in another region's order (a GB
 * statement with 03/14/2025) and formats a region does not use. Numeric dates are read in the
 * region's order (US month first, elsewhere day first) and also in the other order, when valid.
 * For asking whether a date from elsewhere (a QR code) is printed at all, options widen and narrow the
 * reading: `eitherOrder` reads a numeric date that is impossible in the region's order in the other one,
 * and `years` keeps numbers such as 7/8/8200 (a part number) from counting as printed dates.
 */

export type DateFormat =
  | "iso" // 2025-03-14
  | "slash" // 14/03/2025 or 03/14/2025
  | "dot" // 14.03.2025
  | "dash" // 14-03-2025
  | "long_dmy" // 14 March 2025, 14. März 2025
  | "long_mdy"; // March 14, 2025

export interface ContentDate {
  raw: string;
  start: number;
  end: number;
  format: DateFormat;
  /** The date in the region's reading (UTC midnight), when that reading is a real date. */
  date?: Date;
  /** For numeric day/month dates: which orders give a real date. */
  dayFirstValid?: boolean;
  monthFirstValid?: boolean;
}

/** Month names and abbreviations (English and German) → month number. */
export const MONTHS: Readonly<Record<string, number>> = {
  january: 1,
  february: 2,
  march: 3,
  april: 4,
  may: 5,
  june: 6,
  july: 7,
  august: 8,
  september: 9,
  october: 10,
  november: 11,
  december: 12,
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  sept: 9,
  oct: 10,
  nov: 11,
  dec: 12,
  januar: 1,
  februar: 2,
  märz: 3,
  maerz: 3,
  mai: 5,
  juni: 6,
  juli: 7,
  oktober: 10,
  dezember: 12,
  okt: 10,
  dez: 12,
};

/** A real calendar date (UTC midnight), or undefined (31 February, month 13). */
export function calendarDate(y: number, m: number, d: number): Date | undefined {
  if (!Number.isInteger(y) || !Number.isInteger(m) || !Number.isInteger(d)) return undefined;
  if (y < 1000 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCMonth() === m - 1 && date.getUTCDate() === d ? date : undefined;
}

/** Regions that write numeric dates month first. */
const MONTH_FIRST = new Set(["US", "PH", "FM", "MH", "PW"]);
export const monthFirstRegion = (region: string) => MONTH_FIRST.has(region.toUpperCase());

const year4 = (s: string) => Number(s);

export interface DateOptions {
  /** A numeric date impossible in the region's order (13/03/2025 in the US) takes the other order. */
  eitherOrder?: boolean;
  /** Dates outside these years (inclusive) are found but have no `date`, like impossible ones. */
  years?: { from: number; to: number };
}

/** The years a date printed on a current document can plausibly carry. */
export const PLAUSIBLE_YEARS = { from: 1900, to: 2200 } as const;

/** Every date in the text, in the order they appear. */
export function findDates(text: string, region: string, opts: DateOptions = {}): ContentDate[] {
  const out: ContentDate[] = [];
  const taken: [number, number][] = [];
  const years = opts.years;
  const inYears = (d: Date | undefined) =>
    d && (!years || (d.getUTCFullYear() >= years.from && d.getUTCFullYear() <= years.to)) ? d : undefined;
  const free = (s: number, e: number) => taken.every(([a, b]) => e <= a || s >= b);
  const add = (d: ContentDate) => {
    if (!free(d.start, d.end)) return;
    taken.push([d.start, d.end]);
    out.push(d);
  };
  for (const m of text.matchAll(/(?<![\d./-])(\d{4})-(\d{2})-(\d{2})(?![\d])/g)) {
    const start = m.index ?? 0;
    const date = inYears(calendarDate(year4(m[1] as string), Number(m[2]), Number(m[3])));
    add({ raw: m[0], start, end: start + m[0].length, format: "iso", ...(date ? { date } : {}) });
  }
  for (const m of text.matchAll(/(?<![\d./-])(\d{1,2})([./-])(\d{1,2})\2(\d{4})(?![\d])/g)) {
    const start = m.index ?? 0;
    const a = Number(m[1]);
    const b = Number(m[3]);
    const y = year4(m[4] as string);
    const sep = m[2] as string;
    const dayFirst = inYears(calendarDate(y, b, a));
    const monthFirst = inYears(calendarDate(y, a, b));
    // Dots and dashes are day-first everywhere; slashes follow the region.
    const useMonthFirst = sep === "/" && monthFirstRegion(region);
    const date = useMonthFirst
      ? (monthFirst ?? (opts.eitherOrder ? dayFirst : undefined))
      : (dayFirst ?? (opts.eitherOrder ? monthFirst : undefined));
    add({
      raw: m[0],
      start,
      end: start + m[0].length,
      format: sep === "/" ? "slash" : sep === "." ? "dot" : "dash",
      ...(date ? { date } : {}),
      dayFirstValid: dayFirst !== undefined,
      monthFirstValid: monthFirst !== undefined,
    });
  }
  for (const m of text.matchAll(/\b(\d{1,2})\.?\s+([A-Za-zäÄ]{3,9})\.?,?\s+(\d{4})\b/g)) {
    const month = MONTHS[(m[2] as string).toLowerCase()];
    if (!month) continue;
    const start = m.index ?? 0;
    const date = inYears(calendarDate(year4(m[3] as string), month, Number(m[1])));
    add({ raw: m[0], start, end: start + m[0].length, format: "long_dmy", ...(date ? { date } : {}) });
  }
  for (const m of text.matchAll(/\b([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})\b/g)) {
    const month = MONTHS[(m[1] as string).toLowerCase()];
    if (!month) continue;
    const start = m.index ?? 0;
    const date = inYears(calendarDate(year4(m[3] as string), month, Number(m[2])));
    add({ raw: m[0], start, end: start + m[0].length, format: "long_mdy", ...(date ? { date } : {}) });
  }
  return out.sort((x, y) => x.start - y.start);
}

/** The text read as exactly one date, or null. */
export function parseDateText(text: string, region: string): ContentDate | null {
  const t = text.trim();
  const found = findDates(t, region);
  return found.length === 1 && found[0]?.start === 0 && found[0].end === t.length ? found[0] : null;
}

/** YYYY-MM-DD of a UTC date. */
export const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/**
 * One date from a machine-written value ("2025-03-14", "20250314", "14.03.2025"), as YYYY-MM-DD: the
 * compact form, or else the first real date in the value, numeric ones read in either order; only
 * plausible years (PLAUSIBLE_YEARS).
 */
export function parseDateValue(value: string, region: string): string | undefined {
  const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(value.trim());
  if (compact) {
    const d = calendarDate(Number(compact[1]), Number(compact[2]), Number(compact[3]));
    return d && d.getUTCFullYear() >= PLAUSIBLE_YEARS.from && d.getUTCFullYear() <= PLAUSIBLE_YEARS.to
      ? isoDay(d)
      : undefined;
  }
  const found = findDates(value, region, { eitherOrder: true, years: PLAUSIBLE_YEARS }).find((d) => d.date);
  return found?.date && isoDay(found.date);
}

/** Month names and abbreviations in English, German, French, Dutch, Spanish and Italian → month number. */
const DAY_MONTH_NAMES: Readonly<Record<string, number>> = {
  ...MONTHS,
  janv: 1,
  janvier: 1,
  févr: 2,
  fevr: 2,
  février: 2,
  mars: 3,
  avr: 4,
  avril: 4,
  juin: 6,
  juil: 7,
  juillet: 7,
  août: 8,
  aout: 8,
  sept: 9,
  septembre: 9,
  octobre: 10,
  novembre: 11,
  déc: 12,
  décembre: 12,
  januari: 1,
  februari: 2,
  maart: 3,
  mei: 5,
  augustus: 8,
  ene: 1,
  enero: 1,
  febrero: 2,
  marzo: 3,
  abr: 4,
  abril: 4,
  mayo: 5,
  junio: 6,
  julio: 7,
  ago: 8,
  agosto: 8,
  septiembre: 9,
  setiembre: 9,
  octubre: 10,
  noviembre: 11,
  dic: 12,
  diciembre: 12,
  gen: 1,
  gennaio: 1,
  febbraio: 2,
  aprile: 4,
  maggio: 5,
  mag: 5,
  giugno: 6,
  giu: 6,
  luglio: 7,
  lug: 7,
  settembre: 9,
  set: 9,
  ottobre: 10,
  ott: 10,
  dicembre: 12,
};

/**
 * A day and month printed without a year, as statements print their booking days: "03.03.", "03/03",
 * "3 Mar", "Mar 3", "03 mars", "3. März". The month is read in the region's order for numeric forms.
 */
export function parseDayMonth(text: string, region: string): { day: number; month: number } | undefined {
  const t = text.trim().toLowerCase();
  const numeric = /^(\d{1,2})[./-](\d{1,2})\.?$/.exec(t);
  if (numeric) {
    const a = Number(numeric[1]);
    const b = Number(numeric[2]);
    const [day, month] = monthFirstRegion(region) && t.includes("/") ? [b, a] : [a, b];
    return calendarDate(2000, month, day) ? { day, month } : undefined;
  }
  const dm = /^(\d{1,2})\.?\s+([\p{L}]{3,9})\.?$/u.exec(t);
  const md = /^([\p{L}]{3,9})\.?\s+(\d{1,2})$/u.exec(t);
  const day = Number(dm?.[1] ?? md?.[2]);
  const month = DAY_MONTH_NAMES[(dm?.[2] ?? md?.[1] ?? "").normalize("NFC")];
  if (!month || !calendarDate(2000, month, day)) return undefined;
  return { day, month };
}
