// Reads a licence's PDF417 (made here by bwip-js) with zxing-wasm and parses its AAMVA data; prints JSON.
// Run by id-barcode.test.ts under the no-network preload: zxing-wasm's binary must come from node_modules
// (by default it would fetch it from a CDN).
import bwipjs from "bwip-js";
import sharp from "sharp";
import { parseAamva } from "../../document/id/aamva.js";
import { findBarcodes } from "../../document/id/barcodes.js";
import { aamvaPayload, makeSpecimen } from "../../fixtures/ids/specimen.js";

const payload = aamvaPayload(makeSpecimen(7, "dl"));
const png = await bwipjs.toBuffer({
  bcid: "pdf417",
  text: payload,
  columns: 10,
  scale: 3,
  backgroundcolor: "FFFFFF",
  paddingwidth: 10,
  paddingheight: 10,
  binarytext: true,
} as Parameters<typeof bwipjs.toBuffer>[0]);
const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
const found = await findBarcodes({
  width: info.width,
  height: info.height,
  data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length),
});
const a = found[0] ? parseAamva(found[0].text) : undefined;
process.stdout.write(
  `${JSON.stringify({ format: found[0]?.format, same: found[0]?.text === payload, surname: a?.surname, birth: a?.birth?.date })}\n`,
);
