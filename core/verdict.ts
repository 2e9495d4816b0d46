import { z } from "zod";

/** Document types a caller may declare (ARCHITECTURE.md, Decisions: Create body). */
export const DOC_TYPES = [
  "bank_statement",
  "payslip",
  "invoice",
  "utility_bill",
  "tax_return",
  "id_document",
  "contract",
  "receipt",
  "loan_application",
  "other",
] as const;
export type DocType = (typeof DOC_TYPES)[number];

/**
 * Other names integrators send for a declared type (docs/decisions.md, "doc_type aliases"). The API accepts
 * them as values of the doc_type enum itself and stores and returns the canonical type they stand for.
 */
export const DOC_TYPE_ALIASES = {
  id_card: "id_document",
  identity_card: "id_document",
  national_id: "id_document",
  passport: "id_document",
  driving_licence: "id_document",
  driving_license: "id_document",
  drivers_license: "id_document",
  driver_license: "id_document",
  residence_permit: "id_document",
  pay_slip: "payslip",
  paystub: "payslip",
  pay_stub: "payslip",
  salary_slip: "payslip",
  earnings_statement: "payslip",
  account_statement: "bank_statement",
  utility: "utility_bill",
  electricity_bill: "utility_bill",
  gas_bill: "utility_bill",
  water_bill: "utility_bill",
  energy_bill: "utility_bill",
  phone_bill: "utility_bill",
  tax_invoice: "invoice",
  tax_form: "tax_return",
  agreement: "contract",
  lease: "contract",
  tenancy_agreement: "contract",
  employment_contract: "contract",
  sales_receipt: "receipt",
  credit_application: "loan_application",
  mortgage_application: "loan_application",
} as const satisfies Record<string, DocType>;

/** Every value the API accepts for doc_type: the canonical types, then the aliases. */
export const DOC_TYPE_INPUTS = [...DOC_TYPES, ...Object.keys(DOC_TYPE_ALIASES)] as [DocType, ...string[]];

/** The canonical type of a doc_type value (a canonical type is its own). */
export function canonicalDocType(value: string): DocType {
  if ((DOC_TYPES as readonly string[]).includes(value)) return value as DocType;
  const alias = (DOC_TYPE_ALIASES as Record<string, DocType>)[value];
  if (!alias) throw new Error(`unknown doc_type ${value}`);
  return alias;
}

/** Plain words for each doc type, for reasoning texts and actual_doc_type. */
export const DOC_TYPE_WORDS: Record<DocType, string> = {
  bank_statement: "bank statement",
  payslip: "payslip",
  invoice: "invoice",
  utility_bill: "utility bill",
  tax_return: "tax return",
  id_document: "identity document",
  contract: "contract",
  receipt: "receipt",
  loan_application: "loan application",
  other: "other document",
};

/** The declared type in words with its indefinite article ("an invoice", "a bank statement"). */
export function aDocType(t: DocType): string {
  const w = DOC_TYPE_WORDS[t];
  return `${/^[aeiou]/.test(w) ? "an" : "a"} ${w}`;
}

export const PerCheck = z.object({
  checkId: z.string(),
  importance: z.number().int().min(0).max(10).nullable(),
  reasoning: z.string().nullable(),
});
export type PerCheck = z.infer<typeof PerCheck>;

/** The analysis verdict as the Detection status keeps it (camelCase; the API projects to snake_case). */
export const Verdict = z.object({
  fraudScore: z.number().int().min(0).max(100),
  documentTypeMatch: z.boolean(),
  actualDocType: z.string().nullable(),
  reasoning: z.string().nullable(),
  perCheck: z.array(PerCheck),
  /** The tenant policy the score was computed under (core/policy.ts); absent on verdicts from before policies. */
  policy: z.object({ name: z.string(), version: z.number().int().min(1) }).optional(),
});
export type Verdict = z.infer<typeof Verdict>;

/**
 * Score bands of the fraud score, for the reasoning's first sentence and the reviewer page: below
 * `moderate` is low risk, from `high` on high risk (the rules engine's SCORING.bands are these).
 */
export const SCORE_BANDS = { moderate: 30, high: 60 } as const;
export type ScoreBandName = "low" | "moderate" | "high";

export function scoreBandOf(
  score: number,
  bands: { moderate: number; high: number } = SCORE_BANDS,
): ScoreBandName {
  if (score >= bands.high) return "high";
  if (score >= bands.moderate) return "moderate";
  return "low";
}
