import { z } from "@hono/zod-openapi";
import { FAILURE_CODES } from "../../core/failure-codes.js";
import { API_STATUSES } from "../../core/phases.js";
import { normalizeRegion } from "../../core/regions.js";
import { OBJECT_NAME_RE } from "../../core/resource.js";
import { TRUST_LEVELS } from "../../core/check-result.js";
import { canonicalDocType, DOC_TYPE_ALIASES, DOC_TYPE_INPUTS } from "../../core/verdict.js";
import { IDEMPOTENCY_HEADER, idempotencyHeaderSchema } from "../idempotency.js";
import { UPLOAD_ID_RE } from "../uploads/schema.js";

export const AuthoritativeResult = z
  .object({
    check_id: z.string().openapi({ example: "signature.pdf" }),
    trust: z.enum(TRUST_LEVELS).nullable(),
    directive: z.string().nullable(),
  })
  .openapi("AuthoritativeResult");

export const PerCheckResult = z
  .object({
    check_id: z.string().openapi({ example: "metadata.dates" }),
    importance: z.number().int().min(0).max(10).nullable(),
    reasoning: z.string().nullable(),
  })
  .openapi("PerCheckResult");

export const VerdictResult = z
  .object({
    fraud_score: z.number().int(),
    document_type_match: z.boolean(),
    actual_doc_type: z.string().nullable(),
    reasoning: z.string().nullable(),
    per_check: z.array(PerCheckResult),
  })
  .openapi("VerdictResult");

const nullableString = z.string().nullable();

const ALIAS_LIST = Object.entries(DOC_TYPE_ALIASES)
  .map(([alias, type]) => `\`${alias}\` → \`${type}\``)
  .join(", ");

/**
 * The declared type: a canonical type or an alias of one (id_card, passport, driving_licence → id_document,
 * …), listed in the enum; the alias is replaced by its canonical type, which is stored and returned.
 */
export const DocTypeField = z
  .enum(DOC_TYPE_INPUTS)
  .transform(canonicalDocType)
  .openapi({
    example: "bank_statement",
    description: `The declared document type. Aliases are accepted and stored as their canonical type: ${ALIAS_LIST}.`,
  });

export const DetectionDetail = z
  .object({
    id: z.string().openapi({ example: "det-01jd5x9q3m8w2v7k4c6b0n1r2t" }),
    status: z.enum(API_STATUSES),
    failure_code: nullableString.openapi({
      description: `Reason for FAILED; null in every other state. One of: ${FAILURE_CODES.join(", ")}.`,
    }),
    failure_message: nullableString.openapi({ description: "One sentence explaining failure_code" }),
    score: z.number().int().nullable().openapi({
      description: "Fraud score 0-100; null while running and when one check alone decided the result",
    }),
    billable: z.boolean().openapi({ description: "False for sample runs and FAILED detections" }),
    created_at: z.string().openapi({ format: "date-time" }),
    completed_at: nullableString.openapi({ format: "date-time" }),
    submitted_by: nullableString,
    batch_id: nullableString,
    filename: nullableString,
    content_type: nullableString,
    size_bytes: z.number().int().nullable(),
    s3_key: nullableString.openapi({ description: "Object key of the stored document" }),
    discovered: z
      .array(z.string())
      .nullable()
      .openapi({
        description:
          "Facts found in the document, e.g. qr_present, mrz_present; duplicate_submission, seen_with_other_values and template_reuse when the tenant memory matched an earlier submission of the same tenant (docs/api.md, Tenant memory)",
        example: ["qr_present"],
      }),
    authoritative: AuthoritativeResult.nullable(),
    verdict: VerdictResult.nullable().openapi({
      description: "Null while running, when a check decided alone, and after the retention period",
    }),
    agent_error: nullableString,
    agent_run_id: nullableString,
  })
  .openapi("DetectionDetail");
export type DetectionDetail = z.infer<typeof DetectionDetail>;

const HTTP_URL_ERROR = "Input should be a valid URL with the http or https scheme";

export const CreateDetectionBody = z
  .strictObject({
    source_url: z
      .url({ protocol: /^https?$/, error: HTTP_URL_ERROR })
      .max(2048)
      .optional()
      .openapi({
        example: "https://example.com/statement.pdf",
        // The validator's protocol rule, for generated clients (a URL's scheme is case-insensitive).
        pattern: "^[Hh][Tt][Tt][Pp][Ss]?://.+$",
        description: "An http or https URL the service fetches the document from (at most 2048 characters)",
      }),
    upload_id: z
      .string()
      .regex(UPLOAD_ID_RE, "Input should be an upload id returned by POST /v1/uploads (upl-<26 characters>)")
      .optional()
      .openapi({ example: "upl-01jd5x9q3m8w2v7k4c6b0n1r2t" }),
    doc_type: DocTypeField,
    region: z
      .string()
      .refine((v) => normalizeRegion(v) !== undefined, {
        message: "Input should be an ISO 3166-1 alpha-2 region code such as US, GB or DE",
      })
      .openapi({
        example: "US",
        pattern: "^[A-Za-z]{2}$",
        description: "ISO 3166-1 alpha-2 (an assigned code), any case; stored upper-case",
      }),
  })
  .superRefine((b, ctx) => {
    const given = [b.source_url, b.upload_id].filter((v) => v !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({
        code: "custom",
        path: [],
        message:
          given === 0
            ? "Provide exactly one of source_url or upload_id; neither was given"
            : "Provide exactly one of source_url or upload_id, not both",
      });
    }
  })
  .openapi("CreateDetectionRequest", {
    // "Exactly one of source_url or upload_id" as JSON Schema: each alternative requires one of them, and
    // oneOf fails when both or neither match. The alternatives name their property's type so generators
    // (openapi-typescript) emit `{source_url: string} | {upload_id: string}` rather than `unknown`.
    oneOf: [
      { type: "object", required: ["source_url"], properties: { source_url: { type: "string" } } },
      { type: "object", required: ["upload_id"], properties: { upload_id: { type: "string" } } },
    ],
    description:
      "Exactly one of source_url or upload_id, plus doc_type and region. Unknown fields are rejected with 422 " +
      "(extra_forbidden) so that a misspelt field never passes silently.",
  });

/** Header name as documented; zod-openapi matches header keys case-insensitively. */
export const SAMPLE_HEADER = "X-Sample-Run";
const SAMPLE_VALUES = ["true", "1", "false", "0"];
/** SAMPLE_VALUES in any case, as a pattern (HTTP strips the whitespace around a header value). */
const SAMPLE_PATTERN = "^([Tt][Rr][Uu][Ee]|1|[Ff][Aa][Ll][Ss][Ee]|0)$";

/** The X-Sample-Run value as a decision: true/1 → sample, false/0/absent → normal, else undefined. */
export function parseSampleHeader(value: string | undefined): boolean | undefined {
  if (value === undefined) return false;
  const v = value.trim().toLowerCase();
  if (v === "true" || v === "1") return true;
  if (v === "false" || v === "0") return false;
  return undefined;
}

export const CreateDetectionHeaders = z.object({
  [SAMPLE_HEADER]: z
    .string()
    .refine((v) => SAMPLE_VALUES.includes(v.trim().toLowerCase()), {
      message: "X-Sample-Run must be true, 1, false or 0 (any case)",
    })
    .optional()
    .openapi({
      pattern: SAMPLE_PATTERN,
      description:
        "`true` or `1` (any case) starts a sample run: needs the scope DocumentVerification:detections:create_sample " +
        "instead of detections:create, is not billable and counts against the client's sample allowance (429 beyond it).",
      example: "true",
    }),
  [IDEMPOTENCY_HEADER]: idempotencyHeaderSchema,
});

export const DetectionIdParams = z.object({
  detection_id: z
    .string()
    .regex(OBJECT_NAME_RE, "Input should be a detection id such as det-01jd5x9q3m8w2v7k4c6b0n1r2t")
    .openapi({ param: { name: "detection_id", in: "path" }, example: "det-01jd5x9q3m8w2v7k4c6b0n1r2t" }),
});

export const LIST_DEFAULT_LIMIT = 50;
/** A next_cursor is base64url (api/detections/list.ts encodeCursor). */
export const CURSOR_RE = /^[A-Za-z0-9_-]+$/;
export const CURSOR_MESSAGE = "Input should be a next_cursor value returned by a previous list call";
export const LIST_MAX_LIMIT = 200;

export const ListDetectionsQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(LIST_MAX_LIMIT)
    .default(LIST_DEFAULT_LIMIT)
    .openapi({ param: { name: "limit", in: "query" }, example: 50 }),
  cursor: z
    .string()
    .min(1)
    .max(512)
    .regex(CURSOR_RE, CURSOR_MESSAGE)
    .optional()
    .openapi({
      param: { name: "cursor", in: "query" },
      description: "next_cursor of the previous page, as it was (opaque, base64url)",
    }),
  status: z
    .enum(API_STATUSES)
    .optional()
    .openapi({ param: { name: "status", in: "query" } }),
  batch_id: z
    .string()
    .min(1)
    .max(253)
    .optional()
    .openapi({ param: { name: "batch_id", in: "query" } }),
});

export const DetectionList = z
  .object({
    items: z.array(DetectionDetail),
    next_cursor: z.string().nullable().openapi({ description: "Opaque; null on the last page" }),
  })
  .openapi("DetectionList");

export const DeletedDetection = z
  .object({ id: z.string(), deleted: z.literal(true) })
  .openapi("DeletedDetection");

/** The 422 of a malformed detection id, as the documentation's example. */
export const DETECTION_ID_422 = {
  loc: ["path", "detection_id"],
  msg: "Input should be a detection id such as det-01jd5x9q3m8w2v7k4c6b0n1r2t",
  type: "string_pattern_mismatch",
  input: "DET_01",
};

// ---------------------------------------------------------------------------------------------
// Evidence (GET /v1/detection/{detection_id}/evidence; docs/evidence.md)
// ---------------------------------------------------------------------------------------------

const Box = z.array(z.number()).length(4);
const BBOX_DESCRIPTION =
  "[x0, y0, x1, y1] in the page's own units: PDF points with the origin at the bottom left of the page's " +
  "user space for PDFs, pixels with the origin at the top left for image documents";
const FRACTION_DESCRIPTION =
  "[left, top, right, bottom] as fractions (0-1) of the page as displayed (after its rotation), origin top " +
  "left like image pixels: multiply by an image's width and height to draw on it";

export const EvidenceFindingResult = z
  .object({
    id: z.string().openapi({
      example: "fnd-3b1f0c9a7d2e4f60",
      description: "Stable: derived from the detection, the check, the code and the place",
    }),
    check_id: z.string().openapi({ example: "layout.overlay" }),
    code: z.string().openapi({ example: "text_covered_and_replaced" }),
    severity: z.number().int().min(0).max(10),
    message: z.string(),
    page: z.number().int().nullable(),
    bbox: Box.nullable().openapi({ description: BBOX_DESCRIPTION }),
    bbox_fraction: Box.nullable().openapi({ description: FRACTION_DESCRIPTION }),
    evidence: z.record(z.string(), z.unknown()).nullable().openapi({
      description: "The values the check compared (small: strings ≤ 200 characters, ≤ 1 KB in all)",
    }),
    before: z
      .string()
      .nullable()
      .openapi({ description: "The value before the change, when the finding is a changed value" }),
    after: z.string().nullable().openapi({ description: "The value after the change" }),
    group: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Number of the group it belongs to (drawn on the page)" }),
  })
  .openapi("EvidenceFinding");

export const EvidenceGroupResult = z
  .object({
    number: z
      .number()
      .int()
      .openapi({ example: 1, description: "1 = strongest; the number drawn beside its boxes" }),
    id: z.string().openapi({ example: "grp-8c41a0d2e95b7f13" }),
    headline: z.string().openapi({ example: "Net pay £5,374.16 → £5,399.16, page 1" }),
    severity: z.number().int().min(0).max(10),
    pages: z.array(z.number().int()),
    regions: z.array(
      z.object({
        page: z.number().int(),
        bbox: Box.openapi({ description: BBOX_DESCRIPTION }),
        bbox_fraction: Box.nullable().openapi({ description: FRACTION_DESCRIPTION }),
      }),
    ),
    before: z.string().nullable(),
    after: z.string().nullable(),
    finding_ids: z.array(z.string()).openapi({ description: "Its findings, strongest first (at most 20)" }),
    finding_count: z.number().int(),
    checks: z
      .array(z.object({ check_id: z.string(), code: z.string(), severity: z.number().int() }))
      .openapi({ description: "The checks that found it (each code once)" }),
  })
  .openapi("EvidenceGroup");

export const EvidencePageResult = z
  .object({
    number: z.number().int(),
    width: z
      .number()
      .nullable()
      .openapi({ description: "As displayed, in the page's units (points for PDFs)" }),
    height: z.number().nullable(),
    rotate: z.number().int(),
    finding_count: z.number().int(),
    groups: z.array(z.number().int()),
    image_url: z.string().nullable().openapi({
      description:
        "The page rendered with its groups' boxes drawn and numbered (needs the same bearer token)",
    }),
    image_width: z.number().int().nullable(),
    image_height: z.number().int().nullable(),
    first_saved_url: z.string().nullable().openapi({
      description:
        "For a page an incremental update changed: the page as first saved, changed regions marked",
    }),
    first_saved_revision: z.number().int().nullable(),
    not_rendered: z.enum(["page_cap", "byte_cap", "time", "error", "unavailable"]).nullable().openapi({
      description: "Why a page with findings has no image (a bound of the deployment, or an error)",
    }),
  })
  .openapi("EvidencePage");

export const EvidenceResult = z
  .object({
    id: z.string().openapi({ example: "det-01jd5x9q3m8w2v7k4c6b0n1r2t" }),
    status: z.enum(API_STATUSES),
    findings: z.array(EvidenceFindingResult).nullable().openapi({
      description:
        "Every finding, strongest first, at most 400 (findings_total counts all). Null before COMPLETED and after the retention period",
    }),
    findings_total: z.number().int().nullable(),
    groups: z.array(EvidenceGroupResult).nullable().openapi({
      description: "Findings of the same altered value or region merged, strongest first, at most 60",
    }),
    groups_total: z.number().int().nullable(),
    pages: z
      .object({
        count: z.number().int().nullable().openapi({ description: "Pages of the document" }),
        items: z.array(EvidencePageResult).openapi({ description: "The pages that carry findings" }),
      })
      .nullable(),
    checks: z
      .array(
        z.object({
          check_id: z.string(),
          outcome: z.string(),
          severity: z.number().int(),
          summary: z.string(),
          finding_count: z.number().int(),
        }),
      )
      .nullable(),
    render: z
      .object({
        dpi: z.number(),
        max_side_px: z.number().int(),
        max_images: z.number().int(),
        max_bytes: z.number().int(),
        images: z.number().int(),
        bytes: z.number().int(),
        notes: z.array(z.string()),
      })
      .nullable()
      .openapi({ description: "How the pages were rendered and what was left out" }),
    review_url: z
      .string()
      .nullable()
      .openapi({
        description:
          "A short-lived link to the reviewer page (no bearer token needed; DOCVERIFY_REVIEW_LINK_TTL_SECONDS, " +
          "default 900). Null before COMPLETED",
      }),
    review_url_expires_at: z.string().nullable().openapi({ format: "date-time" }),
  })
  .openapi("DetectionEvidence");
export type EvidenceResult = z.infer<typeof EvidenceResult>;

/** A page image's file name: `<page>.png`, or `<page>-first-saved.png` for the page as first saved. */
export const PAGE_FILE_RE = /^([1-9][0-9]{0,4})(-first-saved)?\.png$/;

export const EvidencePageParams = DetectionIdParams.extend({
  file: z
    .string()
    .regex(PAGE_FILE_RE, "Input should be a page image name such as 1.png or 1-first-saved.png")
    .openapi({ param: { name: "file", in: "path" }, example: "1.png" }),
});

export const PAGE_FILE_422 = {
  loc: ["path", "file"],
  msg: "Input should be a page image name such as 1.png or 1-first-saved.png",
  type: "string_pattern_mismatch",
  input: "page-1.jpg",
};
