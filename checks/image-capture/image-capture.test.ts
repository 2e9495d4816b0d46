import { PDFDocument } from "pdf-lib";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { CheckResult } from "../../core/check-result.js";
import { modelOf } from "../../document/testdata/model-kit.js";
import { withMetadata } from "../../fixtures/exif.js";
import { imageModel, jpegOf, kitPage } from "../testdata/capture-kit.js";
import { imageCaptureCheck } from "./image-capture.js";

const run = async (doc: Parameters<typeof imageCaptureCheck.run>[0]) =>
  CheckResult.parse(await imageCaptureCheck.run(doc, { now: new Date() }));

describe("image.capture", () => {
  it("a scan: scanner resolution, even light, the page fills the picture", async () => {
    const r = await run(imageModel(await jpegOf(kitPage({ seed: 1 }).img, 85, { density: 300 })));
    expect(r.discovered).toEqual(["capture_flatbed_scan"]);
    expect(r.severity).toBe(0);
    expect(r.findings[0]).toMatchObject({
      code: "capture_class",
      page: 1,
      severity: 0,
      evidence: { kind: "capture", class: "flatbed_scan", jpegQuality: 85, dpi: 300 },
    });
  });

  it("a phone photo: the camera's EXIF", async () => {
    const jpeg = await jpegOf(kitPage({ seed: 2 }).img, 92);
    const photo = withMetadata(jpeg, {
      exif: { Make: "Google", Model: "Pixel 7a", ExposureTime: [1, 60], ISO: 200 },
    });
    const r = await run(imageModel(photo));
    expect(r.discovered).toEqual(["capture_camera_photo"]);
    expect(r.findings[0]?.evidence?.camera).toMatchObject({ make: "Google", model: "Pixel 7a" });
  });

  it("a messenger's re-encode: no EXIF, no density, its size cap and quality", async () => {
    const r = await run(imageModel(await jpegOf(kitPage({ seed: 3, width: 1600, height: 1100 }).img, 75)));
    expect(r.discovered).toEqual(["capture_messenger"]);
  });

  it("a screenshot: lossless, paper without any noise", async () => {
    const k = kitPage({ seed: 4, noise: 0 });
    const flat = new Uint8Array(k.img.data.length);
    for (let i = 0; i < flat.length; i++) flat[i] = k.img.data[i]! > 200 ? 255 : k.img.data[i]!;
    const png = await sharp(Buffer.from(flat), {
      raw: { width: k.img.width, height: k.img.height, channels: 3 },
    })
      .png()
      .toBuffer();
    const r = await run(imageModel(png, "image/png"));
    expect(r.discovered).toEqual(["capture_screenshot"]);
  });

  it("a picture placed into a PDF as its page: pasted_image, with what the picture itself is", async () => {
    const jpeg = await jpegOf(kitPage({ seed: 5 }).img, 85, { density: 200 });
    const pdf = await PDFDocument.create({ updateMetadata: false });
    const img = await pdf.embedJpg(jpeg);
    pdf
      .addPage([595, (595 * img.height) / img.width])
      .drawImage(img, { x: 0, y: 0, width: 595, height: (595 * img.height) / img.width });
    const r = await run(await modelOf(await pdf.save()));
    expect(r.discovered).toEqual(["capture_pasted_image"]);
    expect(r.findings[0]?.evidence).toMatchObject({ class: "pasted_image", underlying: "flatbed_scan" });
  });
});
