import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { prepareZXingModule, type ReadResult, readBarcodes } from "zxing-wasm/reader";
import type { RgbaImage } from "../raster.js";
import type { Point } from "./geometry.js";

/**
 * Reads the 2D barcodes of an identity document (PDF417 on the back of US/Canadian licences, QR codes and
 * Data Matrix on ID cards) with zxing-wasm (ZXing-C++ compiled to WebAssembly). zxing-wasm fetches its .wasm
 * from a CDN unless told otherwise: here the binary is read once from node_modules (`wasmBinary`), so reading
 * never touches the network (checks/id-barcode tests run with the network blocked).
 */

export interface FoundBarcode {
  format: "PDF417" | "QRCode" | "DataMatrix" | "Aztec" | string;
  /** The payload as text (bytes as Latin-1 when not text). */
  text: string;
  /** Corners in the pixels of the image read: top-left, top-right, bottom-right, bottom-left. */
  corners: [Point, Point, Point, Point];
  /** Angle of the symbol's top edge, degrees. */
  angleDeg: number;
}

const require = createRequire(import.meta.url);
let prepared = false;

/** Points zxing-wasm at its reader binary in node_modules (once per process). */
function prepare(): void {
  if (prepared) return;
  const wasm = readFileSync(require.resolve("zxing-wasm/reader/zxing_reader.wasm"));
  prepareZXingModule({
    overrides: {
      wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer,
      // Belt and braces: should anything ask for a file, it is never a URL.
      locateFile: (path: string) => require.resolve(`zxing-wasm/reader/${path}`),
    },
  });
  prepared = true;
}

const FORMATS = ["PDF417", "QRCode", "DataMatrix", "Aztec"] as const;

export interface FindOptions {
  /** ZXing's binarizer: LocalAverage (its default, for uneven light) or GlobalHistogram (one threshold). */
  binarizer?: "LocalAverage" | "GlobalHistogram";
  /** Formats to look for (default: PDF417, QR, Data Matrix, Aztec). */
  formats?: readonly (typeof FORMATS)[number][];
}

export async function findBarcodes(img: RgbaImage, opts: FindOptions = {}): Promise<FoundBarcode[]> {
  prepare();
  const results: ReadResult[] = await readBarcodes(
    { data: img.data, width: img.width, height: img.height, colorSpace: "srgb" } as unknown as Parameters<
      typeof readBarcodes
    >[0],
    {
      formats: [...(opts.formats ?? FORMATS)],
      tryHarder: true,
      tryRotate: true,
      maxNumberOfSymbols: 4,
      binarizer: opts.binarizer ?? "LocalAverage",
    },
  );
  return results
    .filter((r) => r.isValid)
    .map((r) => {
      const p = r.position;
      const corners: [Point, Point, Point, Point] = [
        [p.topLeft.x, p.topLeft.y],
        [p.topRight.x, p.topRight.y],
        [p.bottomRight.x, p.bottomRight.y],
        [p.bottomLeft.x, p.bottomLeft.y],
      ];
      const angleDeg =
        (Math.atan2(corners[1][1] - corners[0][1], corners[1][0] - corners[0][0]) * 180) / Math.PI;
      // The raw bytes: zxing's text spells control characters out (<LF>), and AAMVA payloads are made of them.
      const text = r.bytes.length > 0 ? Buffer.from(r.bytes).toString("latin1") : r.text;
      return { format: r.format, text, corners, angleDeg };
    });
}
