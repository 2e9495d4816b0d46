import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { codeTableMarkdown, withCodeTable } from "./code-table.js";

describe("docs/calibration.md's table of finding codes", () => {
  it("is what the checks' code tables say (run `npm run gen:codes` after changing one)", () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, "../../docs/calibration.md"), "utf8");
    expect(withCodeTable(doc)).toBe(doc);
    expect(doc).toContain(codeTableMarkdown());
  });
});
