import { createCanvas } from "@napi-rs/canvas";
import { describe, expect, it } from "vitest";
import type { GreyImage } from "./geometry.js";
import { createIdOcr } from "./id-ocr.js";

/** A white image with `lines` of black text, 40 px glyphs. */
function textImage(lines: string[]): GreyImage {
  const width = 900;
  const height = 70 * lines.length + 40;
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = "#000";
  ctx.font = "40px sans-serif";
  for (const [i, l] of lines.entries()) ctx.fillText(l, 30, 70 + 70 * i);
  const rgba = ctx.getImageData(0, 0, width, height).data;
  const data = new Uint8Array(width * height);
  for (let i = 0; i < data.length; i++) data[i] = rgba[4 * i]!;
  return { width, height, data };
}

describe("the identity OCR engine called by two readers at once", () => {
  it("reads each call with its own page mode and character whitelist", async () => {
    // The visual zone (sparse, any character) read while the MRZ is confirmed (one line, A-Z 0-9 <): each call
    // sets the worker's parameters then recognises, so interleaved, the sparse reading ran under the MRZ
    // whitelist and lost its lowercase letters.
    const ocr = await createIdOcr();
    try {
      const [sparse, mrz] = await Promise.all([
        ocr.readText(textImage(["Surname / Nom", "Given names"]), "sparse"),
        ocr.readMrzLine(textImage(["P<UTOERIKSSON<<ANNA<MARIA"])),
      ]);
      expect(sparse.map((l) => l.text).join(" ")).toMatch(/Surname/);
      expect(sparse.map((l) => l.text).join(" ")).toMatch(/names/);
      expect(mrz?.text).toMatch(/^[A-Z0-9<]+$/);
    } finally {
      await ocr.terminate();
    }
  }, 60_000);
});
