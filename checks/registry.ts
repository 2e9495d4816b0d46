import type { Check } from "./check.js";
import { fileTypeCheck } from "./file-type.js";
import { fontsConsistencyCheck } from "./fonts-consistency.js";
import { historyMatchesCheck } from "./history-matches/history-matches.js";
import { imageCaptureCheck } from "./image-capture/image-capture.js";
import { idBarcodeCheck } from "./id-barcode/id-barcode.js";
import { idMrzCheck } from "./id-mrz/id-mrz.js";
import { imageMetadataCheck } from "./image-metadata.js";
import { jpegProvenanceCheck } from "./jpeg-provenance/jpeg-provenance.js";
import { layoutOverlayCheck } from "./layout-overlay.js";
import { metadataDatesCheck } from "./metadata-dates/metadata-dates.js";
import { metadataProducerCheck } from "./metadata-producer/metadata-producer.js";
import { pdfRevisionsCheck } from "./pdf-revisions.js";
import { pdfStructureCheck } from "./pdf-structure.js";
import { pixelsAmountsCheck } from "./pixels-amounts/pixels-amounts.js";
import { pixelsCompressionCheck } from "./pixels-compression/pixels-compression.js";
import { pixelsGlyphsCheck } from "./pixels-glyphs/pixels-glyphs.js";
import { pixelsNoiseCheck } from "./pixels-noise/pixels-noise.js";
import { qrCodesCheck } from "./qr-codes/qr-codes.js";
import { signaturePdfCheck } from "./signature-pdf/signature-pdf.js";
import { textArithmeticCheck } from "./text-arithmetic/text-arithmetic.js";
import { textIdentifiersCheck } from "./text-identifiers.js";

/** The checks of scans and photos (issue 21): how a page image was captured and its pixel forensics. */
export const PIXEL_CHECKS: readonly Check[] = [
  imageCaptureCheck,
  jpegProvenanceCheck,
  pixelsCompressionCheck,
  pixelsNoiseCheck,
  pixelsGlyphsCheck,
  pixelsAmountsCheck,
];

/** Every check the check step runs, in order. Add a check here to run it. */
export const CHECKS: readonly Check[] = [
  fileTypeCheck,
  metadataDatesCheck,
  qrCodesCheck,
  imageMetadataCheck,
  pdfRevisionsCheck,
  pdfStructureCheck,
  signaturePdfCheck,
  metadataProducerCheck,
  fontsConsistencyCheck,
  layoutOverlayCheck,
  textArithmeticCheck,
  textIdentifiersCheck,
  ...PIXEL_CHECKS,
  idMrzCheck,
  idBarcodeCheck,
  historyMatchesCheck,
];
