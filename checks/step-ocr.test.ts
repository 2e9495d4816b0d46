import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckStepResult, keys, type StepInput } from "../core/detection.js";
import { createReusableOcrEngine, englishModelDir, type OcrEngine } from "../document/ocr.js";
import {
  languageOfText,
  languagesForRegion,
  modelDirectory,
  modelFile,
  OCR_LANGUAGES,
} from "../document/ocr-languages.js";
import { makeDocument } from "../fixtures/documents.js";
import { makeImageOnlyPdf, makeScannedImage } from "../fixtures/scans.js";
import { runCheckStep } from "./step.js";
import { createTestStepContext, stepInput, type TestStepContext } from "./testdata/step-context.js";

const here = path.dirname(fileURLToPath(import.meta.url));
/** OCR bound for these tests: a loaded machine may take minutes, and the bound is not what they test. */
const OCR_MS = 600_000;
let ctx: TestStepContext;
let engine: OcrEngine;
beforeAll(async () => {
  ctx = await createTestStepContext({}, { now: () => new Date("2026-01-15T12:00:00Z") });
  engine = createReusableOcrEngine();
});
afterAll(async () => {
  await engine.terminate();
  await ctx.cleanup();
});

async function prepared(
  bytes: Uint8Array,
  contentType: string,
  filename: string,
  docType: StepInput["spec"]["docType"],
) {
  const input = stepInput("check", { source: { url: "https://example.com/x" }, docType });
  const key = keys.document(input.detection, filename);
  await ctx.objects.put(ctx.bucket, key, Buffer.from(bytes), { contentType });
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  return { ...input, document: { filename, contentType, sizeBytes: bytes.length, key, sha256 } };
}

describe("OCR", () => {
  it("runs with no network at all: model, core and worker come from node_modules", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-ocr-"));
    try {
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="200"><rect width="100%" height="100%" fill="white"/><text x="30" y="120" font-family="sans-serif" font-size="48">Invoice 4711 total 99.50</text></svg>`;
      const image = path.join(dir, "line.png");
      await writeFile(image, await sharp(Buffer.from(svg)).png().toBuffer());
      // The preload makes every socket, DNS lookup and fetch throw, in the main thread and the OCR worker
      // thread alike (it prints a marker from each); the run happens in the temp dir to show nothing is
      // written to the working directory either.
      const child = spawn(
        process.execPath,
        [
          "--import",
          pathToFileURL(path.join(here, "testdata/no-network.mjs")).href,
          "--import",
          pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href,
          path.join(here, "testdata/ocr-offline.ts"),
          image,
        ],
        { cwd: dir, env: { ...process.env, NO_NETWORK_MARKER: "1" } },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      expect(code, stderr).toBe(0);
      expect(stderr).toMatch(/no-network preload active \(main thread: true\)/);
      expect(stderr).toMatch(/no-network preload active \(main thread: false\)/);
      expect(JSON.parse(stdout).text).toMatch(/Invoice 4711 total 99[.,]50/);
      const { readdir } = await import("node:fs/promises");
      expect(await readdir(dir)).toEqual(["line.png"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 900_000);

  it("names the bundled English model directory", () => {
    expect(englishModelDir()).toMatch(/@tesseract\.js-data[\\/]eng[\\/]4\.0\.0_best_int$/);
  });

  it("has the six language models, linked from node_modules into one directory", async () => {
    const dir = await modelDirectory();
    for (const lang of OCR_LANGUAGES) {
      expect(await realpath(path.join(dir, `${lang}.traineddata.gz`))).toBe(await realpath(modelFile(lang)));
    }
    expect(languagesForRegion("DE")).toEqual(["deu"]);
    expect(languagesForRegion("BE")).toEqual(["nld", "fra"]);
    expect(languagesForRegion("MY")).toEqual(["eng"]);
    expect(languageOfText("Kontoauszug für das Konto der Firma: die Summe und der Betrag auf Seite 2")).toBe(
      "deu",
    );
    expect(languageOfText("Total 12.00")).toBeUndefined();
  });

  it("gives an image document its text, with the page marker the agent reads", async () => {
    const pdf = await makeDocument({ seed: 12, docType: "bank_statement", region: "GB" });
    const jpeg = await makeScannedImage(pdf, { scale: 2.2 });
    const input = await prepared(jpeg, "image/jpeg", "statement.jpg", "bank_statement");
    const result = CheckStepResult.parse(
      await runCheckStep(input, ctx, { ocr: engine, ocrTimeoutMs: OCR_MS }),
    );
    expect(result.discovered).toContain("scanned");
    const text = (await ctx.objects.get(ctx.bucket, result.textKey!)).toString("utf8");
    expect(text.startsWith("--- page 1 ---\n")).toBe(true);
    expect(text).toMatch(/Account Statement/);
    expect(text).toMatch(/Closing balance/i);
    expect(text).toMatch(/Opening balance/i);
  }, 900_000);

  it("refuses a decompression-bomb image before decoding it: document_too_complex (the budget gate)", async () => {
    // A PNG header claiming 30000 × 30000 pixels (900 megapixels) over a few bytes of data.
    const crcTable = Array.from({ length: 256 }, (_, n) => {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      return c >>> 0;
    });
    const crc = (b: Buffer) => {
      let c = 0xffffffff;
      for (const x of b) c = (crcTable[(c ^ x) & 0xff] as number) ^ (c >>> 8);
      return (c ^ 0xffffffff) >>> 0;
    };
    const chunk = (type: string, data: Buffer) => {
      const out = Buffer.alloc(12 + data.length);
      out.writeUInt32BE(data.length, 0);
      out.write(type, 4, "latin1");
      data.copy(out, 8);
      out.writeUInt32BE(crc(out.subarray(4, 8 + data.length)), 8 + data.length);
      return out;
    };
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(30_000, 0);
    ihdr.writeUInt32BE(30_000, 4);
    ihdr[8] = 8;
    ihdr[9] = 2;
    const bomb = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", ihdr),
      chunk("IDAT", Buffer.from([0x78, 0x9c, 0x03, 0x00])),
      chunk("IEND", Buffer.alloc(0)),
    ]);
    const input = await prepared(bomb, "image/png", "scan.png", "invoice");
    const result = CheckStepResult.parse(
      await runCheckStep(input, ctx, { ocr: engine, ocrTimeoutMs: OCR_MS }),
    );
    expect(result.failure?.code).toBe("document_too_complex");
    expect(result.checks).toEqual([]);
  }, 60_000);

  it("reads image-only PDF pages and leaves text pages alone", async () => {
    const pdf = await makeDocument({ seed: 13, docType: "invoice", region: "US" });
    const scanned = await makeImageOnlyPdf(pdf, { scale: 2.5 });
    const input = await prepared(scanned, "application/pdf", "invoice.pdf", "invoice");
    const result = CheckStepResult.parse(
      await runCheckStep(input, ctx, { ocr: engine, ocrTimeoutMs: OCR_MS }),
    );
    expect(result.discovered).toContain("scanned");
    const text = (await ctx.objects.get(ctx.bucket, result.textKey!)).toString("utf8");
    expect(text).toMatch(/INVOICE/);
    expect(text).toMatch(/Total due/i);

    const textPdf = await prepared(pdf, "application/pdf", "invoice.pdf", "invoice");
    const plain = CheckStepResult.parse(
      await runCheckStep(textPdf, ctx, { ocr: engine, ocrTimeoutMs: OCR_MS }),
    );
    expect(plain.discovered).not.toContain("scanned");
  }, 900_000);
});
