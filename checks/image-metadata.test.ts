import { PDFDocument } from "pdf-lib";
import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { CheckResult } from "../core/check-result.js";
import { modelOf } from "../document/testdata/model-kit.js";
import { makeDocument, makePng } from "../fixtures/documents.js";
import { withMetadata, xmpPacket } from "../fixtures/exif.js";
import { makeScannedImage } from "../fixtures/scans.js";
import { imageMetadataCheck } from "./image-metadata.js";

const now = new Date("2026-01-15T12:00:00Z");
const run = async (bytes: Uint8Array, filename = "statement.jpg") =>
  CheckResult.parse(await imageMetadataCheck.run(await modelOf(bytes, { filename }), { now }));
const codes = (r: CheckResult) => r.findings.map((f) => f.code).sort();

const phone = {
  Make: "Apple",
  Model: "iPhone 14",
  DateTime: "2025:03:01 10:00:00",
  DateTimeOriginal: "2025:03:01 10:00:00",
  ExposureTime: [1, 60] as [number, number],
  FNumber: [18, 10] as [number, number],
  ISO: 100,
};

let page: Buffer;
beforeAll(async () => {
  page = await makeScannedImage(await makeDocument({ seed: 7, docType: "payslip", region: "GB" }), {
    scale: 1,
  });
});

describe("image.metadata", () => {
  it("passes a phone photo with camera data and a matching thumbnail", async () => {
    const thumb = await sharp(page).resize(160, 160, { fit: "inside" }).jpeg().toBuffer();
    const r = await run(withMetadata(page, { exif: phone, thumbnail: thumb }), "IMG_2041.jpg");
    expect(r.outcome).toBe("pass");
    expect(r.findings).toEqual([]);
    expect(r.summary).toMatch(/shows no image editing/);
  });

  it("flags image-editor software in EXIF and the XMP edit history", async () => {
    const edited = withMetadata(page, {
      exif: { ...phone, Software: "Adobe Photoshop 25.0 (Windows)" },
      xmp: xmpPacket({
        creatorTool: "Adobe Photoshop 25.0 (Windows)",
        history: [
          { action: "saved", softwareAgent: "Adobe Photoshop 25.0 (Windows)", when: "2025-03-02T09:00:00Z" },
          { action: "saved", softwareAgent: "Adobe Photoshop 25.0 (Windows)", when: "2025-03-02T09:05:00Z" },
        ],
      }),
    });
    const r = await run(edited, "IMG_2041.jpg");
    expect(r.outcome).toBe("flag");
    expect(codes(r)).toEqual(["image_edit_history", "image_editor_software"]);
    expect(r.findings.find((f) => f.code === "image_editor_software")?.message).toMatch(
      /Adobe Photoshop 25\.0/,
    );
    expect(r.findings.find((f) => f.code === "image_edit_history")?.message).toMatch(/2 editing step/);
    expect(r.severity).toBe(4);
  });

  it("flags a photo of a document that carries exposure data but no camera", async () => {
    const { Make: _m, Model: _mo, ...noCamera } = phone;
    const r = await run(
      withMetadata(page, { exif: { ...noCamera, Software: "Snapseed 2.0" } }),
      "PXL_20250301.jpg",
    );
    expect(codes(r)).toEqual(["camera_data_missing", "image_editor_software"]);
  });

  it("flags an EXIF thumbnail that shows a different picture (edited after the thumbnail was made)", async () => {
    const pdf = await makeDocument({ seed: 7, docType: "payslip", region: "GB" });
    const tampered = await makeScannedImage(pdf, {
      scale: 1,
      exif: phone,
      thumbnail: "self",
      edit: { x: 0, y: 0, w: 595, h: 420, color: "#202020" },
    });
    const r = await run(tampered, "IMG_2041.jpg");
    expect(r.outcome).toBe("flag");
    expect(codes(r)).toEqual(["thumbnail_mismatch"]);
    expect(r.findings[0]?.evidence).toMatchObject({ hashBitsApart: expect.any(Number) });
    expect(r.severity).toBe(8);
  });

  it("reads the JPEG images inside a PDF and names the page", async () => {
    const doc = await PDFDocument.load(await makeDocument({ seed: 5, docType: "invoice", region: "DE" }), {
      updateMetadata: false,
    });
    const photo = withMetadata(page, { exif: { Software: "GIMP 2.10.34" } });
    const img = await doc.embedJpg(photo);
    doc.addPage([595, 842]).drawImage(img, { x: 0, y: 0, width: 595, height: 842 });
    const r = await run(await doc.save({ useObjectStreams: false }), "invoice.pdf");
    expect(codes(r)).toEqual(["image_editor_software"]);
    expect(r.findings[0]?.page).toBe(2);
    expect(r.findings[0]?.message).toMatch(/GIMP 2\.10\.34/);
  });

  it("skips a PDF without photo-sized JPEG images and passes a plain PNG", async () => {
    const pdf = await run(await makeDocument({ seed: 1, docType: "invoice", region: "US" }), "x.pdf");
    expect(pdf.outcome).toBe("skip");
    const png = await run(makePng(3, { width: 64, height: 64 }), "scan.png");
    expect(png.outcome).toBe("pass");
  });

  it("does not crash on a JPEG with a corrupt Exif segment or a broken thumbnail", async () => {
    const broken = Buffer.concat([
      page.subarray(0, 2),
      Buffer.from([0xff, 0xe1, 0x00, 0x20]),
      Buffer.from(
        "Exif\0\0MM\0*\0\0\0\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
        "latin1",
      ),
      page.subarray(2),
    ]);
    const r = await run(broken, "IMG_1.jpg");
    expect(["pass", "flag"]).toContain(r.outcome);
    const badThumb = withMetadata(page, {
      exif: phone,
      thumbnail: Buffer.from([0xff, 0xd8, 1, 2, 3, 4, 5, 6]),
    });
    const t = await run(badThumb, "IMG_1.jpg");
    expect(codes(t)).not.toContain("thumbnail_mismatch");
  });
});
