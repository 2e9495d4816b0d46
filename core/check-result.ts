import { z } from "zod";
import { EVIDENCE_KINDS } from "./finding-levels.js";

/** Facts a check can report as discovered (DetectionDetail.discovered). */
export const DISCOVERED_FACTS = [
  "qr_present",
  "signature_present",
  "encrypted",
  "javascript_present",
  "embedded_files",
  "scanned",
  "form_fields",
  "incremental_updates",
  "metadata_present",
  "xmp_present",
  // How an image page was captured (image.capture; docs/api.md "Capture classes").
  "capture_camera_photo",
  "capture_flatbed_scan",
  "capture_scanning_app",
  "capture_screenshot",
  "capture_messenger",
  "capture_pasted_image",
  "mrz_present",
  "barcode_present",
] as const;

export const TRUST_LEVELS = ["corroborated", "unverified", "unattested"] as const;
export type Trust = (typeof TRUST_LEVELS)[number];

export const Finding = z.object({
  /** Stable machine code, e.g. `modified_before_created`. */
  code: z.string(),
  /** One sentence a reviewer can read: what was found, where, and why it matters. */
  message: z.string(),
  /** 1-based page number, when the finding is on a page. */
  page: z.number().int().positive().optional(),
  /** [x0, y0, x1, y1] in PDF user-space points of the page, when known. */
  bbox: z.array(z.number()).length(4).optional(),
  /** The evidence: the values that were compared (free-form, small). */
  evidence: z.record(z.string(), z.unknown()).optional(),
  /** How strongly this finding alone suggests tampering, 0-10 (levels: core/finding-levels.ts). */
  severity: z.number().int().min(0).max(10).optional(),
  /**
   * The kind of evidence (core/finding-levels.ts), stamped by the check step from the check's code table;
   * absent on results stored before code tables existed.
   */
  kind: z.enum(EVIDENCE_KINDS).optional(),
});
export type Finding = z.infer<typeof Finding>;

export const CheckOutcome = z.enum(["pass", "flag", "skip", "error"]);
export type CheckOutcome = z.infer<typeof CheckOutcome>;

export const CheckResult = z.object({
  checkId: z.string(),
  outcome: CheckOutcome,
  /** 0-10: how strongly the check's findings together suggest tampering (0 for pass/skip/error). */
  severity: z.number().int().min(0).max(10),
  /** One sentence. */
  summary: z.string(),
  findings: z.array(Finding),
  discovered: z.array(z.string()).optional(),
  authoritative: z.object({ trust: z.enum(TRUST_LEVELS), directive: z.string() }).optional(),
  durationMs: z.number().optional(),
  /** The version of the check that made this result (checks/check.ts, checkVersion); absent on older results. */
  version: z.string().optional(),
});
export type CheckResult = z.infer<typeof CheckResult>;
