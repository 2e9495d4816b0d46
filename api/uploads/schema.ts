import { z } from "@hono/zod-openapi";

export { UPLOAD_ID_RE } from "../../core/upload.js";

/** A media type (type/subtype) as RFC 6838 names them; parameters are not part of a declaration. */
const MEDIA_TYPE_PATTERN = "^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$";

/**
 * POST /v1/uploads of a deployment whose largest document is `maxDocumentBytes` (DOCVERIFY_MAX_DOCUMENT_BYTES):
 * size_bytes above it is refused by the validator, and the OpenAPI document shows it as `maximum`.
 */
export const createUploadBody = (maxDocumentBytes: number) =>
  z
    .strictObject({
      filename: z.string().min(1).max(255).optional().openapi({
        example: "statement.pdf",
        description:
          "The document's file name (a path is cut to its last part). Also settable by the PUT's Content-Disposition.",
      }),
      content_type: z
        .string()
        .max(255)
        .regex(new RegExp(MEDIA_TYPE_PATTERN), "Input should be a media type such as application/pdf")
        .optional()
        .openapi({
          example: "application/pdf",
          description:
            "The document's media type as the caller knows it. The service sniffs the real type from the bytes; " +
            "a declared type that differs is reported by the `file.type` check as a finding, not refused.",
        }),
      size_bytes: z
        .number()
        .int()
        .min(1)
        .max(maxDocumentBytes, {
          message: `Input should be less than or equal to ${maxDocumentBytes} (this deployment's maximum document size)`,
        })
        .optional()
        .openapi({
          example: Math.min(48213, maxDocumentBytes),
          description:
            "The document's exact size in bytes, at most the deployment's maximum document size (else 422). " +
            "`maximum` is this deployment's setting (DOCVERIFY_MAX_DOCUMENT_BYTES, default 52428800 = 50 MiB); " +
            "the document served by each deployment shows its own. " +
            "The PUT must then deliver exactly this many bytes: more → 413, fewer → 422.",
        }),
    })
    .openapi("CreateUploadRequest", {
      description: "Every field is optional; an empty body (or none) reserves an upload too.",
    });

export const UploadCreated = z
  .object({
    upload_id: z.string().openapi({ example: "upl-01jd5x9q3m8w2v7k4c6b0n1r2t" }),
    upload_url: z.string().openapi({ description: "PUT the document's bytes here; no bearer token needed" }),
    expires_in: z
      .number()
      .int()
      .openapi({ description: "Seconds the upload URL and reservation stay valid" }),
  })
  .openapi("UploadCreated");

export const UploadStored = z
  .object({ upload_id: z.string(), size_bytes: z.number().int() })
  .openapi("UploadStored");

export const UploadIdParams = z.object({
  upload_id: z.string().openapi({
    param: { name: "upload_id", in: "path" },
    pattern: "^upl-[0-9a-hjkmnp-tv-z]{26}$",
    example: "upl-01jd5x9q3m8w2v7k4c6b0n1r2t",
  }),
});

// Required for the URL to work, but validated by the handler: a missing or malformed one is the same 403 as
// a wrong signature (an upload URL is used exactly as POST /v1/uploads returned it).
export const UploadPutQuery = z.object({
  expires: z
    .string()
    .optional()
    .openapi({
      param: { name: "expires", in: "query", required: true },
      pattern: "^[0-9]{1,12}$",
      description: "When the URL expires (seconds since the epoch), as in upload_url",
      example: "1767225600",
    }),
  sig: z
    .string()
    .optional()
    .openapi({
      param: { name: "sig", in: "query", required: true },
      pattern: "^[0-9a-fA-F]{64}$",
      description: "The URL's signature (hex HMAC-SHA256), as in upload_url",
    }),
});

export { UploadReservation } from "../../core/upload.js";
