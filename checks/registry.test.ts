import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { codeTableProblems, isAppearanceKind, maxSeverityOf } from "../core/finding-levels.js";
import { type Check, defineCheck, stamp } from "./check.js";
import { CHECKS } from "./registry.js";

/**
 * The code tables (issue 20): every check declares the codes it reports, and the tables are the one place
 * levels and kinds come from. A typo in a code, or a code the table forgot, fails here before it reaches a
 * detection.
 */

const here = import.meta.dirname;

/** The product source files of a check: its own file, or every non-test file of its folder. */
function sourcesOf(check: Check): string[] {
  const base = check.id.replace(".", "-");
  const folder = path.join(here, base);
  if (statSync(folder, { throwIfNoEntry: false })?.isDirectory()) {
    return readdirSync(folder)
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
      .map((f) => path.join(folder, f));
  }
  return [path.join(here, `${base}.ts`)];
}

/** Code literals a source emits: `code: "x"`, both arms of `code: c ? "x" : "y"`, and tables of codes. */
function emittedCodes(src: string): string[] {
  const codes = new Set<string>();
  for (const m of src.matchAll(/\bcode:\s*([^,\n]+)/g)) {
    // Literals compared against (`c.kind === "dss" ? …`) are conditions, not codes.
    for (const lit of (m[1] as string).matchAll(/(?<![=!]==\s*)"([a-z][a-z0-9_]*)"/g))
      codes.add(lit[1] as string);
  }
  if (src.includes("`revision_${verb}_page`"))
    for (const v of ["added", "removed", "replaced"]) codes.add(`revision_${v}_page`);
  return [...codes];
}

describe("code tables", () => {
  it("every check declares a valid table", () => {
    for (const check of CHECKS) {
      expect(codeTableProblems(check.id, check.codes), check.id).toEqual([]);
      expect(Object.keys(check.codes).length, check.id).toBeGreaterThan(0);
    }
  });

  it("every code a check's source emits is declared in its table (a typo fails here)", () => {
    const missing: string[] = [];
    for (const check of CHECKS) {
      for (const file of sourcesOf(check)) {
        for (const code of emittedCodes(readFileSync(file, "utf8"))) {
          if (!(code in check.codes)) missing.push(`${check.id}: ${code} (${path.basename(file)})`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("appearance kinds are anomalies at most, whatever the table says", () => {
    for (const check of CHECKS) {
      for (const [code, meta] of Object.entries(check.codes)) {
        if (isAppearanceKind(meta.kind))
          expect(maxSeverityOf(meta), `${check.id}.${code}`).toBeLessThanOrEqual(4);
      }
    }
  });

  it("refuses a table that declares an appearance code above anomaly", () => {
    expect(() =>
      defineCheck({
        id: "test.bad",
        codes: { font_differs: { level: "proof", kind: "appearance", means: "a value in another face" } },
        appliesTo: () => true,
        inspect: () => ({ findings: [] }),
        summary: () => "",
      }),
    ).toThrow(/may not be declared above "anomaly"/);
  });
});

describe("stamping findings", () => {
  const codes = {
    face: { level: "anomaly", kind: "appearance", means: "a value in another face" },
    sum: { level: "proof", kind: "arithmetic", means: "figures that do not add up" },
    rewrite: { level: "specific", kind: "structure", means: "a rewrite by another tool" },
  } as const;

  it("caps a finding at its code's level and stamps its kind", () => {
    expect(stamp("t", codes, { code: "face", message: "m", severity: 7 })).toMatchObject({
      severity: 4,
      kind: "appearance",
    });
    expect(stamp("t", codes, { code: "rewrite", message: "m", severity: 9 })).toMatchObject({
      severity: 7,
      kind: "structure",
    });
    expect(stamp("t", codes, { code: "sum", message: "m", severity: 9 }).severity).toBe(9);
  });

  it("a check that reports an undeclared code ends in outcome error naming the code", async () => {
    const check = defineCheck({
      id: "test.typo",
      codes,
      appliesTo: () => true,
      inspect: () => ({ findings: [{ code: "sums", message: "m", severity: 9 }] }),
      summary: () => "s",
    });
    const r = await check.run({} as never, { now: new Date() });
    expect(r.outcome).toBe("error");
    expect(r.summary).toMatch(/"sums"/);
  });

  it("a check's severity is its strongest finding's: findings are not added up in the check", async () => {
    const check = defineCheck({
      id: "test.many",
      codes,
      appliesTo: () => true,
      inspect: () => ({
        findings: [
          { code: "rewrite", message: "a", severity: 6 },
          { code: "face", message: "b", severity: 4 },
          { code: "face", message: "c", severity: 4 },
        ],
      }),
      summary: () => "s",
    });
    const r = await check.run({} as never, { now: new Date() });
    expect(r).toMatchObject({ outcome: "flag", severity: 6 });
  });
});
