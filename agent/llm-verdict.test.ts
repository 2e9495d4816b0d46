import { describe, expect, it } from "vitest";
import type { CheckResult } from "../core/check-result.js";
import type { AgentInput } from "./engine.js";
import type { LlmAnswer } from "./llm-prompt.js";
import { combineVerdict, HYBRID, hybridScore, mergePerCheck, normaliseDocType } from "./llm-verdict.js";
import { analyzeWithRules } from "./rules-engine.js";

const BANK_STATEMENT = `--- page 1 ---
Northbridge Bank plc — Bank Statement
Sort code 20-45-77   Account number 41234567
Statement period 01/03/2025 to 31/03/2025
Opening balance £2,314.08   Closing balance £3,959.88`;

const strong: CheckResult = {
  checkId: "metadata.dates",
  outcome: "flag",
  severity: 9,
  summary: "The PDF was modified before it was created.",
  findings: [
    {
      code: "modified_before_created",
      message: "The modification date is earlier than the creation date.",
      severity: 9,
      page: 1,
      evidence: { created: "2025-04-02T10:00:00Z", modified: "2024-11-30T08:12:00Z" },
    },
  ],
};
const mild: CheckResult = {
  checkId: "file.type",
  outcome: "flag",
  severity: 3,
  summary: "The file name does not match the content.",
  findings: [{ code: "extension_mismatch", message: "Named .jpg, content is PDF.", severity: 3 }],
};
const pass: CheckResult = {
  checkId: "fonts.consistency",
  outcome: "pass",
  severity: 0,
  summary: "All text uses the same fonts.",
  findings: [],
};

const input = (checks: CheckResult[], overrides: Partial<AgentInput> = {}): AgentInput => ({
  declaredDocType: "bank_statement",
  region: "GB",
  text: BANK_STATEMENT,
  checks,
  discovered: [],
  ...overrides,
});

const answer = (overrides: Partial<LlmAnswer> = {}): LlmAnswer => ({
  document_type_match: true,
  actual_doc_type: "bank_statement",
  fraud_score: 50,
  reasoning: "The statement's balances add up, but the dates are inconsistent.",
  per_check: [],
  ...overrides,
});

describe("hybridScore", () => {
  it("blends rules and model equally below 50 when the rules decided nothing", () => {
    expect(hybridScore(40, 0, false)).toMatchObject({ score: 20, blend: 20, floor: 0 });
    expect(hybridScore(40, 40, false)).toMatchObject({ score: 40, blend: 40, floor: 0 });
  });

  it("never lets the model alone take an undecided document to 50 or more", () => {
    expect(hybridScore(40, 100, false)).toMatchObject({ score: 49, blend: 70, decided: false });
    expect(hybridScore(0, 100, false).score).toBeLessThan(50);
  });

  it("keeps the rules score as a floor when the rules decided (proof or corroboration)", () => {
    expect(hybridScore(80, 0, true)).toMatchObject({ score: 80, blend: 40, floor: 80 });
  });

  it("lets the model raise a decided score above the floor", () => {
    expect(hybridScore(80, 100, true)).toMatchObject({ score: 90, blend: 90, floor: 80 });
  });
});

describe("normaliseDocType", () => {
  const rules = { actualDocType: "bank statement" };
  it("repeats the declared value on a match, whatever words the model used", () => {
    expect(
      normaliseDocType("payslip", { document_type_match: true, actual_doc_type: "salary slip" }, rules),
    ).toEqual({ documentTypeMatch: true, actualDocType: "payslip" });
  });

  it("uses plain words on a mismatch, turning a doc-type value into its words", () => {
    expect(
      normaliseDocType("payslip", { document_type_match: false, actual_doc_type: "electricity bill" }, rules),
    ).toEqual({ documentTypeMatch: false, actualDocType: "electricity bill" });
    expect(
      normaliseDocType("payslip", { document_type_match: false, actual_doc_type: "utility_bill" }, rules),
    ).toEqual({ documentTypeMatch: false, actualDocType: "utility bill" });
  });

  it("treats a 'mismatch' naming the declared type, or nothing, as a match", () => {
    expect(
      normaliseDocType("payslip", { document_type_match: false, actual_doc_type: "Payslip" }, rules),
    ).toEqual({
      documentTypeMatch: true,
      actualDocType: "payslip",
    });
    expect(normaliseDocType("payslip", { document_type_match: false, actual_doc_type: " " }, rules)).toEqual({
      documentTypeMatch: true,
      actualDocType: "payslip",
    });
  });

  it("always matches a declared other and names what was found", () => {
    expect(
      normaliseDocType("other", { document_type_match: false, actual_doc_type: "gas bill" }, rules),
    ).toEqual({
      documentTypeMatch: true,
      actualDocType: "gas bill",
    });
    expect(normaliseDocType("other", { document_type_match: true, actual_doc_type: "other" }, rules)).toEqual(
      {
        documentTypeMatch: true,
        actualDocType: "bank statement",
      },
    );
  });
});

describe("mergePerCheck", () => {
  const rules = [
    { checkId: "metadata.dates", importance: 9, reasoning: "rules: dates" },
    { checkId: "file.type", importance: 1, reasoning: "rules: type" },
  ];
  it("covers every check: the model's entry where valid, the rules' otherwise, unknown ids dropped", () => {
    expect(
      mergePerCheck(rules, [
        { check_id: "file.type", importance: 4, reasoning: "model: the name matters here" },
        { check_id: "file.type", importance: 0, reasoning: "duplicate, ignored" },
        { check_id: "made.up", importance: 10, reasoning: "invented" },
        { check_id: "metadata.dates", importance: 2, reasoning: "   " },
      ]),
    ).toEqual([
      { checkId: "metadata.dates", importance: 9, reasoning: "rules: dates" },
      { checkId: "file.type", importance: 4, reasoning: "model: the name matters here" },
    ]);
  });
});

describe("combineVerdict", () => {
  it("keeps the floor when the model is lower than the rules and the rules decided", () => {
    const i = input([strong, pass]);
    const rules = analyzeWithRules(i);
    expect(rules.verdict.fraudScore).toBeGreaterThanOrEqual(60);
    const v = combineVerdict(i, rules, answer({ fraud_score: 0 }));
    expect(v.fraudScore).toBe(rules.verdict.fraudScore);
    expect(v.reasoning).toContain("the model cannot lower it");
  });

  it("raises the score when the model is higher", () => {
    const i = input([strong]);
    const rules = analyzeWithRules(i);
    const v = combineVerdict(i, rules, answer({ fraud_score: 100 }));
    expect(v.fraudScore).toBe(Math.round((rules.verdict.fraudScore + 100) / 2));
    expect(v.fraudScore).toBeGreaterThan(rules.verdict.fraudScore);
  });

  it("writes the model's reasoning, the combination, then every deterministic finding with its evidence", () => {
    const i = input([strong, mild, pass]);
    const v = combineVerdict(i, analyzeWithRules(i), answer(), { model: "llama-3.1-70b" });
    const reasoning = v.reasoning ?? "";
    expect(reasoning.startsWith("Language model assessment (llama-3.1-70b): The statement's balances")).toBe(
      true,
    );
    expect(reasoning).toMatch(/Score \d+\/100, combining the deterministic rules/);
    expect(reasoning).toContain("1. The modification date is earlier than the creation date, page 1.");
    expect(reasoning).toContain("modified: 2024-11-30T08:12:00Z");
    expect(reasoning).toContain("file.type extension_mismatch");
    expect(reasoning.indexOf("Language model")).toBeLessThan(reasoning.indexOf("Findings ("));
  });

  it("stays within 4 KB whatever the model writes", () => {
    const i = input([strong, mild, pass]);
    const v = combineVerdict(
      i,
      analyzeWithRules(i),
      answer({ reasoning: "Долгий ответ модели. ".repeat(2000) }),
    );
    expect(Buffer.byteLength(v.reasoning ?? "")).toBeLessThanOrEqual(4000);
    expect(v.reasoning).toContain("Findings (");
  });

  it("lists every check in per_check and says when nothing was flagged", () => {
    const i = input([pass]);
    const v = combineVerdict(i, analyzeWithRules(i), answer({ per_check: [] }));
    expect(v.perCheck.map((p) => p.checkId)).toEqual(["fonts.consistency"]);
    expect(v.reasoning).toContain("Deterministic findings: no check flagged anything.");
  });
});
