import { type Details, parse as parseMrzLines, states as MRZ_STATES } from "mrz";
import { checkDigit, fieldChecks, type FieldCheck, type MrzFormat } from "./mrz-format.js";

/**
 * Validation of an MRZ read from a document, per ICAO Doc 9303 Parts 3-5. The fields are parsed by the `mrz`
 * package (cheminfo, MIT: field layout per format, names, states, sex, check digits); on top of it, what it
 * leaves out: calendar validity of the dates (31 February passes its month/day ranges), expiry after birth,
 * the specimen state UTO (ICAO's own examples; absent from its state list), the composite judged apart from
 * the field check digits (a field changed with its own check digit recomputed leaves only the composite
 * stale), the structure of the name field (Part 3: primary and secondary identifiers, truncation), and a
 * document's expiry as a fact rather than a fault.
 */

export interface Ymd {
  y: number;
  m: number;
  d: number;
}

export interface MrzDate {
  raw: string;
  /** The calendar date, when the six digits form one (`<` for an unknown day or month leaves it undefined). */
  date?: Ymd;
  /** Why the digits are no date (month 13, 31 February …); undefined when valid or partly unknown. */
  invalid?: string;
}

export interface MrzFields {
  documentCode: string;
  issuingState: string;
  surname: string;
  givenNames: string;
  documentNumber: string;
  nationality: string;
  birth: MrzDate;
  sex: string;
  expiry: MrzDate;
  optional: string;
}

export interface MrzProblem {
  code:
    | "check_digit"
    | "composite"
    | "date_invalid"
    | "expiry_before_birth"
    | "state_unknown"
    | "sex_invalid"
    | "name_malformed"
    | "optional_invalid";
  /** The MRZ field the problem is about (our names: documentNumber, birthDate, expirationDate, …). */
  field: string;
  message: string;
  /** Where in the MRZ: line and column range [from, to). */
  line: number;
  from: number;
  to: number;
  evidence: Record<string, unknown>;
}

export interface MrzValidation {
  format: MrzFormat;
  fields: MrzFields;
  checks: FieldCheck[];
  problems: MrzProblem[];
  /** Facts for the reviewer, not faults. */
  expired: boolean;
  specimen: boolean;
}

/** Codes ICAO reserves or the `mrz` package lacks: the specimen state and the EU laissez-passer. */
const EXTRA_STATES = new Set(["UTO", "EUE"]);
export const isKnownState = (code: string) =>
  EXTRA_STATES.has(code) || code in (MRZ_STATES as Record<string, string>);

const DAYS = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

/**
 * The calendar date of an MRZ YYMMDD. The century: a birth date is the latest one not after `now`; an expiry
 * the one within 50 years before or after `now`.
 */
export function mrzDate(raw: string, kind: "birth" | "expiry", now: Date): MrzDate {
  if (!/^[0-9<]{6}$/.test(raw)) return { raw, invalid: `“${raw}” is not six digits` };
  const yy = raw.slice(0, 2);
  const mm = raw.slice(2, 4);
  const dd = raw.slice(4, 6);
  if (yy.includes("<")) return { raw };
  const month = mm === "<<" ? undefined : Number(mm);
  const day = dd === "<<" ? undefined : Number(dd);
  if (mm.includes("<") && mm !== "<<") return { raw, invalid: `month “${mm}”` };
  if (dd.includes("<") && dd !== "<<") return { raw, invalid: `day “${dd}”` };
  const nowY = now.getUTCFullYear();
  let y = 2000 + Number(yy);
  if (kind === "birth") {
    if (y > nowY) y -= 100;
  } else {
    if (y > nowY + 50) y -= 100;
    if (y < nowY - 50) y += 100;
  }
  if (month !== undefined && (month < 1 || month > 12)) return { raw, invalid: `month ${mm} does not exist` };
  if (month === undefined || day === undefined) return { raw };
  if (day < 1 || day > DAYS(y, month))
    return { raw, invalid: `day ${dd} does not exist in month ${mm}${month === 2 ? ` of ${y}` : ""}` };
  return { raw, date: { y, m: month, d: day } };
}

export const isoOf = (d: Ymd) => `${d.y}-${String(d.m).padStart(2, "0")}-${String(d.d).padStart(2, "0")}`;
const before = (a: Ymd, b: Ymd) => isoOf(a) < isoOf(b);

/** Positions of the fields in each format: [line, from, to). */
export const FIELD_SPANS: Record<MrzFormat, Record<string, [number, number, number]>> = {
  TD3: {
    documentCode: [0, 0, 2],
    issuingState: [0, 2, 5],
    name: [0, 5, 44],
    documentNumber: [1, 0, 10],
    nationality: [1, 10, 13],
    birthDate: [1, 13, 20],
    sex: [1, 20, 21],
    expirationDate: [1, 21, 28],
    optional: [1, 28, 42],
    composite: [1, 43, 44],
  },
  TD2: {
    documentCode: [0, 0, 2],
    issuingState: [0, 2, 5],
    name: [0, 5, 36],
    documentNumber: [1, 0, 10],
    nationality: [1, 10, 13],
    birthDate: [1, 13, 20],
    sex: [1, 20, 21],
    expirationDate: [1, 21, 28],
    optional: [1, 28, 35],
    composite: [1, 35, 36],
  },
  TD1: {
    documentCode: [0, 0, 2],
    issuingState: [0, 2, 5],
    documentNumber: [0, 5, 15],
    optional: [0, 15, 30],
    birthDate: [1, 0, 7],
    sex: [1, 7, 8],
    expirationDate: [1, 8, 15],
    nationality: [1, 15, 18],
    composite: [1, 29, 30],
    name: [2, 0, 30],
  },
};

function splitName(field: string): { surname: string; givenNames: string } {
  const trimmed = field.replace(/<+$/, "");
  const [primary = "", ...rest] = trimmed.split("<<");
  return {
    surname: primary.replace(/</g, " ").trim(),
    givenNames: rest.join(" ").replace(/</g, " ").replace(/\s+/g, " ").trim(),
  };
}

const detail = (details: Details[], field: string) => details.find((d) => d.field === field);

/** Validates settled MRZ lines of `format` (what mrz-read.ts returns). `now` decides expiry and centuries. */
export function validateMrz(format: MrzFormat, lines: string[], now: Date): MrzValidation {
  const spans = FIELD_SPANS[format];
  const at = (name: string) => {
    const [l, a, b] = spans[name]!;
    return (lines[l] ?? "").slice(a, b);
  };
  const { surname, givenNames } = splitName(at("name"));
  const birthRaw = at("birthDate").slice(0, 6);
  const expiryRaw = at("expirationDate").slice(0, 6);
  const checks = fieldChecks(format, lines);
  const docNumber = checks.find((c) => c.name === "documentNumber");
  const fields: MrzFields = {
    documentCode: at("documentCode").replace(/</g, ""),
    issuingState: at("issuingState").replace(/</g, ""),
    surname,
    givenNames,
    documentNumber: (docNumber?.value ?? at("documentNumber").slice(0, 9)).replace(/</g, ""),
    nationality: at("nationality").replace(/</g, ""),
    birth: mrzDate(birthRaw, "birth", now),
    sex: at("sex"),
    expiry: mrzDate(expiryRaw, "expiry", now),
    optional: at("optional").replace(/<+$/, ""),
  };
  const problems: MrzProblem[] = [];
  const span = (name: string) => {
    const [line, from, to] = spans[name]!;
    return { line, from, to };
  };

  // Check digits: the fields first, then the composite alone.
  const fieldFails = checks.filter((c) => !c.ok && c.name !== "composite");
  for (const c of fieldFails) {
    const name = c.name === "optional" ? "optional" : c.name;
    problems.push({
      code: "check_digit",
      field: name,
      message: `the check digit of the ${words(name)} is ${c.printed || "missing"} but “${c.value}” gives ${c.expected}`,
      ...span(name),
      evidence: { field: name, value: c.value, printedCheckDigit: c.printed, expectedCheckDigit: c.expected },
    });
  }
  const composite = checks.find((c) => c.name === "composite");
  if (composite && !composite.ok) {
    problems.push({
      code: "composite",
      field: "composite",
      message:
        fieldFails.length === 0
          ? `every field's check digit passes but the composite check digit is ${composite.printed} where the fields give ${composite.expected}: a field was changed and its own check digit recomputed`
          : `the composite check digit is ${composite.printed} where the fields give ${composite.expected}`,
      ...span("composite"),
      evidence: {
        printedCheckDigit: composite.printed,
        expectedCheckDigit: composite.expected,
        fieldCheckDigitsPass: fieldFails.length === 0,
      },
    });
  }

  // Dates.
  for (const [name, d] of [
    ["birthDate", fields.birth],
    ["expirationDate", fields.expiry],
  ] as const) {
    if (d.invalid)
      problems.push({
        code: "date_invalid",
        field: name,
        message: `the ${words(name)} ${d.raw} is no calendar date (${d.invalid})`,
        ...span(name),
        evidence: { field: name, value: d.raw, why: d.invalid },
      });
  }
  if (fields.birth.date && fields.expiry.date && !before(fields.birth.date, fields.expiry.date)) {
    problems.push({
      code: "expiry_before_birth",
      field: "expirationDate",
      message: `the document expires (${isoOf(fields.expiry.date)}) before its holder was born (${isoOf(fields.birth.date)})`,
      ...span("expirationDate"),
      evidence: { birth: isoOf(fields.birth.date), expiry: isoOf(fields.expiry.date) },
    });
  }

  // States, sex, name and optional data, as the `mrz` package parses them.
  let details: Details[] = [];
  try {
    details = parseMrzLines(lines).details;
  } catch {
    details = [];
  }
  for (const [name, code] of [
    ["issuingState", fields.issuingState],
    ["nationality", fields.nationality],
  ] as const) {
    if (!isKnownState(code))
      problems.push({
        code: "state_unknown",
        field: name,
        message: `the ${words(name)} “${code}” is no ICAO 9303 code of a state or organisation`,
        ...span(name),
        evidence: { field: name, value: code },
      });
  }
  const sex = detail(details, "sex");
  if (sex && !sex.valid && !/^[MFX<]$/.test(fields.sex))
    problems.push({
      code: "sex_invalid",
      field: "sex",
      message: `the sex field holds “${fields.sex}”; ICAO 9303 allows M, F or < (X)`,
      ...span("sex"),
      evidence: { value: fields.sex },
    });
  const nameField = at("name");
  const nameProblem = nameStructure(nameField);
  if (nameProblem)
    problems.push({
      code: "name_malformed",
      field: "name",
      message: `the name field ${nameProblem}`,
      ...span("name"),
      evidence: { value: nameField.replace(/<+$/, "") },
    });
  if (!/^[A-Z0-9<]*$/.test(at("optional")))
    problems.push({
      code: "optional_invalid",
      field: "optional",
      message: "the optional data holds characters outside the MRZ alphabet",
      ...span("optional"),
      evidence: { value: at("optional") },
    });
  const today: Ymd = { y: now.getUTCFullYear(), m: now.getUTCMonth() + 1, d: now.getUTCDate() };
  return {
    format,
    fields,
    checks,
    problems,
    expired: fields.expiry.date !== undefined && before(fields.expiry.date, today),
    specimen: fields.issuingState === "UTO" || fields.nationality === "UTO",
  };
}

/** ICAO 9303 Part 3, 4.6: the primary identifier first, `<<` before the secondary, `<` between parts. */
export function nameStructure(field: string): string | undefined {
  const name = field.replace(/<+$/, "");
  if (name === "") return "is empty";
  if (!/^[A-Z]/.test(name)) return "does not start with a letter";
  if (!/^[A-Z<]+$/.test(name)) return "holds characters other than letters and <";
  if (/<{3,}[A-Z]/.test(name)) return "has a run of three or more fillers inside the name";
  return undefined;
}

function words(field: string): string {
  return (
    (
      {
        documentNumber: "document number",
        birthDate: "date of birth",
        expirationDate: "date of expiry",
        optional: "optional data",
        issuingState: "issuing state",
        nationality: "nationality",
        composite: "composite",
      } as Record<string, string>
    )[field] ?? field
  );
}

export { checkDigit };
