import { describe, expect, it } from "vitest";
import {
  displayedSize,
  fractionToPixels,
  type PageGeometry,
  pixelsToBox,
  toFraction,
} from "./page-geometry.js";

const letter = (rotate: PageGeometry["rotate"], view = [0, 0, 612, 792]): PageGeometry => ({
  number: 1,
  view,
  rotate,
  units: "pt",
});
// A box near the top-left corner of the upright page (PDF y grows upwards).
const topLeft = [61.2, 712.8, 122.4, 792];

describe("page geometry", () => {
  it("fractions have their origin at the top left of the page as displayed, for each rotation", () => {
    expect(toFraction(letter(0), topLeft)).toEqual([0.1, 0, 0.2, 0.1]);
    // turned clockwise: the top-left corner goes to the top right
    expect(toFraction(letter(90), topLeft)).toEqual([0.9, 0.1, 1, 0.2]);
    expect(toFraction(letter(180), topLeft)).toEqual([0.8, 0.9, 0.9, 1]);
    expect(toFraction(letter(270), topLeft)).toEqual([0, 0.8, 0.1, 0.9]);
    expect(displayedSize(letter(90))).toEqual({ width: 792, height: 612 });
  });

  it("a page box that does not start at 0,0, and image pixels (y down)", () => {
    expect(toFraction(letter(0, [100, 100, 712, 892]), [161.2, 812.8, 222.4, 892])).toEqual([
      0.1, 0, 0.2, 0.1,
    ]);
    const image: PageGeometry = { number: 1, view: [0, 0, 1000, 500], rotate: 0, units: "px" };
    expect(toFraction(image, [100, 50, 200, 100])).toEqual([0.1, 0.1, 0.2, 0.2]);
  });

  it("clamps to the page; a box wholly off the page has no fraction", () => {
    expect(toFraction(letter(0), [-50, 700, 61.2, 800])).toEqual([0, 0, 0.1, 0.1162]);
    expect(toFraction(letter(0), [700, 100, 800, 200])).toBeUndefined();
  });

  it("pixels and page units convert both ways", () => {
    for (const rotate of [0, 90, 180, 270] as const) {
      const g = letter(rotate);
      const { width, height } = displayedSize(g);
      const px = fractionToPixels(toFraction(g, [100, 200, 300, 250])!, width * 2, height * 2);
      const back = pixelsToBox(g, px, width * 2, height * 2);
      for (const [i, v] of back.entries())
        expect(Math.abs(v - [100, 200, 300, 250][i]!)).toBeLessThanOrEqual(0.5);
    }
  });
});
