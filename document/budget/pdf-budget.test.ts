import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { DEFAULT_DOCUMENT_BUDGET, type DocumentBudget } from "../../core/document-budget.js";
import {
  flateOfRepeatedByte,
  HOSTILE_PDF_KINDS,
  type HostilePdfKind,
  jpegHeaderOnly,
  makeBenignPdf,
  makeHostilePdf,
  writePdf,
} from "../../fixtures/hostile-pdf.js";
import { openRawPdf } from "../pdf-raw/document.js";
import { type BudgetLimit, measurePdf } from "./pdf-budget.js";

const measure = (bytes: Uint8Array, budget: Partial<DocumentBudget> = {}) =>
  measurePdf(openRawPdf(bytes), { ...DEFAULT_DOCUMENT_BUDGET, ...budget });
const stream = (content: string, dict = "<< >>") => ({
  dict,
  data: new Uint8Array(Buffer.from(content, "latin1")),
});
const flate = (content: string) => ({
  dict: "<< /Filter /FlateDecode >>",
  data: new Uint8Array(zlib.deflateSync(Buffer.from(content, "latin1"))),
});

/** Catalog (1), one page tree (2) of the pages given as objects 3.., then `rest` (numbers follow). */
function doc(pageDicts: string[], rest: (string | { dict: string; data: Uint8Array })[]): Uint8Array {
  const kids = pageDicts.map((_, i) => `${3 + i} 0 R`).join(" ");
  return writePdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${kids}] /Count ${pageDicts.length} >>`,
    ...pageDicts.map((d) => `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] ${d} >>`),
    ...rest,
  ]);
}

const EXPECTED: Record<HostilePdfKind, BudgetLimit> = {
  flate_bomb: "decoded_bytes",
  flate_bombs_many: "decoded_bytes",
  font_bomb: "decoded_bytes",
  content_bomb: "operators",
  text_bomb: "operators",
  q_nesting: "save_depth",
  xobject_fanout: "operators",
  xobject_self: "form_cycle",
  xobject_cycle: "form_cycle",
  deep_page_tree: "page_tree",
  page_tree_cycle: "page_tree",
  many_pages: "pages",
  huge_image: "image_pixels",
  huge_jpeg: "image_pixels",
};

describe("measurePdf on hostile PDFs", () => {
  it.each(HOSTILE_PDF_KINDS)("stops %s at its limit", (kind) => {
    const r = measure(makeHostilePdf(kind));
    expect(r.breach?.limit).toBe(EXPECTED[kind]);
    expect(r.breach?.message).toMatch(/\.$/);
    // Whatever it read on the way stays within the budget it enforces.
    expect(r.decodedBytes).toBeLessThanOrEqual(DEFAULT_DOCUMENT_BUDGET.maxDecodedBytes);
  });

  it("lets an ordinary page through with its figures", () => {
    const r = measure(makeBenignPdf());
    expect(r.breach).toBeUndefined();
    expect(r).toMatchObject({ pages: 1, operators: 5, maxFormNesting: 0, maxImagePixels: 0 });
  });
});

describe("measurePdf counts as a reader executes", () => {
  // Form A (obj 5): 3 operators and draws form B 10 times; B (obj 6): 2 operators. The page draws A 4 times.
  const formB = stream("0 0 m S", "<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] >>");
  const formA = stream(
    "q Q 1 g".replace("1 g", `1 g ${"/B Do ".repeat(10)}`),
    "<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources << /XObject << /B 6 0 R >> >> >>",
  );

  it("multiplies a form's operators by every use, nested uses included", () => {
    const bytes = doc(
      ["/Resources << /XObject << /A 5 0 R >> >> /Contents 4 0 R"],
      [stream("/A Do /A Do /A Do /A Do"), formA, formB],
    );
    const r = measure(bytes);
    // page: 4 Do; each A: q Q g + 10 Do = 13, plus 10 × B (2) = 33; 4 × 33 = 132.
    expect(r.operators).toBe(4 + 4 * 33);
    expect(r.maxFormNesting).toBe(2);
    expect(measure(bytes, { maxOperators: 135 }).breach?.limit).toBe("operators");
    expect(measure(bytes, { maxOperators: 136 }).breach).toBeUndefined();
  });

  it("counts a form shared by several pages on each page", () => {
    // Pages 3 and 4 share content 5, which draws A (6); A draws B (7) ten times.
    const page = "/Resources << /XObject << /A 6 0 R >> >> /Contents 5 0 R";
    const a = stream(
      `q Q 1 g ${"/B Do ".repeat(10)}`,
      "<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources << /XObject << /B 7 0 R >> >> >>",
    );
    expect(measure(doc([page, page], [stream("/A Do"), a, formB])).operators).toBe(2 * (1 + 33));
  });

  it("counts content bytes each time they are drawn and other streams once", () => {
    const big = `${"0 0 m ".repeat(2000)}`; // 12 000 bytes, 2 000 operators
    const form = stream(big, "<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] >>");
    const bytes = doc(
      ["/Resources << /XObject << /F 5 0 R >> >> /Contents 4 0 R"],
      [stream("/F Do /F Do /F Do"), form],
    );
    const r = measure(bytes);
    expect(r.decodedBytes).toBe(3 * big.length + "/F Do /F Do /F Do".length);
    expect(measure(bytes, { maxDecodedBytes: 3 * big.length }).breach?.limit).toBe("decoded_bytes");
  });

  it("runs Type 3 glyph procedures once per font, tiling patterns and annotation appearances", () => {
    const bytes = doc(
      [
        "/Resources << /Font << /T3 6 0 R >> /Pattern << /P 8 0 R >> >> /Contents 5 0 R /Annots [9 0 R]",
        "/Resources << /Font << /T3 6 0 R >> >> /Contents 5 0 R",
      ],
      [
        stream("BT /T3 1 Tf (a) Tj ET"),
        "<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1 1] /FontMatrix [1 0 0 1 0 0] /CharProcs << /a 7 0 R >> /Encoding << /Differences [97 /a] >> /FirstChar 97 /LastChar 97 /Widths [1] >>",
        stream("1 0 0 0 1 1 d1 0 0 1 1 re f"),
        stream(
          "0 0 1 1 re f",
          "<< /PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 1 1] /XStep 1 /YStep 1 >>",
        ),
        "<< /Type /Annot /Subtype /Square /Rect [0 0 10 10] /AP << /N 10 0 R >> >>",
        stream("0 0 10 10 re S", "<< /Type /XObject /Subtype /Form /BBox [0 0 10 10] >>"),
      ],
    );
    const r = measure(bytes);
    // pages: 2 × (BT Tf Tj ET) = 8; glyph a once: d1 re f = 3; pattern: re f = 2; annotation: re S = 2.
    expect(r.operators).toBe(8 + 3 + 2 + 2);
  });

  it("limits form nesting", () => {
    const depth = 40;
    const forms = Array.from({ length: depth }, (_, i) =>
      stream(
        i === depth - 1 ? "0 0 m" : "/N Do",
        `<< /Type /XObject /Subtype /Form /BBox [0 0 1 1]${i === depth - 1 ? "" : ` /Resources << /XObject << /N ${6 + i} 0 R >> >>`} >>`,
      ),
    );
    const bytes = doc(
      ["/Resources << /XObject << /N 5 0 R >> >> /Contents 4 0 R"],
      [stream("/N Do"), ...forms],
    );
    expect(measure(bytes).breach?.limit).toBe("form_nesting");
  });

  it("adds up the distinct images one page draws, by dictionary size and by the JPEG's own header", () => {
    const image = (w: number, h: number) =>
      stream(
        "x",
        `<< /Type /XObject /Subtype /Image /Width ${w} /Height ${h} /ColorSpace /DeviceGray /BitsPerComponent 8 >>`,
      );
    const twice = doc(
      ["/Resources << /XObject << /A 5 0 R /B 5 0 R >> >> /Contents 4 0 R"],
      [stream("/A Do /B Do /A Do"), image(6000, 6000)],
    );
    expect(measure(twice).breach).toBeUndefined(); // 36 M pixels, one image drawn three times
    const two = doc(
      ["/Resources << /XObject << /A 5 0 R /B 6 0 R >> >> /Contents 4 0 R"],
      [stream("/A Do /B Do"), image(6000, 6000), image(6000, 6000)],
    );
    expect(measure(two).breach?.limit).toBe("image_pixels"); // 72 M pixels on one page
    const jpeg = doc(
      ["/Resources << /XObject << /J 5 0 R >> >> /Contents 4 0 R"],
      [
        stream("/J Do"),
        {
          dict: "<< /Type /XObject /Subtype /Image /Width 10 /Height 10 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode >>",
          data: jpegHeaderOnly(9000, 9000),
        },
      ],
    );
    expect(measure(jpeg).breach?.limit).toBe("image_pixels");
    const inline = doc(["/Contents 4 0 R"], [stream("BI /W 9000 /H 9000 /CS /G /BPC 8 ID \x00 EI")]);
    expect(measure(inline).breach?.limit).toBe("image_pixels");
  });

  it("limits each stream on its own too (readers hold and parse a stream whole)", () => {
    const bytes = doc(
      ["/Contents 4 0 R"],
      [flate("0 0 m S"), { dict: "<< /Filter /FlateDecode >>", data: flateOfRepeatedByte(0x20, 80 << 20) }],
    );
    const r = measure(bytes, { maxDecodedBytes: 1 << 30 });
    expect(r.breach).toEqual({
      limit: "decoded_bytes",
      message: "A stream of the document expands to more than 64 MB when decoded.",
    });
  });

  it("measures streams nobody references too (a reader rebuilding a broken file reads them)", () => {
    const bytes = doc(["/Contents 4 0 R"], [flate("0 0 m S"), flate(" ".repeat(5_000_000))]);
    expect(measure(bytes).decodedBytes).toBeGreaterThan(5_000_000);
    expect(measure(bytes, { maxDecodedBytes: 1_000_000 }).breach?.limit).toBe("decoded_bytes");
  });
});

/**
 * Genuine documents beside the repository (../shared: CI has it beside the clone): the real-world PDFs and
 * pyHanko's signed files (its unsigned files are robustness cases, some hostile on purpose).
 */
const SHARED = path.resolve(import.meta.dirname, "../../../shared");
const realworld = path.join(SHARED, "realworld-dev/docs");
const pyhanko = path.join(SHARED, "peer-suites/pyhanko");
const genuine = [
  ...(existsSync(realworld)
    ? readdirSync(realworld)
        .filter((f) => f.endsWith(".pdf"))
        .map((f) => path.join(realworld, f))
    : []),
  ...(existsSync(path.join(pyhanko, "expectations.json"))
    ? (
        JSON.parse(readFileSync(path.join(pyhanko, "expectations.json"), "utf8")) as {
          signed: { file: string }[];
        }
      ).signed.map((e) => path.join(pyhanko, e.file))
    : []),
];

describe.skipIf(genuine.length === 0)("measurePdf on genuine documents (../shared)", () => {
  it("lets every one through with the default budget, far from each limit", () => {
    const over: string[] = [];
    for (const file of genuine) {
      const r = measure(new Uint8Array(readFileSync(file)));
      if (r.breach) over.push(`${path.basename(file)}: ${r.breach.message}`);
      // A tenth of each limit: the defaults leave room for documents heavier than these.
      if (r.operators > DEFAULT_DOCUMENT_BUDGET.maxOperators / 10)
        over.push(`${file}: ${r.operators} operators`);
      if (r.decodedBytes > DEFAULT_DOCUMENT_BUDGET.maxDecodedBytes / 10)
        over.push(`${file}: ${r.decodedBytes} bytes`);
    }
    expect(genuine.length).toBeGreaterThan(90);
    expect(over).toEqual([]);
  });
});
