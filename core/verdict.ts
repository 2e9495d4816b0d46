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
});
export type Verdict = z.infer<typeof Verdict>;
