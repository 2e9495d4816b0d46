import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");

/**
 * Imports `modules` in a fresh process (then runs `then`, a line of script): is JSON.stringify still
 * native, and was pdfjs loaded?
 */
function afterImporting(modules: string[], then = ""): { native: boolean; pdfjsLoaded: boolean } {
  const script = `const native = JSON.stringify;
const loaded = [];
for (const m of ${JSON.stringify(modules)}) loaded.push(await import(m));
${then}
process.stdout.write(JSON.stringify({ native: JSON.stringify === native && /\\[native code\\]/.test(String(JSON.stringify)), pdfjsLoaded: globalThis.pdfjsLib !== undefined }));`;
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: root,
    encoding: "utf8",
  });
  return JSON.parse(out.trim());
}
const stringifyStaysNative = (modules: string[]) => afterImporting(modules).native;

describe("the native JSON.stringify", () => {
  it("is replaced by pdfjs-dist's legacy build on this Node (the reason for the guard)", () => {
    const replaced = !stringifyStaysNative(["pdfjs-dist/legacy/build/pdf.mjs"]);
    // On a Node with JSON.rawJSON the polyfill is not installed; the guard is then a no-op.
    expect(typeof (JSON as unknown as { rawJSON?: unknown }).rawJSON === "function" || replaced).toBe(true);
  });

  it("stays native in processes that serve the API (they never load the step code)", () => {
    expect(afterImporting(["./bin/standalone.ts", "./bin/cluster.ts"])).toEqual({
      native: true,
      pdfjsLoaded: false,
    });
  });

  it("is restored in step processes once the check step's code is loaded", () => {
    expect(afterImporting(["./bin/step-runtime.ts"])).toEqual({ native: true, pdfjsLoaded: false });
    expect(afterImporting(["./bin/step-runtime.ts"], `await loaded[0].loadStep("check");`)).toEqual({
      native: true,
      pdfjsLoaded: true,
    });
  });
});
