import { describe, expect, it } from "vitest";
import type { CheckResult } from "../core/check-result.js";
import { Verdict } from "../core/verdict.js";
import { classifyDocument } from "./classify.js";
import type { AgentInput } from "./engine.js";
import { analyzeWithRules, createRulesEngine, decideDocType } from "./rules-engine.js";
import { SCORING } from "./score.js";

const BANK_STATEMENT = `--- page 1 ---
Northbridge Bank plc — Bank Statement
Sort code 20-45-77   Account number 41234567
Statement period 01/03/2025 to 31/03/2025
Opening balance £2,314.08   Closing balance £3,959.88`;

const ELECTRICITY_BILL = `--- page 1 ---
Brightspark Energy — Your electricity bill
MPAN 13 1234 5678 9012   Meter number E12A34567
Previous reading 41 233   Present reading 41 602
369 kWh at unit rate 24.50p   Standing charge £16.54`;

const datesFlag: CheckResult = {
  checkId: "metadata.dates",
  outcome: "flag",
  severity: 9,
  summary: "The PDF was modified before it was created.",
  findings: [
    {
      code: "modified_before_created",
      message:
        "The modification date is earlier than the creation date, which genuine producers never write.",
      severity: 9,
      page: 1,
      evidence: { created: "2025-04-02T10:00:00Z", modified: "2024-11-30T08:12:00Z" },
    },
  ],
};
const typeFlag: CheckResult = {
  checkId: "file.type",
  outcome: "flag",
  severity: 4,
  summary: "The file name does not match the content.",
  findings: [
    {
      code: "extension_mismatch",
      message: "The file is named .jpg but its content is a PDF.",
      severity: 4,
      evidence: { filename: "statement.jpg", sniffed: "application/pdf" },
    },
  ],
};
const passCheck: CheckResult = {
  checkId: "fonts.consistency",
  outcome: "pass",
  severity: 0,
  summary: "All text uses the same two fonts.",
  findings: [],
};
const errorCheck: CheckResult = {
  checkId: "qr.payload",
  outcome: "error",
  severity: 0,
  summary: "The QR decoder could not read page 2.",
  findings: [],
};
const skipCheck: CheckResult = {
  checkId: "signature.pdf",
  outcome: "skip",
  severity: 0,
  summary: "The PDF carries no digital signature.",
  findings: [],
};

function input(overrides: Partial<AgentInput>): AgentInput {
  return {
    declaredDocType: "bank_statement",
    region: "GB",
    text: BANK_STATEMENT,
    checks: [],
    discovered: [],
    ...overrides,
  };
}

const engine = createRulesEngine();

describe("rules engine", () => {
  it("is named rules and returns a valid verdict", async () => {
    expect(engine.name).toBe("rules");
    const verdict = await engine.analyze(
      input({ checks: [datesFlag, typeFlag, passCheck, errorCheck, skipCheck] }),
    );
    expect(Verdict.safeParse(verdict).success).toBe(true);
  });

  it("scores a clean, matching document low and repeats the declared type", async () => {
    const verdict = await engine.analyze(input({ checks: [passCheck, skipCheck] }));
    expect(verdict.fraudScore).toBeLessThan(20);
    expect(verdict.documentTypeMatch).toBe(true);
    expect(verdict.actualDocType).toBe("bank_statement");
    expect(verdict.reasoning).toMatch(/^Low risk \(score \d+\/100\)/);
  });

  it("scores one severity-9 finding at 60 or more", async () => {
    const verdict = await engine.analyze(input({ checks: [datesFlag, passCheck] }));
    expect(verdict.fraudScore).toBeGreaterThanOrEqual(60);
    expect(verdict.reasoning).toMatch(/^High risk/);
  });

  it("flags a bank statement that is really an electricity bill", async () => {
    const clean = await engine.analyze(input({ checks: [passCheck] }));
    const swapped = await engine.analyze(input({ text: ELECTRICITY_BILL, checks: [passCheck] }));
    expect(swapped.documentTypeMatch).toBe(false);
    expect(swapped.actualDocType).toBe("electricity bill");
    expect(swapped.fraudScore).toBeGreaterThan(clean.fraudScore + 20);
    expect(swapped.reasoning).toContain(
      "declared as a bank statement, but its text reads like an electricity bill",
    );
  });

  it("names what it found when the declared type is other", async () => {
    const verdict = await engine.analyze(input({ declaredDocType: "other", text: ELECTRICITY_BILL }));
    expect(verdict.documentTypeMatch).toBe(true);
    expect(verdict.actualDocType).toBe("electricity bill");
    expect(verdict.fraudScore).toBe(0);
  });

  it("keeps the declared type but notes it could not be confirmed when there is no text", async () => {
    const verdict = await engine.analyze(input({ text: "--- page 1 ---\n", checks: [passCheck] }));
    expect(verdict.documentTypeMatch).toBe(true);
    expect(verdict.actualDocType).toBe("bank_statement");
    expect(verdict.fraudScore).toBeLessThan(20);
    expect(verdict.reasoning).toContain("no extractable text");
  });

  it("lists every check that ran in per_check, the biggest contributor first with the highest importance", async () => {
    const verdict = await engine.analyze(
      input({ checks: [passCheck, typeFlag, skipCheck, datesFlag, errorCheck] }),
    );
    expect(verdict.perCheck.map((p) => p.checkId)).toEqual([
      "metadata.dates",
      "file.type",
      "qr.payload",
      "fonts.consistency",
      "signature.pdf",
    ]);
    const importance = Object.fromEntries(verdict.perCheck.map((p) => [p.checkId, p.importance]));
    expect(importance["metadata.dates"]).toBeGreaterThan(importance["file.type"] ?? 10);
    expect(importance["file.type"]).toBeGreaterThanOrEqual(1);
    expect(importance["qr.payload"]).toBeGreaterThanOrEqual(1);
    expect(importance["fonts.consistency"]).toBe(0);
    expect(importance["signature.pdf"]).toBe(0);
    for (const p of verdict.perCheck) expect(p.importance).toBeLessThanOrEqual(10);
  });

  it("makes importance contextual: the same finding matters less beside a stronger one", async () => {
    const alone = await engine.analyze(input({ checks: [typeFlag] }));
    const beside = await engine.analyze(input({ checks: [typeFlag, datesFlag] }));
    const importanceOf = (v: typeof alone) =>
      v.perCheck.find((p) => p.checkId === "file.type")?.importance ?? -1;
    expect(importanceOf(beside)).toBeLessThanOrEqual(importanceOf(alone));
    expect(beside.perCheck[0]?.checkId).toBe("metadata.dates");
  });

  it("writes per-check reasoning from the summary and top findings, skips with their reason", async () => {
    const verdict = await engine.analyze(input({ checks: [datesFlag, skipCheck, errorCheck] }));
    const byId = Object.fromEntries(verdict.perCheck.map((p) => [p.checkId, p.reasoning]));
    expect(byId["metadata.dates"]).toContain(datesFlag.summary);
    expect(byId["metadata.dates"]).toContain("earlier than the creation date");
    expect(byId["metadata.dates"]).toContain("(page 1)");
    expect(byId["signature.pdf"]).toBe("Skipped: The PDF carries no digital signature.");
    expect(byId["qr.payload"]).toContain("could not read page 2");
  });

  it("adds a little for an errored check and mentions it", async () => {
    const clean = await engine.analyze(input({ checks: [passCheck] }));
    const withError = await engine.analyze(input({ checks: [passCheck, errorCheck] }));
    expect(withError.fraudScore).toBeGreaterThan(clean.fraudScore);
    expect(withError.fraudScore - clean.fraudScore).toBeLessThanOrEqual(5);
    expect(withError.reasoning).toContain("qr.payload could not be completed");
  });
});

describe("decideDocType", () => {
  const bill = classifyDocument(ELECTRICITY_BILL);
  it("matches and repeats the declared value when the text agrees", () => {
    expect(decideDocType("utility_bill", bill)).toMatchObject({
      documentTypeMatch: true,
      actualDocType: "utility_bill",
    });
  });
  it("reports plain words on a confident mismatch", () => {
    expect(decideDocType("payslip", bill)).toMatchObject({
      documentTypeMatch: false,
      actualDocType: "electricity bill",
      mismatch: true,
    });
  });
  it("treats a declared other as claiming nothing", () => {
    expect(decideDocType("other", bill)).toMatchObject({
      documentTypeMatch: true,
      actualDocType: "electricity bill",
    });
    expect(decideDocType("other", classifyDocument(""))).toMatchObject({
      documentTypeMatch: true,
      actualDocType: "other",
    });
  });
  // "Statement date" (2) + "account number" (1): a bank statement at confidence 0.39.
  const WEAK_STATEMENT = "Statement date: 01/02/2025\nAccount number 1234";
  it("does not name a guessed type for a declared other below the confidence threshold", () => {
    const weak = classifyDocument(WEAK_STATEMENT);
    expect(weak.docType).toBe("bank_statement");
    expect(weak.confidence).toBeLessThan(SCORING.mismatchMinConfidence);
    expect(decideDocType("other", weak)).toMatchObject({
      documentTypeMatch: true,
      actualDocType: "other",
      recognised: false,
      unconfirmed: false,
    });
  });
  it("names the type from the confidence threshold on, and not below it", () => {
    const c = classifyDocument(ELECTRICITY_BILL);
    const at = { ...c, confidence: SCORING.mismatchMinConfidence };
    const below = { ...c, confidence: SCORING.mismatchMinConfidence - 0.01 };
    expect(decideDocType("payslip", at)).toMatchObject({
      documentTypeMatch: false,
      actualDocType: "electricity bill",
    });
    expect(decideDocType("payslip", below)).toMatchObject({
      documentTypeMatch: true,
      actualDocType: "payslip",
    });
    expect(decideDocType("other", at).actualDocType).toBe("electricity bill");
    expect(decideDocType("other", below).actualDocType).toBe("other");
  });
  it("says in the reasoning that a weakly indicated type could not be confirmed", () => {
    const declaredOther = analyzeWithRules({
      ...input({ checks: [passCheck] }),
      declaredDocType: "other",
      text: WEAK_STATEMENT,
    });
    expect(declaredOther.verdict).toMatchObject({ documentTypeMatch: true, actualDocType: "other" });
    expect(declaredOther.verdict.reasoning).toContain("so the type could not be confirmed");
    const declaredInvoice = analyzeWithRules({
      ...input({ checks: [passCheck] }),
      declaredDocType: "invoice",
      text: WEAK_STATEMENT,
    });
    expect(declaredInvoice.verdict).toMatchObject({ documentTypeMatch: true, actualDocType: "invoice" });
    expect(declaredInvoice.verdict.reasoning).toContain("could not be confirmed");
    expect(declaredInvoice.verdict.reasoning).not.toContain("does not appear to be the type");
  });
  it("does not call a weak classification a mismatch", () => {
    const weak = classifyDocument("Please find the receipt attached.");
    expect(decideDocType("invoice", weak)).toMatchObject({
      documentTypeMatch: true,
      actualDocType: "invoice",
      unconfirmed: true,
      mismatch: false,
    });
  });
});
