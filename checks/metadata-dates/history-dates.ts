import type { Finding } from "../../core/check-result.js";
import { DOC_TYPE_WORDS, type DocType } from "../../core/verdict.js";
import type { DocumentModel } from "../../document/model.js";
import { calendarDate, findDates, isoDay } from "../../document/values/dates.js";
import {
  compareDates,
  formatParsed,
  type ParsedDate,
  parseAnyDate,
  sameMoment,
} from "../../document/values/pdf-date.js";
import { historyOf } from "../../document/xmp.js";

/**
 * Two more date comparisons for metadata.dates:
 *  - the XMP edit history (xmpMM:History stEvt:when): events in the future, before the recorded creation,
 *    or later than the modification date the file claims (the modification date was reset by hand);
 *  - dates printed in the content vs the creation date: a statement or payslip cannot be generated before
 *    the dates it prints (its transactions, its pay period).
 */

const DAY = 86_400_000;
const FUTURE_TOLERANCE_MS = DAY;
const SAME_MOMENT_TOLERANCE_MS = 2 * 60_000;

/** Document types whose printed dates all lie on or before the day they are generated, with a tolerance. */
const PRINTED_BEFORE_ISSUE: Partial<Record<DocType, number>> = {
  bank_statement: 3 * DAY,
  receipt: 2 * DAY,
  payslip: 31 * DAY,
};

function recorded(doc: DocumentModel, names: string[]): { name: string; parsed: ParsedDate }[] {
  const pdf = doc.pdf;
  if (!pdf) return [];
  const out: { name: string; parsed: ParsedDate }[] = [];
  for (const n of names) {
    const raw = n.startsWith("xmp:") ? pdf.xmp?.[n] : pdf.info[n];
    const parsed = raw ? parseAnyDate(raw) : undefined;
    if (parsed) out.push({ name: n.startsWith("xmp:") ? `XMP ${n}` : `Info ${n}`, parsed });
  }
  return out;
}

export function historyDateFindings(doc: DocumentModel, now: Date): Finding[] {
  if (!doc.pdf) return [];
  const events = historyOf(doc)
    .map((e) => ({ e, parsed: e.when ? parseAnyDate(e.when) : undefined }))
    .filter((x): x is { e: (typeof x)["e"]; parsed: ParsedDate } => x.parsed !== undefined);
  if (events.length === 0) return [];
  const findings: Finding[] = [];
  const created = recorded(doc, ["CreationDate", "xmp:CreateDate"]);
  const modified = recorded(doc, ["ModDate", "xmp:ModifyDate"]);
  const latest = events.reduce((a, b) => (compareDates(b.parsed, a.parsed).diffMs > 0 ? b : a));
  const earliest = events.reduce((a, b) => (compareDates(b.parsed, a.parsed).diffMs < 0 ? b : a));
  const evidenceOf = (x: (typeof events)[number]) => ({
    action: x.e.action ?? null,
    softwareAgent: x.e.softwareAgent ?? null,
    when: x.e.when,
  });

  for (const x of events) {
    if (x.parsed.utc.getTime() > now.getTime() + FUTURE_TOLERANCE_MS) {
      findings.push({
        code: "history_date_in_future",
        message: `The XMP edit history records a "${x.e.action ?? "event"}" at ${formatParsed(x.parsed)}, in the future; the history was written by hand or by a wrong clock.`,
        evidence: { ...evidenceOf(x), now: now.toISOString() },
        severity: 6,
      });
      break;
    }
  }
  for (const m of modified) {
    if (sameMoment(latest.parsed, m.parsed, SAME_MOMENT_TOLERANCE_MS)) continue;
    const { diffMs } = compareDates(latest.parsed, m.parsed);
    if (diffMs > SAME_MOMENT_TOLERANCE_MS) {
      findings.push({
        code: "history_after_modification",
        message: `The XMP edit history records a "${latest.e.action ?? "event"}"${latest.e.softwareAgent ? ` by ${JSON.stringify(latest.e.softwareAgent)}` : ""} at ${formatParsed(latest.parsed)}, later than the ${m.name} (${formatParsed(m.parsed)}) the file claims; the modification date was set back after editing.`,
        evidence: { ...evidenceOf(latest), modified: m.parsed.raw, field: m.name },
        severity: 5,
      });
      break;
    }
  }
  for (const c of created) {
    if (sameMoment(earliest.parsed, c.parsed, SAME_MOMENT_TOLERANCE_MS)) continue;
    const { diffMs } = compareDates(earliest.parsed, c.parsed);
    if (diffMs < -DAY) {
      findings.push({
        code: "history_before_creation",
        message: `The XMP edit history records a "${earliest.e.action ?? "event"}" at ${formatParsed(earliest.parsed)}, before the ${c.name} (${formatParsed(c.parsed)}); the creation date was changed, or the content came from an older file.`,
        evidence: { ...evidenceOf(earliest), created: c.parsed.raw, field: c.name },
        severity: 3,
      });
      break;
    }
  }
  return findings;
}

export function printedDateFindings(doc: DocumentModel): Finding[] {
  const tolerance = PRINTED_BEFORE_ISSUE[doc.declaredDocType];
  const pdf = doc.pdf;
  if (tolerance === undefined || !pdf) return [];
  const created = recorded(doc, ["CreationDate", "xmp:CreateDate"]).sort(
    (a, b) => compareDates(a.parsed, b.parsed).diffMs,
  );
  const latestCreation = created.at(-1);
  if (!latestCreation) return [];
  const text = pdf.pages.map((p) => p.text).join("\n\n");
  // A numeric date that reads validly both day-first and month-first counts at its earlier reading, so a
  // wrongly declared region cannot make genuine dates look late.
  const dates = findDates(text, doc.region).flatMap((d) => {
    if (!d.date) return [];
    const m = d.format === "slash" ? /(\d{1,2})\/(\d{1,2})\/(\d{4})/.exec(d.raw) : null;
    if (m && d.dayFirstValid && d.monthFirstValid) {
      const [a, b, y] = [Number(m[1]), Number(m[2]), Number(m[3])];
      const readings = [calendarDate(y, b, a), calendarDate(y, a, b)].filter(
        (x): x is Date => x !== undefined,
      );
      const earliest = Math.min(d.date.getTime(), ...readings.map((x) => x.getTime()));
      return [{ raw: d.raw, date: new Date(earliest) }];
    }
    return [{ raw: d.raw, date: d.date }];
  });
  if (dates.length === 0) return [];
  // Compare by calendar day in the creation date's own zone.
  const createdDay = new Date(latestCreation.parsed.wall.getTime());
  createdDay.setUTCHours(0, 0, 0, 0);
  const after = dates.filter((d) => d.date.getTime() > createdDay.getTime() + tolerance);
  const need = doc.declaredDocType === "bank_statement" ? 3 : 2;
  if (after.length < need || after.length * 2 < dates.length) return [];
  const latest = after.reduce((a, b) => (b.date > a.date ? b : a));
  return [
    {
      code: "created_before_printed_dates",
      message: `The ${DOC_TYPE_WORDS[doc.declaredDocType]} prints ${after.length} of its ${dates.length} dates after the day its ${latestCreation.name} says it was created (${formatParsed(latestCreation.parsed)}), up to ${latest.raw}; a document cannot be generated before the dates it reports, so its content was changed later or the date was planted.`,
      evidence: {
        created: latestCreation.parsed.raw,
        field: latestCreation.name,
        latestPrinted: latest.raw,
        latestPrintedDay: isoDay(latest.date),
        printedAfter: after.slice(0, 10).map((d) => d.raw),
        printedDates: dates.length,
      },
      severity: 5,
    },
  ];
}
