import { describe, expect, it } from "vitest";
import type { OcrSymbol } from "./id-ocr.js";
import { cellText } from "./mrz-read.js";

/**
 * tesseract's characters placed into a line's cells by position (mrz-read.ts cellText). Positions are in
 * cells (0 = the first cell's centre), as tesseract gave them on two development TD1 cards (eval:ids dev draw
 * 13), where its confirming reading came out a cell off and a confirmed check-digit failure stayed a note.
 */
const PITCH = 10;

function line(spec: string) {
  const symbols: OcrSymbol[] = spec.split(" ").map((s) => {
    const [text, at] = s.split("@") as [string, string];
    const cx = (Number(at) + 0.5) * PITCH;
    return { text, confidence: 90, box: [cx - 3, 0, cx + 3, 10] };
  });
  return { words: [{ text: "", confidence: 90, box: [0, 0, 0, 0] as OcrSymbol["box"], symbols }] };
}

const kinds = (s: string) => [...s].map((c) => (c === "_" ? "" : c)) as ("<" | "?" | "")[];

describe("cellText", () => {
  it("centres the characters in their cells rather than taking the first shift that fills as many", () => {
    // One character more than inked cells (a spurious B over the fillers): placed by position. The first
    // shift filling 23 cells (−0.6) rounds E at 2.06 into cell 1, a filler, and every cell after it one off.
    const cells = { kinds: kinds("?<??????????????????????<<<<<<"), left: 0, pitch: PITCH };
    const read = cellText(
      cells,
      line(
        "I@0.7 E@2.06 S@3.1 P@4.1 M@5.0 1@6.0 9@7.0 1@8.0 4@9.0 0@10.0 3@10.9 8@11.9 1@12.9 0@13.9 E@15.0 M@15.9 4@16.9 6@17.9 5@18.9 1@19.9 2@21.0 9@22.0 H@23.0 B@29.2",
      ),
    );
    expect(read.text).toBe("I<ESPM191403810EM465129H<<<<<<");
  });

  it("counts two characters rounded into one cell as one cell filled", () => {
    // Shift −0.5 puts “1” at 9.9 and “0” at 9.0 into one cell and leaves cell 11 empty; no shift is better
    // than none here.
    const cells = { kinds: kinds("??????????????????<<<<<<<<<<<?"), left: 0, pitch: PITCH };
    const read = cellText(
      cells,
      line(
        "5@0.04 0@1.0 0@2.0 3@3.0 2@4.0 5@5.0 7@6.0 F@7.1 3@8.0 0@9.0 1@9.9 1@10.9 3@12.0 8@13.0 3@14.0 1@15.0 I@15.3 T@16.0 A@17.0 6@29.0",
      ),
    );
    expect(read.text.slice(0, 15)).toBe("5003257F3011383");
    expect(read.text.slice(29)).toBe("6");
  });
});
