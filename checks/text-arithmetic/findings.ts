import type { Finding } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import type { Box } from "../../document/page-layout.js";
import type { ReadLine } from "../../document/tables/reader.js";
import type { Figure } from "../../document/tables/cells.js";
import {
  CONFIDENT,
  type DocumentReading,
  pageBox,
  readingConfidence,
  type StructureScore,
} from "../../document/tables/reader.js";
import { formatCents, type NumberStyle } from "../../document/values/amounts.js";

/**
 * What the arithmetic rules share: the document's reading, the relations checked and held (each one
 * that holds confirms the reading), and one way of turning a mismatch into a finding whose weight
 * follows how sure the reading is.
 */

/** Rounding slack, in cents. */
export const SLACK = 1;

export interface Ctx {
  reading: DocumentReading;
  style: NumberStyle;
  currency?: string;
  findings: Finding[];
  /** Relations that held (each confirms the rows were read correctly). */
  verified: number;
  /** Relations that were checked. */
  checked: number;
  /** Running balances checked. */
  statementRows: number;
  /** Figures a relation that held confirmed (a copy of the amount due that adds up is the right copy). */
  confirmed: Set<Figure>;
  /** Lines whose quantity × price (or whose three figures) held: line items read right. */
  heldLines: Set<ReadLine>;
  /** Per table id, how many of its line items' products held. */
  heldProducts: Map<number, number>;
}

/**
 * How many relations of a mismatch's own table or block must hold, under the same reading, before the
 * mismatch is proof (docs/decisions.md "A mismatch is proof only on a reading that verified itself").
 */
export const SUPPORT_NEEDED = 1;

/** Severity of a mismatch on a confident reading that its own block did not verify: an anomaly. */
export const UNVERIFIED_SEVERITY = 4;

export const money = (ctx: Ctx, cents: number) => formatCents(cents, ctx.style, ctx.currency);

/** The finding codes of text.arithmetic, each with its strongest level and what it means. */
export const TEXT_ARITHMETIC_CODES = {
  running_balance_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "a statement row's balance is not the previous balance plus or minus the row's amount",
  },
  balance_carried_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "a balance carried to the next page (or brought forward) differs from the balance it carries",
  },
  closing_balance_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "the closing balance differs from the balance the last transaction leaves",
  },
  statement_summary_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "opening balance plus money in minus money out is not the closing balance printed",
  },
  statement_totals_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "a statement's total in or out differs from the sum of its transactions",
  },
  line_item_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "a line's quantity times its unit price is not the line amount printed",
  },
  subtotal_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "a subtotal is not the sum of the amounts above it",
  },
  total_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "a labelled total is not the sum of the amounts above it",
  },
  tax_amount_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "a tax amount is not its printed rate of its base",
  },
  net_pay_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "net pay is not gross pay minus the total deductions",
  },
  total_repeated_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "the amount due printed in several places is not the same everywhere",
  },
} as const satisfies CodeTable;

export type ArithmeticCode = keyof typeof TEXT_ARITHMETIC_CODES;

export interface Mismatch {
  code: ArithmeticCode;
  page: number;
  /** The printed value found wrong (reader's frame), for its box and its text. */
  at?: Figure;
  /** A box of the reader's frame when there is no single figure (a row). */
  box?: Box;
  /** One or two sentences, without the reading's confidence. */
  message: string;
  /** The value printed and the value the arithmetic expects (as printed, in the document's style). */
  printed: string;
  expected: string;
  evidence: Record<string, unknown>;
  /** Severity on a confident reading: 8 or 9. */
  proof: 8 | 9;
  /** The reading's confidence for this relation (readingConfidence). */
  confidence: number;
  /** What lowered the confidence, for the message of a note. */
  notes?: string[];
  /**
   * Independent relations of the same table or block that held under the same reading (the same columns,
   * sign and number convention): other products of the line items, another total over the same rows, the
   * running balances chaining before and after a local break, a summary figure tied to a ledger that
   * chains. Below SUPPORT_NEEDED the reading has not verified itself: the mismatch is an anomaly.
   */
  support: number;
  /** What the support would have been, in words, for the message of an anomaly. */
  unsupported?: string;
  /** Why the reading is in doubt though its block chains (replaces the anomaly's sentence). */
  doubt?: string;
  /**
   * Why the figures compared may not be the ones the relation is about, whatever the table's confidence
   * (which rows a summary box counts, which of several tables is its ledger): the mismatch is a note.
   */
  uncertain?: string;
}

/**
 * A mismatch as a finding: on a confident reading that its own table or block verified (`support`), proof
 * (8-9); on a confident reading nothing of its block confirmed, an anomaly (4) the score may still combine
 * with an independent finding about the same value; on an uncertain reading a note (2) that says so. The
 * evidence carries the value printed and expected, `before` (what the arithmetic says the value was) and
 * `after` (what is printed now), `readingConfidence` and `blockSupport`.
 */
export function report(ctx: Ctx, m: Mismatch): void {
  const confident = m.confidence >= CONFIDENT && m.uncertain === undefined;
  const verified = m.support >= SUPPORT_NEEDED;
  const why = m.notes?.length ? `: ${m.notes.join("; ")}` : "";
  const message = m.uncertain
    ? `${m.message} ${m.uncertain}, so this is a note, not proof.`
    : !confident
      ? `${m.message} The table was read with low confidence (${m.confidence.toFixed(2)}${why}), so this is a note, not proof.`
      : !verified
        ? m.doubt
          ? `${m.message} ${m.doubt}`
          : `${m.message} Nothing else in its ${m.unsupported ?? "table or block"} was seen to add up under the same reading, so this is an anomaly, not proof.`
        : m.message;
  const bbox = pageBox(ctx.reading, m.page, m.at?.box ?? m.box);
  ctx.findings.push({
    code: m.code,
    message,
    page: m.page,
    ...(bbox ? { bbox } : {}),
    evidence: {
      ...m.evidence,
      printed: m.printed,
      expected: m.expected,
      before: m.expected,
      after: m.printed,
      readingConfidence: m.confidence,
      blockSupport: m.support,
    },
    severity: !confident ? 2 : verified ? m.proof : UNVERIFIED_SEVERITY,
  });
}

/** Confidence of a relation: its table's structure, the relations of its kind that held, and OCR'd figures' own confidence. */
export function confidenceOf(
  structure: StructureScore,
  held: number,
  checked: number,
  figures: readonly (Figure | undefined)[] = [],
): number {
  const ocr = Math.min(1, ...figures.filter((f): f is Figure => f !== undefined).map((f) => f.confidence));
  return Math.round(readingConfidence(structure, held, checked) * ocr * 100) / 100;
}
