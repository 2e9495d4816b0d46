import { createHash } from "node:crypto";
import sharp from "sharp";
import { type CheckStepResult, keys, type StepInput } from "../../core/detection.js";
import { EvidenceManifest, type EvidencePage } from "../../core/evidence.js";
import { MARK_COLOUR, markMetrics } from "../../document/page-marks.js";
import { runCheckStep, type CheckStepOptions } from "../step.js";
import { stepInput, type TestStepContext } from "./step-context.js";

/**
 * Runs the check step on a document in a test context and reads back what it stored for the reviewer:
 * the evidence manifest and the page images, decoded. `marksIn` finds the numbered boxes in a decoded
 * image by their exact colour, and `pointsToPixels` places a box a fixture recorded (PDF points) on the
 * image independently of the code under test.
 */

export interface Checked {
  input: StepInput;
  result: CheckStepResult;
  manifest: EvidenceManifest;
  /** The stored PNG of a page (submitted or as first saved), or undefined when there is none. */
  png(page: number, version?: "submitted" | "first-saved"): Promise<Buffer | undefined>;
}

export async function checkDocument(
  ctx: TestStepContext,
  bytes: Uint8Array,
  spec: { docType: StepInput["spec"]["docType"]; region: string },
  opts: CheckStepOptions = {},
  contentType = "application/pdf",
): Promise<Checked> {
  const base = stepInput("check", { source: { url: "https://example.com/x" }, ...spec });
  const filename = contentType === "application/pdf" ? "document.pdf" : "document.png";
  const key = keys.document(base.detection, filename);
  await ctx.objects.put(ctx.bucket, key, Buffer.from(bytes), { contentType });
  const input: StepInput = {
    ...base,
    document: {
      filename,
      contentType,
      sizeBytes: bytes.length,
      key,
      sha256: createHash("sha256").update(bytes).digest("hex"),
    },
  };
  const result = await runCheckStep(input, ctx, opts);
  const manifest = EvidenceManifest.parse(
    JSON.parse((await ctx.objects.get(ctx.bucket, keys.evidence(input.detection))).toString("utf8")),
  );
  return {
    input,
    result,
    manifest,
    async png(page, version = "submitted") {
      const p = manifest.pages.find((x) => x.number === page);
      const image = version === "submitted" ? p?.image : p?.firstSaved;
      return image ? ctx.objects.get(ctx.bucket, image.key) : undefined;
    },
  };
}

export interface FoundMark {
  /** The box the mark surrounds, in pixels [x0, y0, x1, y1] (inside the outline and its gap). */
  inner: [number, number, number, number];
  outer: [number, number, number, number];
}

/**
 * The marks drawn on a PNG: connected areas of exactly MARK_COLOUR (8-connected), each as its bounding
 * rectangle; outlines of boxes that touch merge into one (the tests keep their boxes apart).
 */
export async function marksIn(png: Buffer): Promise<{ width: number; height: number; marks: FoundMark[] }> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const hit = new Uint8Array(width * height);
  for (let i = 0; i < width * height; i++) {
    const o = i * info.channels;
    if (data[o] === MARK_COLOUR[0] && data[o + 1] === MARK_COLOUR[1] && data[o + 2] === MARK_COLOUR[2])
      hit[i] = 1;
  }
  const { line, gap } = markMetrics(width, height);
  const marks: FoundMark[] = [];
  const seen = new Uint8Array(width * height);
  for (let start = 0; start < hit.length; start++) {
    if (!hit[start] || seen[start]) continue;
    const stack = [start];
    seen[start] = 1;
    let [x0, y0, x1, y1] = [width, height, -1, -1];
    while (stack.length) {
      const i = stack.pop() as number;
      const x = i % width;
      const y = Math.floor(i / width);
      x0 = Math.min(x0, x);
      y0 = Math.min(y0, y);
      x1 = Math.max(x1, x);
      y1 = Math.max(y1, y);
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx;
          const ny = y + dy;
          if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
          const j = ny * width + nx;
          if (hit[j] && !seen[j]) {
            seen[j] = 1;
            stack.push(j);
          }
        }
    }
    const outer: FoundMark["outer"] = [x0, y0, x1 + 1, y1 + 1];
    const d = line + gap;
    marks.push({ outer, inner: [outer[0] + d, outer[1] + d, outer[2] - d, outer[3] - d] });
  }
  return { width, height, marks };
}

/**
 * A box in PDF points (origin bottom left) on an upright page's image: by the page's own box and the
 * image's size, written out here rather than taken from the code under test.
 */
export function pointsToPixels(
  page: Pick<EvidencePage, "geometry">,
  box: readonly number[],
  width: number,
  height: number,
): [number, number, number, number] {
  const view = page.geometry?.view as number[];
  if (!view || page.geometry?.rotate !== 0) throw new Error("pointsToPixels handles upright pages only");
  const sx = width / (view[2]! - view[0]!);
  const sy = height / (view[3]! - view[1]!);
  return [
    (box[0]! - view[0]!) * sx,
    (view[3]! - box[3]!) * sy,
    (box[2]! - view[0]!) * sx,
    (view[3]! - box[1]!) * sy,
  ];
}

const areaOf = (b: readonly number[]) => Math.max(0, b[2]! - b[0]!) * Math.max(0, b[3]! - b[1]!);

/** Intersection over union of two boxes. */
export function iou(a: readonly number[], b: readonly number[]): number {
  const w = Math.min(a[2]!, b[2]!) - Math.max(a[0]!, b[0]!);
  const h = Math.min(a[3]!, b[3]!) - Math.max(a[1]!, b[1]!);
  const inter = w > 0 && h > 0 ? w * h : 0;
  return inter / (areaOf(a) + areaOf(b) - inter || 1);
}

/** True when the box's vertical span overlaps the row of `target` (the same printed line). */
export function onRow(box: readonly number[], target: readonly number[]): boolean {
  return Math.min(box[3]!, target[3]!) - Math.max(box[1]!, target[1]!) > 0;
}
