import { z } from "@hono/zod-openapi";
import { FAILURE_CODES } from "../../core/failure-codes.js";
import { API_STATUSES } from "../../core/phases.js";
import { normalizeRegion } from "../../core/regions.js";
import { OBJECT_NAME_RE } from "../../core/resource.js";
import { TRUST_LEVELS } from "../../core/check-result.js";
import { canonicalDocType, DOC_TYPE_ALIASES, DOC_TYPE_INPUTS } from "../../core/verdict.js";
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
      .openapi({ example: ["qr_present"] }),
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
      .openapi({ example: "https://example.com/statement.pdf" }),
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
      description:
        "`true` or `1` (any case) starts a sample run: needs the scope DocumentVerification:detections:create_sample " +
        "instead of detections:create, is not billable and counts against the client's sample allowance (429 beyond it).",
      example: "true",
    }),
});

export const DetectionIdParams = z.object({
  detection_id: z
    .string()
    .regex(OBJECT_NAME_RE, "Input should be a detection id such as det-01jd5x9q3m8w2v7k4c6b0n1r2t")
    .openapi({ param: { name: "detection_id", in: "path" }, example: "det-01jd5x9q3m8w2v7k4c6b0n1r2t" }),
});

export const LIST_DEFAULT_LIMIT = 50;
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
    .max(512)
    .optional()
    .openapi({ param: { name: "cursor", in: "query" }, description: "next_cursor of the previous page" }),
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
