import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createIdOcr } from "./id/id-ocr.js";
import { tesseractCodeKept } from "./tesseract-code.js";

/**
 * tesseract's compiled WebAssembly code kept warm in the process (document/tesseract-code.ts): the identity
 * engine, fresh per document, starts the keeper thread, and the keeper never holds the process open.
 */
describe("the tesseract code keeper", () => {
  it("is started by the identity OCR engine and outlives it", async () => {
    const ocr = await createIdOcr();
    await ocr.terminate();
    expect(tesseractCodeKept()).toBe(true);
  }, 60_000);

  it("lets a process that started it exit by itself", () => {
    const module = fileURLToPath(new URL("./tesseract-code.ts", import.meta.url));
    const child = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `import(${JSON.stringify(module)}).then((m) => m.keepTesseractCodeWarm());`,
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(child.signal).toBe(null);
    expect(child.status).toBe(0);
  }, 90_000);
});
