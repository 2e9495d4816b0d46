import type { CheckResult } from "../../core/check-result.js";
import { buildDocumentModel } from "../../document/pdf-model.js";
import { capture, drawCapture } from "../../fixtures/ids/capture.js";
import { renderId } from "../../fixtures/ids/render.js";
import { makeSpecimen, tamperedRendering } from "../../fixtures/ids/specimen.js";
import { idMrzCheck } from "../id-mrz/id-mrz.js";

/**
 * For tests outside checks/ (the reviewer page's): id.mrz run on a scanned passport page whose printed date
 * of birth was changed (the MRZ left as issued), and the scan's size in pixels.
 */
export async function passportWithChangedBirthDate(): Promise<{
  result: CheckResult;
  width: number;
  height: number;
}> {
  let seed = 40;
  let t = tamperedRendering({ ...makeSpecimen(seed, "td3"), layout: 0 }, "viz_changed", seed);
  while (!t.viz?.birth) {
    seed++;
    t = tamperedRendering({ ...makeSpecimen(seed, "td3"), layout: 0 }, "viz_changed", seed);
  }
  const rendered = await renderId(t, seed);
  const shot = await capture(rendered.image, drawCapture("scan", seed), seed);
  const doc = await buildDocumentModel({
    bytes: new Uint8Array(shot.jpeg),
    contentType: "image/jpeg",
    filename: "passport.jpg",
    declaredContentType: null,
    declaredDocType: "id_document",
    region: "EU",
  });
  const result = await idMrzCheck.run(doc, { now: new Date("2026-06-01T00:00:00Z") });
  return { result, width: shot.width, height: shot.height };
}
