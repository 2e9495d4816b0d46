import type { Finding } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import { mayBeIdentityDocument } from "../../document/id/applies.js";
import type { ReadingDoubt } from "../../document/id/compare.js";
import { type IdPage, readIdentity } from "../../document/id/read.js";
import { CHECKED_FIELDS, fieldChecks, replaceAt } from "../../document/id/mrz-format.js";
import { FIELD_SPANS, isoOf, type MrzProblem, type MrzValidation } from "../../document/id/mrz-validate.js";
import { OcrbFontMissingError } from "../../document/id/ocrb.js";
import { ImageDecodeError } from "../../document/raster.js";
import { defineCheck, flaggedCodes, skip, unreadable } from "../check.js";

/**
 * id.mrz: finds and reads the Machine Readable Zone of a passport, ID card or visa (ICAO Doc 9303; TD3, TD2,
 * TD1) on image documents and short PDFs (document/id/), validates it (check digits of each field and the
 * composite, calendar dates, expiry after birth, state codes, sex, name structure) and holds it against the
 * visual zone (name, document number, dates of birth and expiry, nationality as printed). Reports
 * `mrz_present`.
 *
 * Levels: a failing check digit, an impossible date or an MRZ/VIZ disagreement read with confidence is proof
 * (8: identifier or consistency evidence); the same on a reading the OCR was unsure of (characters the two
 * readings disagreed on, read with low confidence or not at all) weighs 4; an unknown state code 5; an
 * expired document and the specimen state UTO are facts for the reviewer (1), not fraud.
 */

export const ID_MRZ_CHECK_ID = "id.mrz";

/** Finding codes of id.mrz, their levels and evidence kinds (docs/api.md lists them). */
export const ID_MRZ_CODES = {
  mrz_check_digit_failed: {
    level: "proof",
    kind: "identifier",
    means: "a field's check digit does not match the field",
  },
  mrz_composite_failed: {
    level: "proof",
    kind: "identifier",
    means:
      "every field's check digit passes but the composite does not: a field was changed and its own check digit recomputed",
  },
  mrz_date_invalid: {
    level: "proof",
    kind: "identifier",
    means: "a date in the MRZ does not exist (31 February, month 13)",
  },
  mrz_expiry_before_birth: {
    level: "proof",
    kind: "identifier",
    means: "the document expires before its holder was born",
  },
  mrz_state_unknown: {
    level: "specific",
    kind: "identifier",
    means: "the issuing state or nationality is no ICAO 9303 code",
  },
  mrz_sex_invalid: {
    level: "anomaly",
    kind: "identifier",
    means: "the sex field holds a character ICAO 9303 does not allow",
  },
  mrz_name_malformed: {
    level: "anomaly",
    kind: "identifier",
    means: "the name field breaks ICAO 9303's name structure",
  },
  mrz_viz_mismatch: {
    level: "proof",
    kind: "consistency",
    means: "the printed (visual zone) value of a field differs from the MRZ's; boxed on the printed field",
  },
  mrz_viz_mismatch_mrz: {
    level: "note",
    kind: "consistency",
    means:
      "the MRZ side of an mrz_viz_mismatch, boxed on the MRZ field (severity 0: the mismatch counts once)",
  },
  mrz_uncertain_reading: {
    level: "note",
    kind: "identifier",
    means: "characters of the MRZ could not be read with confidence",
  },
  document_expired: {
    level: "note",
    kind: "plausibility",
    means: "the document's date of expiry has passed (a fact, not fraud)",
  },
  specimen_document: {
    level: "note",
    kind: "provenance",
    means: "the MRZ names the specimen state UTO (ICAO's examples)",
  },
} as const satisfies CodeTable;

type Code = keyof typeof ID_MRZ_CODES;

const PROBLEM_CODE: Record<MrzProblem["code"], Code> = {
  check_digit: "mrz_check_digit_failed",
  composite: "mrz_composite_failed",
  date_invalid: "mrz_date_invalid",
  expiry_before_birth: "mrz_expiry_before_birth",
  state_unknown: "mrz_state_unknown",
  sex_invalid: "mrz_sex_invalid",
  name_malformed: "mrz_name_malformed",
  optional_invalid: "mrz_check_digit_failed",
};

const SURE_SEVERITY: Record<MrzProblem["code"], number> = {
  check_digit: 8,
  composite: 8,
  date_invalid: 8,
  expiry_before_birth: 8,
  state_unknown: 5,
  sex_invalid: 4,
  name_malformed: 3,
  optional_invalid: 4,
};

const FIELD_WORDS: Record<string, string> = {
  surname: "surname",
  givenNames: "given names",
  documentNumber: "document number",
  birth: "date of birth",
  expiry: "date of expiry",
  nationality: "nationality",
};

/** The MRZ characters a problem rests on: the field and its check digit, or all the composite covers. */
function involved(v: IdPage["mrz"] & object, p: MrzProblem): [number, number, number][] {
  if (p.code === "composite") {
    const spec = CHECKED_FIELDS[v.validation.format].find((c) => c.name === "composite");
    return spec ? [...spec.covers, [spec.line, spec.at, spec.at + 1]] : [[p.line, p.from, p.to]];
  }
  if (p.code === "check_digit") {
    const check = v.validation.checks.find((c) => c.name === p.field);
    const spec = CHECKED_FIELDS[v.validation.format].find((c) => c.name === p.field);
    if (check && spec) return [...spec.covers, [check.line, check.at, check.at + 1]];
  }
  if (p.code === "expiry_before_birth") {
    const spans = FIELD_SPANS[v.validation.format];
    return [spans.birthDate!, spans.expirationDate!];
  }
  return [[p.line, p.from, p.to]];
}

/**
 * How many characters a problem rests on that were not read with confidence and independently: a proof needs
 * every one of them read with a clear template margin and agreed by both confirming readers (tesseract and a
 * re-read at a higher resolution; mrz-read.ts). A digit-for-digit confusion on one reader's word stays a note.
 */
function unconfirmedIn(page: IdPage, ranges: [number, number, number][]): number {
  const r = page.mrz!.reading;
  let n = 0;
  for (const [l, a, b] of ranges) for (let i = a; i < b; i++) if (!r.confirmed.has(`${l}:${i}`)) n++;
  return n;
}

/**
 * How many misreadings, among those the readers make plausible, would explain a failing composite when every
 * field's own check digit passes (0: none, the failure is proof). The check digit weights (7, 3, 1) are prime to
 * 10, so one misread character inside a field whose check digit passes changed nothing mod 10: not the field's
 * sum, and not the composite's, which covers the field with weights of the same kind. A genuine MRZ can only
 * show "every field passes, the composite fails" through a misread composite digit, a misread character the
 * composite covers that no field check protects (TD1's optional data), or two misreadings in one field. So
 * those places are tried with what another reader saw there (`alternatives`: the confirming readings, the
 * reading before correction, the templates' runner-up): a variant that makes the composite pass, and keeps every
 * passing field passing, is a doubt. A character every reader read alike is no doubt.
 */
export function compositeDoubts(
  lines: readonly string[],
  validation: MrzValidation,
  confirmed: ReadonlySet<string>,
  alternatives: ReadonlyMap<string, readonly string[]>,
): number {
  const format = validation.format;
  const spec = CHECKED_FIELDS[format].find((c) => c.name === "composite");
  if (!spec) return 1;
  const passing = validation.checks.filter((c) => c.ok && c.name !== "composite");
  const protectedBy = new Map<string, string>();
  for (const c of passing) {
    for (const [l, a, b] of c.covers) for (let i = a; i < b; i++) protectedBy.set(`${l}:${i}`, c.name);
    protectedBy.set(`${c.line}:${c.at}`, c.name);
  }
  const keyOf = (l: number, i: number) => `${l}:${i}`;
  const open = (key: string) => !confirmed.has(key) && (alternatives.get(key)?.length ?? 0) > 0;
  const singles: string[] = [];
  const inField = new Map<string, string[]>();
  for (const [l, a, b] of [...spec.covers, [spec.line, spec.at, spec.at + 1] as [number, number, number]])
    for (let i = a; i < b; i++) {
      const key = keyOf(l, i);
      if (!open(key)) continue;
      const field = protectedBy.get(key);
      if (field === undefined) singles.push(key);
      else inField.set(field, [...(inField.get(field) ?? []), key]);
    }
  const variants: string[][] = singles.map((k) => [k]);
  for (const keys of inField.values())
    for (let x = 0; x < keys.length; x++)
      for (let y = x + 1; y < keys.length; y++) variants.push([keys[x]!, keys[y]!]);
  const explains = (subst: [string, string][]) => {
    const trial = [...lines];
    for (const [key, ch] of subst) {
      const [l, i] = key.split(":").map(Number) as [number, number];
      trial[l] = replaceAt(trial[l]!, i, ch);
    }
    const after = fieldChecks(format, trial);
    return (
      after.find((c) => c.name === "composite")?.ok === true &&
      passing.every((p) => after.find((c) => c.name === p.name)?.ok)
    );
  };
  let doubts = 0;
  for (const keys of variants) {
    const choices = keys.map((k) => alternatives.get(k)!.map((ch) => [k, ch] as [string, string]));
    const combos: [string, string][][] =
      choices.length === 1
        ? choices[0]!.map((c) => [c])
        : choices[0]!.flatMap((a) => choices[1]!.map((b) => [a, b]));
    if (combos.some(explains)) doubts++;
  }
  return doubts;
}

/** Severity of a problem read with confidence, and when it could not be confirmed (a note for the reviewer). */
const UNCONFIRMED_SEVERITY = 2;

function problemFindings(page: IdPage): Finding[] {
  const mrz = page.mrz!;
  const v = mrz.validation;
  const fieldFailed = v.problems.some((p) => p.code === "check_digit");
  const out: Finding[] = [];
  for (const p of v.problems) {
    // With a field's check digit failing, the composite fails with it: one finding says it.
    if (p.code === "composite" && fieldFailed) continue;
    // Codes and structure are judged on confident characters only; check digits and dates need confirming.
    const ranges = involved(mrz, p);
    const needsConfirming = PROOF_CODES.has(p.code);
    const unsure = needsConfirming
      ? p.code === "composite"
        ? compositeDoubts(mrz.reading.lines, mrz.validation, mrz.reading.confirmed, mrz.reading.alternatives)
        : unconfirmedIn(page, ranges)
      : ranges.reduce((n, [l, a, b]) => {
          for (let i = a; i < b; i++) if (mrz.reading.unsure.has(`${l}:${i}`)) n++;
          return n;
        }, 0);
    const severity =
      unsure > 0 ? Math.min(UNCONFIRMED_SEVERITY, SURE_SEVERITY[p.code]) : SURE_SEVERITY[p.code];
    out.push({
      code: PROBLEM_CODE[p.code],
      message: `On page ${page.page}, in the MRZ (${v.format}) ${p.message}${unsure > 0 ? (p.code === "composite" ? `; another reader saw characters that would make it pass (${unsure} way${unsure > 1 ? "s" : ""}), so this is a note, not a finding` : `; ${unsure} of the characters involved could not be read with confidence and confirmed by a second reader, so this is a note, not a finding`) : mrz.reading.confirmedBy.length ? `; every character involved was read with confidence and confirmed by ${mrz.reading.confirmedBy.join(" and ")}` : ""}.`,
      page: page.page,
      bbox: mrz.spanBox(p.line, p.from, p.to),
      evidence: {
        ...p.evidence,
        mrzLine: mrz.reading.lines[p.line],
        format: v.format,
        confirmed: unsure === 0,
        ...(unsure > 0 ? { unconfirmedCharacters: unsure } : {}),
      },
      severity,
    });
  }
  return out;
}

/** Problems that are proof only on a confirmed reading. */
const PROOF_CODES = new Set<MrzProblem["code"]>([
  "check_digit",
  "composite",
  "date_invalid",
  "expiry_before_birth",
]);

function mismatchFindings(page: IdPage): Finding[] {
  const mrz = page.mrz!;
  const out: Finding[] = [];
  const fieldFails = new Set(
    mrz.validation.problems.filter((p) => p.code === "check_digit").map((p) => p.field),
  );
  for (const d of page.mrzVsViz) {
    const words = FIELD_WORDS[d.field] ?? d.field;
    const mrzField = d.field === "birth" ? "birthDate" : d.field === "expiry" ? "expirationDate" : d.field;
    // The MRZ side is only as sure as its check digit, the printed side as its reading (readingDoubts): a
    // disagreement is proof only when both are sure; one the reading may explain is an anomaly.
    const mrzSure = !fieldFails.has(mrzField);
    const severity = d.doubts.length > 0 ? DOUBTFUL_MISMATCH_SEVERITY : mrzSure ? 8 : 5;
    const evidence = {
      field: d.field,
      label: `${cap(words)} (MRZ → printed)`,
      before: d.encoded,
      after: d.printed,
      mrz: d.encoded,
      printed: d.printed,
      secondReading: d.reread,
      printedConfidence: Math.round(d.viz.confidence),
      foundBy: d.viz.label,
      ...(d.doubts.length ? { readingDoubts: d.doubts } : {}),
      printedBox: d.printedBox,
      ...(d.encodedBox ? { mrzBox: d.encodedBox } : {}),
    };
    out.push({
      code: "mrz_viz_mismatch",
      message:
        d.doubts.length > 0
          ? `On page ${page.page}, the ${words} printed in the visual zone reads “${d.printed}” where the MRZ has “${d.encoded}”, but the printed reading is not sure (${describeDoubts(d.doubts)}): an anomaly for the reviewer to look at, not proof of an alteration.`
          : `On page ${page.page}, the ${words} printed in the visual zone (“${d.printed}”) differs from the MRZ's (“${d.encoded}”); read twice with confidence, the printed value stays different: one of the two zones was altered.`,
      page: page.page,
      bbox: d.printedBox,
      evidence,
      severity,
    });
    // The MRZ side, boxed on the MRZ field: its own group (a group has one box per page, so the two sides
    // in one group would be one box spanning both), without before/after so it does not merge by value.
    if (d.encodedBox)
      out.push({
        code: "mrz_viz_mismatch_mrz",
        message: `On page ${page.page}, the MRZ's ${words} “${d.encoded}”, which the visual zone prints as “${d.printed}”.`,
        page: page.page,
        bbox: d.encodedBox,
        evidence: { field: d.field, mrz: d.encoded, printed: d.printed },
        severity: 0,
      });
  }
  return out;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Severity of an MRZ/VIZ or barcode/VIZ disagreement whose printed reading is in doubt: an anomaly. */
export const DOUBTFUL_MISMATCH_SEVERITY = 4;

const DOUBT_WORDS: Record<ReadingDoubt, string> = {
  readings_differ: "a second reading gave another value",
  low_confidence: "the OCR was unsure of it",
  found_by_value: "no caption was read for it",
  ocr_confusion: "OCR look-alikes, accents, a dropped character or the date order explain the difference",
  printed_elsewhere: "the encoded value is printed elsewhere, so the caption may belong to another value",
  reading_matches: "a third reading, at another resolution, gave the encoded value",
};

export const describeDoubts = (doubts: readonly ReadingDoubt[]) =>
  doubts.map((x) => DOUBT_WORDS[x]).join("; ");

/**
 * Whether a zone read on a document not declared an identity document is an MRZ at all: its issuing state
 * and nationality must be ICAO codes. Receipts and other pictures carry lines of letters, digits and `<` that
 * the locator takes for an MRZ; read as one, their "check digits" and "dates" fail — OCR of another text, not
 * a forged passport (5 of 120 genuine scanned receipts scored 99-100 that way). A declared identity document
 * is judged as read.
 */
function trustedAsMrz(declared: string, v: NonNullable<IdPage["mrz"]>["validation"]): boolean {
  return declared === "id_document" || !v.problems.some((p) => p.code === "state_unknown");
}

/** The findings of a zone that may not be an MRZ, as notes saying why. */
function asNotes(findings: Finding[]): Finding[] {
  return findings.map((f) =>
    (f.severity ?? 0) <= NOTE_SEVERITY
      ? f
      : {
          ...f,
          message: `${f.message} The document is not declared an identity document and the zone names no ICAO state, so it may be other text read as an MRZ: a note, not a finding.`,
          severity: NOTE_SEVERITY,
        },
  );
}

const NOTE_SEVERITY = 2;

export const idMrzCheck = defineCheck({
  id: ID_MRZ_CHECK_ID,
  codes: ID_MRZ_CODES,
  appliesTo: mayBeIdentityDocument,
  async inspect(doc, ctx) {
    let reading: Awaited<ReturnType<typeof readIdentity>>;
    try {
      reading = await readIdentity(doc, { now: ctx.now, signal: ctx.signal });
    } catch (err) {
      if (err instanceof OcrbFontMissingError)
        return unreadable(`The identity reading cannot run: ${err.message}.`);
      if (err instanceof ImageDecodeError)
        return unreadable(`The image could not be decoded to look for an MRZ (${err.message}).`);
      throw err;
    }
    const pages = reading.pages.filter((p) => p.mrz);
    if (pages.length === 0)
      return skip(
        `No machine readable zone was found${reading.problems.length ? ` (${reading.problems.join("; ")})` : ""}, so there is no MRZ to check.`,
      );
    const findings: Finding[] = [];
    for (const page of pages) {
      const mrz = page.mrz!;
      const v = mrz.validation;
      const own = [...problemFindings(page), ...mismatchFindings(page)];
      findings.push(...(trustedAsMrz(doc.declaredDocType, v) ? own : asNotes(own)));
      const unread = mrz.reading.lines.join("").split("?").length - 1;
      if (unread > 0)
        findings.push({
          code: "mrz_uncertain_reading",
          message: `On page ${page.page}, ${unread} character(s) of the MRZ could not be read.`,
          page: page.page,
          bbox: mrz.lineBoxes[0],
          evidence: { lines: mrz.reading.lines },
          severity: 1,
        });
      if (v.expired && v.fields.expiry.date)
        findings.push({
          code: "document_expired",
          message: `The document expired on ${isoOf(v.fields.expiry.date)} (date of expiry in the MRZ); an expired document is a fact for the reviewer, not a sign of fraud.`,
          page: page.page,
          bbox: mrz.spanBox(...(FIELD_SPANS[v.format].expirationDate as [number, number, number])),
          evidence: { expiry: isoOf(v.fields.expiry.date) },
          severity: 1,
        });
      if (v.specimen)
        findings.push({
          code: "specimen_document",
          message:
            "The MRZ names the state UTO (Utopia), which ICAO reserves for specimens: this is a specimen, not an issued document.",
          page: page.page,
          bbox: mrz.lineBoxes[0],
          evidence: { issuingState: v.fields.issuingState, nationality: v.fields.nationality },
          severity: 1,
        });
    }
    const first = pages[0]!.mrz!;
    return {
      findings,
      discovered: ["mrz_present"],
      format: first.validation.format,
      lines: first.reading.lines,
      compared: Object.keys(pages[0]!.viz).length,
      unconfirmed: pages.flatMap((p) => p.unconfirmed),
    };
  },
  summary(j) {
    const codes = flaggedCodes(j.findings);
    const where = `The ${j.format} MRZ`;
    if (j.outcome === "pass")
      return `${where} reads with every check digit passing${j.compared ? ` and agrees with the ${j.compared} printed field(s) compared` : ""}${j.findings.some((f) => f.code === "document_expired") ? "; the document has expired" : ""}.`;
    return `${where} shows ${codes.join(", ")}: ${j.findings.find((f) => (f.severity ?? 0) >= 2)?.message ?? ""}`;
  },
});
