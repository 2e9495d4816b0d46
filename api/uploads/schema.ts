import { z } from "@hono/zod-openapi";

/** Upload ids: `upl-` + a lowercase ULID. */
export const UPLOAD_ID_RE = /^upl-[0-9a-hjkmnp-tv-z]{26}$/;

export const CreateUploadBody = z
  .strictObject({
    filename: z.string().min(1).max(255).optional().openapi({ example: "statement.pdf" }),
    content_type: z
      .string()
      .max(255)
      .regex(/^[\w.+-]+\/[\w.+-]+$/, "Input should be a media type such as application/pdf")
      .optional()
      .openapi({ example: "application/pdf" }),
  })
  .openapi("CreateUploadRequest");

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
  upload_id: z.string().openapi({ param: { name: "upload_id", in: "path" } }),
});

export const UploadPutQuery = z.object({
  expires: z
    .string()
    .optional()
    .openapi({ param: { name: "expires", in: "query" } }),
  sig: z
    .string()
    .optional()
    .openapi({ param: { name: "sig", in: "query" } }),
});

/** The reservation JSON stored at keys.uploadMeta(id). */
export const UploadReservation = z.object({
  client_id: z.string(),
  filename: z.string().nullable(),
  content_type: z.string().nullable(),
  expires_at: z.string(),
  size: z.number().int().nonnegative(),
});
export type UploadReservation = z.infer<typeof UploadReservation>;
