import { describe, expect, it } from "vitest";
import { scanContent } from "./content-scan.js";

const scan = (s: string, stopAfter?: number) =>
  scanContent(new Uint8Array(Buffer.from(s, "latin1")), stopAfter);

describe("scanContent", () => {
  it("counts operators, not operands", () => {
    const r = scan("q 1 0 0 1 72 720 cm BT /F1 12 Tf (Hello) Tj ET Q 0.5 g 10 10 100 50 re f");
    // q cm BT Tf Tj ET Q g re f
    expect(r.operators).toBe(10);
    expect(r.draws.size).toBe(0);
  });

  it("skips strings (nested, escaped), hex strings, dictionaries, arrays, comments and true/false/null", () => {
    const r = scan(
      [
        "BT (a (nested) string with Tj and \\) and \\\\) Tj ET",
        "<48656c6c6f> Tj",
        "/Span << /ActualText (re f) /MCID 0 /Flag true /X null >> BDC EMC",
        "[(A) 120 (B) -50 (Tj)] TJ",
        "% a comment with re f Do\n",
        "false pop",
      ].join("\n"),
    );
    // BT Tj ET, Tj, BDC EMC, TJ, pop
    expect(r.operators).toBe(8);
  });

  it("reports what Do draws, by name and count (#xx escapes decoded)", () => {
    const r = scan("/Im1 Do q /Fm#201 Do Q /Im1 Do /Fm#201 Do /Fm#201 Do");
    expect(r.draws).toEqual(
      new Map([
        ["Im1", 2],
        ["Fm 1", 3],
      ]),
    );
  });

  it("steps over inline image data (EI only between white space) and reads its declared size", () => {
    const data = Buffer.concat([
      Buffer.from("q BI /W 40 /H 25 /CS /G /BPC 8 ID ", "latin1"),
      Buffer.from([0x45, 0x49, 0x51, 0x28, 0x29, 0x20, 0x71]), // "EIQ() q": no operators inside
      Buffer.from(" EI Q 1 g", "latin1"),
    ]);
    const r = scanContent(new Uint8Array(data));
    // q BI Q g (the data is skipped; EI is part of BI)
    expect(r.operators).toBe(4);
    expect(r.maxInlineImagePixels).toBe(1000);
  });

  it("tracks graphics-state saves without restores", () => {
    expect(scan("q q q Q q q Q Q Q Q").maxSaveDepth).toBe(4);
    expect(scan("Q Q q").maxSaveDepth).toBe(1);
  });

  it("stops early once past the count it was asked about", () => {
    const r = scan("0 0 m ".repeat(1000), 10);
    expect(r.operators).toBe(11);
  });

  it("never throws on garbage", () => {
    const noise = new Uint8Array(10_000).map((_, i) => (i * 7919) & 0xff);
    expect(() => scanContent(noise)).not.toThrow();
    expect(() => scan("(unterminated <abc BI /W 1 ID")).not.toThrow();
  });
});
