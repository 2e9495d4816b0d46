import { createCanvas } from "@napi-rs/canvas";
import sharp from "sharp";
import type { DocumentModel } from "../../document/model.js";
import { gauss, type Rgb } from "../../fixtures/captures/simulate.js";
import type { Box, ValueOnCapture } from "../../fixtures/captures/tamper.js";
import { Rng } from "../../fixtures/random.js";

/**
 * A small printed-and-scanned page made in code, fast enough for unit tests: lines of labels and amounts
 * drawn with a system font, the ink's coverage varied dot by dot (print grain), blurred (optics), with
 * sensor noise on the paper; and the boxes of its amounts (with a box per character), so tests can tamper
 * with them (fixtures/captures/tamper.ts) and know where.
 */

export interface KitPage {
  img: Rgb;
  values: ValueOnCapture[];
}

export function kitPage(o: {
  seed: number;
  width?: number;
  height?: number;
  noise?: number;
  size?: number;
}): KitPage {
  const width = o.width ?? 1100;
  const height = o.height ?? 820;
  const size = o.size ?? 26;
  const rng = new Rng(o.seed);
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = "#000";
  ctx.font = `${size}px "Liberation Sans"`;
  ctx.textBaseline = "alphabetic";
  const values: ValueOnCapture[] = [];
  const labels = [
    "Opening balance",
    "Salary payment",
    "Rent",
    "Card purchase",
    "Transfer out",
    "Interest",
    "Closing balance",
  ];
  let y = 90;
  for (let i = 0; y < height - 60; i++) {
    const label = labels[i % labels.length]!;
    const amount = `${rng.int(1, 9)},${rng.int(100, 999)}.${String(rng.int(0, 99)).padStart(2, "0")}`;
    ctx.textAlign = "left";
    ctx.fillText(label, 70, y);
    ctx.textAlign = "right";
    const right = width - 90;
    ctx.fillText(amount, right, y);
    // Character boxes from the font's advance widths (right-aligned: walk back from the right edge).
    const total = ctx.measureText(amount).width;
    const cap = size * 0.72;
    const chars: Box[] = [];
    let x = right - total;
    for (const ch of amount) {
      const w = ctx.measureText(ch).width;
      chars.push([x, y - cap, x + w, y]);
      x += w;
    }
    values.push({ text: amount, box: [right - total, y - cap, right, y], chars, capHeight: cap });
    y += Math.round(size * 1.9);
  }
  const rgba = ctx.getImageData(0, 0, width, height).data;
  // Print grain (correlated over ~1 px), optics blur, sensor noise.
  const cover = new Float32Array(width * height);
  for (let i = 0; i < width * height; i++) cover[i] = 1 - rgba[i * 4]! / 255;
  const grain = new Float32Array(width * height);
  for (let i = 0; i < grain.length; i++) grain[i] = gauss(rng);
  const smooth = (a: Float32Array) => {
    const b = new Float32Array(a.length);
    for (let yy = 1; yy < height - 1; yy++)
      for (let xx = 1; xx < width - 1; xx++) {
        const p = yy * width + xx;
        b[p] = (a[p]! * 4 + a[p - 1]! + a[p + 1]! + a[p - width]! + a[p + width]!) / 8;
      }
    return b;
  };
  const g2 = smooth(grain);
  for (let i = 0; i < cover.length; i++) cover[i] = Math.min(1, Math.max(0, cover[i]! * (1 + 0.4 * g2[i]!)));
  const blurred = smooth(cover);
  const paper = [238, 236, 230];
  const ink = [40, 38, 48];
  const data = new Uint8Array(width * height * 3);
  const sigma = o.noise ?? 2.5;
  for (let i = 0; i < width * height; i++) {
    const common = gauss(rng) * sigma;
    for (let c = 0; c < 3; c++) {
      const v = paper[c]! + (ink[c]! - paper[c]!) * blurred[i]! + common + gauss(rng) * sigma * 0.4;
      data[i * 3 + c] = Math.max(0, Math.min(255, Math.round(v)));
    }
  }
  return { img: { width, height, data }, values };
}

export async function jpegOf(
  img: Rgb,
  quality: number,
  opts: { density?: number; subsampling?: "4:2:0" | "4:4:4" } = {},
): Promise<Buffer> {
  let p = sharp(Buffer.from(img.data), { raw: { width: img.width, height: img.height, channels: 3 } });
  if (opts.density) p = p.withMetadata({ density: opts.density });
  return p.jpeg({ quality, chromaSubsampling: opts.subsampling ?? "4:2:0" }).toBuffer();
}

/** The model a check reads for an image document (as the check step builds it for images). */
export function imageModel(bytes: Uint8Array, contentType = "image/jpeg"): DocumentModel {
  return {
    bytes,
    sizeBytes: bytes.length,
    contentType,
    filename: contentType === "image/png" ? "scan.png" : "scan.jpg",
    declaredDocType: "bank_statement",
    region: "GB",
    warnings: [],
  };
}

/** Intersection over union of two boxes. */
export function iou(a: readonly number[], b: readonly number[]): number {
  const x0 = Math.max(a[0]!, b[0]!);
  const y0 = Math.max(a[1]!, b[1]!);
  const x1 = Math.min(a[2]!, b[2]!);
  const y1 = Math.min(a[3]!, b[3]!);
  const inter = Math.max(0, x1 - x0) * Math.max(0, y1 - y0);
  const area = (q: readonly number[]) => (q[2]! - q[0]!) * (q[3]! - q[1]!);
  return inter / (area(a) + area(b) - inter || 1);
}

/** True when the boxes overlap (with a margin). */
export function touches(a: readonly number[], b: readonly number[], m = 4): boolean {
  return a[0]! < b[2]! + m && b[0]! - m < a[2]! && a[1]! < b[3]! + m && b[1]! - m < a[3]!;
}
