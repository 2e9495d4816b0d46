import type { Finding } from "../../core/check-result.js";
import type { DocumentModel } from "../../document/model.js";
import { type JpegInfo, isJpeg, readJpeg, tablesFingerprint } from "../../document/pixels/jpeg-markers.js";
import { scanPdfImages } from "../../document/pdf-images.js";
import type { CodeTable } from "../../core/finding-levels.js";
import { defineCheck, flaggedCodes, skip } from "../check.js";

/**
 * jpeg.provenance: what the JPEG structure of an image document, and of every page-sized DCTDecode image of
 * a PDF, says about the software that saved it last — read from the segments, never re-encoded
 * (document/pixels/jpeg-markers.ts):
 * - jpeg_saved_by_editor: segments only an image editor writes into a photo or scan (Photoshop's image
 *   resources, "Save for Web"'s Ducky segment);
 * - page_tables_differ: in a PDF of scanned pages, one page's picture was compressed with other tables than
 *   all the others, which agree among themselves (a page replaced by one saved elsewhere);
 * - jpeg_trailing_data: a second image or other data after the end-of-image marker.
 * Provenance is an anomaly, never proof (severity ≤ 3): editors are also used innocently.
 */

export const JPEG_PROVENANCE_CHECK_ID = "jpeg.provenance";

const MIN_PAGE_IMAGE_SIDE = 600;

interface Subject {
  label: string;
  page?: number;
  info: JpegInfo;
}

async function subjects(doc: DocumentModel): Promise<Subject[]> {
  if (!doc.pdf) {
    if (!isJpeg(doc.bytes)) return [];
    try {
      return [{ label: "the image", info: readJpeg(doc.bytes) }];
    } catch {
      return [];
    }
  }
  const scan = await scanPdfImages(doc);
  const out: Subject[] = [];
  for (const img of scan.images) {
    if (img.filters.length !== 1 || img.filters[0] !== "DCTDecode") continue;
    if (Math.max(img.width, img.height) < MIN_PAGE_IMAGE_SIDE || !isJpeg(img.encoded)) continue;
    try {
      out.push({
        label: `the picture ${img.ref} on page ${img.pages[0]}`,
        page: img.pages[0],
        info: readJpeg(img.encoded),
      });
    } catch {
      // A stream that is no readable JPEG is pdf.structure's concern.
    }
    if (out.length >= 40) break;
  }
  return out;
}

export const CODES = {
  jpeg_saved_by_editor: {
    level: "anomaly",
    kind: "provenance",
    means: "The JPEG carries segments only image editors write (Photoshop resources, Save for Web).",
  },
  page_tables_differ: {
    level: "anomaly",
    kind: "provenance",
    means: "One scanned page's picture was compressed with other tables than all the other pages'.",
  },
  jpeg_trailing_data: {
    level: "note",
    kind: "structure",
    means: "Data (another picture) appended after the JPEG's end-of-image marker.",
  },
} as const satisfies CodeTable;

export const jpegProvenanceCheck = defineCheck({
  id: JPEG_PROVENANCE_CHECK_ID,
  codes: CODES,
  pixelsOnly: true,
  appliesTo: (doc) => doc.pdf !== undefined || doc.contentType === "image/jpeg",
  async inspect(doc) {
    const list = await subjects(doc);
    if (list.length === 0) return skip("There is no photo- or page-sized JPEG to read the structure of.");
    const findings: Finding[] = [];
    for (const s of list) {
      const where = s.page ? { page: s.page } : {};
      const editor = s.info.app.photoshop
        ? "Photoshop's image resources (APP13)"
        : s.info.app.ducky
          ? 'a "Save for Web" Ducky segment (APP12)'
          : undefined;
      if (editor) {
        findings.push({
          code: "jpeg_saved_by_editor",
          message: `${cap(s.label)} was last saved by an image editor: its file carries ${editor}, which scanners and cameras do not write.`,
          ...where,
          severity: 3,
          evidence: { kind: "provenance", markers: s.info.markers.slice(0, 12), quality: s.info.quality },
        });
      }
      if (s.info.trailingBytes > 1024) {
        findings.push({
          code: "jpeg_trailing_data",
          message: `${cap(s.label)} has ${s.info.trailingBytes} bytes after its end-of-image marker (another picture or data appended to the file).`,
          ...where,
          severity: 2,
          evidence: { kind: "structure", trailingBytes: s.info.trailingBytes },
        });
      }
    }
    // Pages of one scan share their tables; one page saved elsewhere does not.
    const pages = list.filter((s) => s.page !== undefined);
    if (pages.length >= 3) {
      const groups = new Map<string, Subject[]>();
      for (const s of pages) {
        const key = tablesFingerprint(s.info);
        groups.set(key, [...(groups.get(key) ?? []), s]);
      }
      const sorted = [...groups.values()].sort((a, b) => b.length - a.length);
      const major = sorted[0]!;
      if (major.length >= pages.length - 1 && sorted.length === 2) {
        const odd = sorted[1]![0]!;
        findings.push({
          code: "page_tables_differ",
          message: `The picture of page ${odd.page} was compressed with other quantisation tables (quality ${odd.info.quality?.quality}) than the pictures of the other ${major.length} pages (quality ${major[0]!.info.quality?.quality}), which all share theirs: that page was saved apart from the scan.`,
          page: odd.page,
          severity: 3,
          evidence: {
            kind: "provenance",
            quality: odd.info.quality,
            othersQuality: major[0]!.info.quality,
            otherPages: major.map((s) => s.page),
          },
        });
      }
    }
    return { findings, count: list.length };
  },
  summary: ({ outcome, findings, count }) =>
    outcome === "pass"
      ? `The JPEG structure of ${count > 1 ? `the ${count} pictures` : "the picture"} names no editor and agrees across pages.`
      : `The JPEG structure shows a later save: ${flaggedCodes(findings).join(", ")}.`,
});

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
