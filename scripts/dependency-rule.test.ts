import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The dependency rule of docs/layout.md, checked on every import of every file (dynamic imports too).
 * Product code points inwards: core imports nothing of ours; document imports only core; prepare, checks,
 * agent, api, operator and platform import only what their row allows; only bin (the wiring) imports
 * platform. Tests (`*.test.ts`, `testdata/`) are composition roots: they may also wire real platform
 * adapters and use fixtures, but document's and core's tests keep their folder's rule.
 */
const root = path.resolve(import.meta.dirname, "..");

const PRODUCT_RULES: Record<string, readonly string[]> = {
  core: [],
  document: ["core"],
  prepare: ["core", "document"],
  checks: ["core", "document"],
  agent: ["core"],
  api: ["core"],
  operator: ["core"],
  platform: ["core"],
  bin: ["core", "api", "operator", "prepare", "checks", "agent", "platform"],
};
/** What tests may import beyond their folder's product rule. */
const TEST_EXTRA: Record<string, readonly string[]> = {
  core: [],
  document: ["fixtures"],
};
const TEST_DEFAULT_EXTRA = ["fixtures", "platform", "checks"];

interface Import {
  file: string;
  target: string;
}

function importsOf(): Import[] {
  const files = execFileSync(
    "git",
    ["ls-files", "--cached", "--others", "--exclude-standard", "*.ts", "*.mjs"],
    {
      cwd: root,
      encoding: "utf8",
    },
  )
    .split("\n")
    .filter((f) => f && f.split("/")[0]! in PRODUCT_RULES);
  const out: Import[] = [];
  for (const file of files) {
    let src: string;
    try {
      src = readFileSync(path.join(root, file), "utf8");
    } catch {
      continue; // deleted in the work tree
    }
    for (const m of src.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      out.push({ file, target: path.normalize(path.join(path.dirname(file), m[1]!)) });
    }
  }
  return out;
}

const isTest = (file: string) => /\.test\.ts$/.test(file) || file.split("/").includes("testdata");
const topOf = (p: string) => p.split("/")[0]!;

describe("the dependency rule", () => {
  const imports = importsOf();

  it("finds the imports it judges", () => {
    expect(imports.length).toBeGreaterThan(500);
    expect(imports.some((i) => i.file.startsWith("checks/") && topOf(i.target) === "document")).toBe(true);
  });

  it("holds for every import", () => {
    const broken = imports
      .filter(({ file, target }) => {
        const from = topOf(file);
        const to = topOf(target);
        if (to === from) return false;
        const allowed = [
          ...(PRODUCT_RULES[from] ?? []),
          ...(isTest(file) ? (TEST_EXTRA[from] ?? TEST_DEFAULT_EXTRA) : []),
        ];
        return !allowed.includes(to);
      })
      .map(({ file, target }) => `${file} → ${target}`);
    expect(broken).toEqual([]);
  });
});
