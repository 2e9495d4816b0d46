import { describe, expect, it } from "vitest";
import { captureOf } from "../../document/pixels/capture.js";
import { pagePixels } from "../../document/pixels/page-pixels.js";
import { decodeRgb } from "../../fixtures/captures/simulate.js";
import { whiteBox } from "../../fixtures/captures/tamper.js";
import { imageModel, jpegOf, kitPage, touches } from "../testdata/capture-kit.js";
import { compressionFindings, textRegions } from "./pixels-compression.js";

describe("pixels.compression: the double-compression test reads every text line", () => {
  it("finds a value painted over on a line the grid votes' sample of lines skipped", async () => {
    const k = kitPage({ seed: 12 });
    const scan = await decodeRgb(await jpegOf(k.img, 70, { density: 200 }));
    const doc = imageModel(await jpegOf(scan, 95));
    const page = (await pagePixels(doc)).pages[0]!;
    const capture = (await captureOf(doc))[0]!;
    // A grid budget that keeps a sample of the lines; pick a value none of the sampled lines covers.
    const grid = 60_000;
    const sampled = textRegions(page, grid);
    const all = textRegions(page, Number.POSITIVE_INFINITY);
    expect(sampled.length).toBeLessThan(all.length);
    const v = k.values.find((x) => !sampled.some((r) => touches(r, x.box, 0)))!;
    expect(v).toBeDefined();
    const t = whiteBox(scan, v, 12, "dev", "8,888.88");
    const edited = imageModel(await jpegOf(t.img, 95));
    const ep = (await pagePixels(edited)).pages[0]!;
    const ec = (await captureOf(edited))[0]!;
    const found = compressionFindings(ep, ec, undefined, { grid, dq: Number.POSITIVE_INFINITY });
    expect(
      found
        .filter((f) => f.code === "double_compression_absent")
        .some((f) => touches(f.evidence?.pixelBox as number[], t.box)),
      JSON.stringify(found.map((f) => [f.code, f.evidence?.pixelBox])),
    ).toBe(true);
    // The untouched capture: nothing on any line.
    expect(compressionFindings(page, capture, undefined, { grid, dq: Number.POSITIVE_INFINITY })).toEqual([]);
  });
});
