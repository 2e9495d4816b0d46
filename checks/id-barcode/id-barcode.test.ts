import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { capturedIdDocument, ID_NOW } from "../../document/id/testdata/id-documents.js";
import { drawCapture } from "../../fixtures/ids/capture.js";
import { makeSpecimen, tamperedRendering } from "../../fixtures/ids/specimen.js";
import { idBarcodeCheck } from "./id-barcode.js";

const here = path.dirname(new URL(import.meta.url).pathname);

describe("id.barcode", () => {
  it("reads a PDF417 and its AAMVA data with no network at all (zxing-wasm's binary from node_modules)", async () => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        pathToFileURL(path.join(here, "../testdata/no-network.mjs")).href,
        "--import",
        pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href,
        path.join(here, "../testdata/id-offline.ts"),
      ],
      { env: { ...process.env, NO_NETWORK_MARKER: "1" } },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/no-network preload active \(main thread: true\)/);
    const s = makeSpecimen(7, "dl");
    expect(JSON.parse(stdout)).toEqual({
      format: "PDF417",
      same: true,
      surname: s.person.surname.toUpperCase(),
      birth: s.person.birth,
    });
  }, 120_000);

  it("proves a printed field that disagrees with the licence's barcode, and reports barcode_present", async () => {
    // A licence scan whose printed date of birth was changed, its barcode left as issued.
    let seed = 60;
    let t = tamperedRendering(makeSpecimen(seed, "dl"), "barcode_print_mismatch", seed);
    while (!t.viz?.birth) {
      seed++;
      t = tamperedRendering(makeSpecimen(seed, "dl"), "barcode_print_mismatch", seed);
    }
    const doc = await capturedIdDocument(t, seed, drawCapture("scan", seed), seed, "US", "licence.jpg");
    const r = await idBarcodeCheck.run(doc, { now: ID_NOW });
    expect(r.discovered).toContain("barcode_present");
    const f = r.findings.find((x) => x.code === "barcode_viz_mismatch");
    expect(f?.severity, JSON.stringify(r.findings)).toBe(8);
    expect(f?.evidence?.readingDoubts).toBeUndefined();
    expect(f?.evidence?.printedConfidence).toBeGreaterThanOrEqual(0);
    expect(f?.evidence?.field).toBe("birth");
    const b = t.specimen.person.birth;
    expect(f?.evidence?.before).toBe(
      `${b.y}-${String(b.m).padStart(2, "0")}-${String(b.d).padStart(2, "0")}`,
    );
    expect(r.findings.find((x) => x.code === "barcode_viz_mismatch_barcode")?.severity).toBe(0);
  }, 180_000);
});
