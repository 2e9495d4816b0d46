import exifr from "exifr";
import type { Finding } from "../core/check-result.js";
import type { CodeTable } from "../core/finding-levels.js";
import type { DocumentModel } from "../document/model.js";
import { scanPdfImages } from "../document/pdf-images.js";
import { differenceHash, hammingDistance, thumbnailDifference } from "../document/raster.js";
import { defineCheck, flaggedCodes, skip } from "./check.js";

/**
 * image.metadata: what an image's EXIF and XMP say about how it was made, for image documents (JPEG,
 * PNG, TIFF) and the JPEG images inside PDFs: image-editor software (Photoshop, GIMP, Snapseed, ...),
 * an edit history (xmpMM:History), a "photo of a document" without camera data, and an EXIF thumbnail
 * that shows a different picture than the image (the thumbnail keeps the original when an editor does
 * not refresh it).
 */

export const IMAGE_METADATA_CHECK_ID = "image.metadata";

/** Image editors that change pixels; their presence on a document photo or scan means it was edited. */
const EDITORS: { re: RegExp; name: string; strong: boolean }[] = [
  { re: /photoshop/i, name: "Adobe Photoshop", strong: true },
  { re: /\bgimp\b/i, name: "GIMP", strong: true },
  { re: /snapseed/i, name: "Snapseed", strong: true },
  { re: /pixelmator/i, name: "Pixelmator", strong: true },
  { re: /affinity photo/i, name: "Affinity Photo", strong: true },
  { re: /paint\.net/i, name: "Paint.NET", strong: true },
  { re: /picsart/i, name: "PicsArt", strong: true },
  { re: /photopea/i, name: "Photopea", strong: true },
  { re: /canva/i, name: "Canva", strong: true },
  { re: /fotor/i, name: "Fotor", strong: true },
  { re: /facetune/i, name: "Facetune", strong: true },
  { re: /krita/i, name: "Krita", strong: true },
  { re: /corel ?(photo-?paint|paintshop)/i, name: "Corel", strong: true },
  { re: /lightroom/i, name: "Adobe Lightroom", strong: false },
  { re: /capture one/i, name: "Capture One", strong: false },
  { re: /\bpreview\b/i, name: "Apple Preview", strong: false },
];

/** File names cameras and phones give their pictures. */
const CAMERA_NAME = /^(img|dsc|dscn|dscf|pxl|p\d{7}|photo|image|whatsapp image|dcim|sam|mvimg)[-_ ]?\d/i;

/**
 * Thumbnail vs image: dHash bits apart and mean grey difference (0-255, at 32 × 32) beyond which they are
 * different pictures. A thumbnail made from the same picture measures at most ~8 bits and ~1.5 grey
 * levels apart (re-encoding and scaling only); a repainted region of a tenth of the page measures ~16.
 */
const THUMB_HASH_BITS = 14;
const THUMB_MEAN_DIFF = 6;
/** Embedded PDF images smaller than this (pixels on the longer side) are logos and icons, not photos or scans. */
const MIN_PHOTO_SIDE = 400;
const MAX_EMBEDDED = 12;
/** An embedded image this large (pixels on the longer side) is a photo or scan of a whole page. */
const PAGE_PHOTO_SIDE = 1000;

interface ImageMeta {
  software: string[];
  make?: string;
  model?: string;
  cameraFields: string[];
  history: { action?: string; softwareAgent?: string; when?: string }[];
  modifyDate?: string;
  originalDate?: string;
}

type Raw = Record<string, Record<string, unknown> | undefined>;

async function readMeta(bytes: Uint8Array): Promise<ImageMeta | undefined> {
  let raw: Raw | undefined;
  try {
    raw = (await exifr.parse(bytes, {
      tiff: true,
      exif: true,
      xmp: true,
      ifd1: false,
      icc: false,
      iptc: false,
      mergeOutput: false,
      reviveValues: false,
    })) as Raw | undefined;
  } catch {
    return undefined;
  }
  if (!raw) return undefined;
  const ifd0 = raw.ifd0 ?? {};
  const exif = raw.exif ?? {};
  const xmp = raw.xmp ?? {};
  const str = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : undefined);
  const software = [str(ifd0.Software), str(xmp.CreatorTool), str(ifd0.ProcessingSoftware)].filter(
    (s): s is string => s !== undefined,
  );
  const hist = (raw.xmpMM as { History?: unknown } | undefined)?.History;
  const entries = (Array.isArray(hist) ? hist : hist ? [hist] : []).filter(
    (h): h is Record<string, unknown> => typeof h === "object" && h !== null,
  );
  const history = entries.map((h) => ({
    action: str(h.action),
    softwareAgent: str(h.softwareAgent),
    when: str(h.when),
  }));
  const cameraFields = [
    "ExposureTime",
    "FNumber",
    "ISO",
    "FocalLength",
    "DateTimeOriginal",
    "LensModel",
  ].filter((k) => exif[k] !== undefined);
  return {
    software,
    make: str(ifd0.Make),
    model: str(ifd0.Model),
    cameraFields,
    history,
    modifyDate: str(ifd0.ModifyDate),
    originalDate: str(exif.DateTimeOriginal),
  };
}

interface Subject {
  bytes: Uint8Array;
  /** "the image" or "the image 12 0 R on page 3". */
  label: string;
  page?: number;
  isDocument: boolean;
  isJpeg: boolean;
  filename: string | null;
}

async function inspect(s: Subject): Promise<Finding[]> {
  const findings: Finding[] = [];
  const meta = await readMeta(s.bytes);
  const where = s.page ? { page: s.page } : {};
  const agents = [
    ...(meta?.software ?? []),
    ...(meta?.history ?? []).map((h) => h.softwareAgent ?? ""),
  ].filter(Boolean);
  const editors = EDITORS.filter((e) => agents.some((a) => e.re.test(a)));
  const strong = editors.find((e) => e.strong);
  if (editors.length > 0) {
    const editor = strong ?? editors[0]!;
    const tool = agents.find((a) => editor.re.test(a)) ?? editor.name;
    findings.push({
      code: "image_editor_software",
      message: `The metadata of ${s.label} names the image editor "${tool}"; ${
        editor.strong
          ? "a document photo or scan that passed through an image editor may have had its pixels changed."
          : "the picture was processed after it was taken."
      }`,
      ...where,
      evidence: {
        software: meta?.software,
        historyAgents: (meta?.history ?? []).map((h) => h.softwareAgent),
      },
      severity: editor.strong ? (s.isDocument ? 6 : 5) : 2,
    });
  }
  const edits = (meta?.history ?? []).filter((h) =>
    /saved|edited|modified|converted|derived/i.test(h.action ?? ""),
  );
  if (edits.length > 0) {
    findings.push({
      code: "image_edit_history",
      message: `The XMP edit history of ${s.label} records ${edits.length} editing step(s) (${edits
        .slice(0, 3)
        .map(
          (h) =>
            `${h.action}${h.softwareAgent ? ` with ${h.softwareAgent}` : ""}${h.when ? ` on ${h.when}` : ""}`,
        )
        .join("; ")}); the image was changed after it was captured.`,
      ...where,
      evidence: { history: edits.slice(0, 10) },
      severity: strong ? 5 : 3,
    });
  }
  if (s.isDocument && s.isJpeg && !s.page) {
    const base = (s.filename ?? "").split(/[\\/]/).pop() ?? "";
    const claimsPhoto = CAMERA_NAME.test(base) || (meta?.cameraFields.length ?? 0) > 0;
    if (claimsPhoto && !meta?.make && !meta?.model) {
      findings.push({
        code: "camera_data_missing",
        message: `${cap(s.label)} presents itself as a photo (${
          CAMERA_NAME.test(base) ? `file name ${base}` : `exposure data ${meta?.cameraFields.join(", ")}`
        }) but records no camera make or model; phones and cameras always write them, editors and re-saves strip them.`,
        evidence: { filename: base, cameraFields: meta?.cameraFields ?? [] },
        severity: 4,
      });
    }
  }
  if (s.isJpeg) {
    const thumb = await exifr.thumbnail(s.bytes).catch(() => undefined);
    if (thumb && thumb.length > 100) {
      try {
        const thumbBytes = new Uint8Array(thumb);
        const [a, b] = await Promise.all([differenceHash(s.bytes), differenceHash(thumbBytes)]);
        const bits = hammingDistance(a, b);
        const mean = await thumbnailDifference(s.bytes, thumbBytes);
        if (bits > THUMB_HASH_BITS || mean > THUMB_MEAN_DIFF) {
          findings.push({
            code: "thumbnail_mismatch",
            message: `The EXIF thumbnail inside ${s.label} shows a different picture than the image itself (${bits} of 64 hash bits and ${mean.toFixed(0)}/255 mean grey level apart); the thumbnail keeps the original when the image is edited with a tool that does not refresh it.`,
            ...where,
            evidence: {
              hashBitsApart: bits,
              meanGreyDifference: Math.round(mean),
              thresholdBits: THUMB_HASH_BITS,
            },
            severity: s.isDocument ? 8 : 6,
          });
        }
      } catch {
        // An undecodable thumbnail says nothing about the image.
      }
    }
  }
  return findings;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

async function subjects(doc: DocumentModel): Promise<{ list: Subject[]; skipped: number }> {
  if (!doc.pdf) {
    return {
      list: [
        {
          bytes: doc.bytes,
          label: "the image",
          isDocument: true,
          isJpeg: doc.contentType === "image/jpeg",
          filename: doc.filename,
        },
      ],
      skipped: 0,
    };
  }
  const scan = await scanPdfImages(doc);
  const jpegs = scan.images.filter(
    (i) =>
      i.filters.length === 1 && i.filters[0] === "DCTDecode" && Math.max(i.width, i.height) >= MIN_PHOTO_SIDE,
  );
  return {
    list: jpegs.slice(0, MAX_EMBEDDED).map((i) => ({
      bytes: i.encoded,
      label: `the image ${i.ref} on page ${i.pages[0]}`,
      page: i.pages[0],
      // A page-sized picture is a photo or scan of a document, judged like an image document.
      isDocument: Math.max(i.width, i.height) >= PAGE_PHOTO_SIDE,
      isJpeg: true,
      filename: null,
    })),
    skipped: Math.max(0, jpegs.length - MAX_EMBEDDED),
  };
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  image_editor_software: {
    level: "anomaly",
    kind: "provenance",
    means: "The image's metadata names an image editor.",
  },
  image_edit_history: {
    level: "anomaly",
    kind: "provenance",
    means: "The image's XMP history records editing steps.",
  },
  camera_data_missing: {
    level: "anomaly",
    kind: "capture",
    means: "An image presented as a photo carries none of the data cameras write.",
  },
  thumbnail_mismatch: {
    level: "proof",
    kind: "consistency",
    means:
      "The EXIF thumbnail shows a different picture than the image: the image was changed after capture.",
  },
} as const satisfies CodeTable;

export const imageMetadataCheck = defineCheck({
  id: IMAGE_METADATA_CHECK_ID,
  codes: CODES,
  appliesTo: (doc) => doc.pdf !== undefined || doc.contentType.startsWith("image/"),
  async inspect(doc, ctx) {
    const { list, skipped } = await subjects(doc);
    if (list.length === 0) {
      return skip("The PDF embeds no photo-sized JPEG images, so there is no image metadata to read.");
    }
    const findings: Finding[] = [];
    for (const s of list) {
      if (ctx.signal?.aborted) break;
      findings.push(...(await inspect(s)));
    }
    const what = doc.pdf
      ? `${list.length} embedded JPEG image(s)${skipped ? ` (${skipped} more not read)` : ""}`
      : "the image";
    return { findings, what };
  },
  summary: ({ outcome, findings, what }) =>
    outcome === "pass"
      ? `The metadata of ${what} shows no image editing.`
      : `The metadata of ${what} shows editing: ${flaggedCodes(findings).join(", ")}.`,
});
