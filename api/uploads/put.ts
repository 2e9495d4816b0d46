import { Readable } from "node:stream";
import { type OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { keys } from "../../core/detection.js";
import type { AppEnv } from "../deps.js";
import { ApiError, invalid } from "../errors.js";
import { ErrorResponse, jsonResponse } from "../schema.js";
import { readReservation, uploadNotFound, writeReservation } from "./reservation.js";
import { UPLOAD_ID_RE, UploadIdParams, UploadPutQuery, UploadStored } from "./schema.js";
import { checkUploadSignature } from "./signing.js";

export const putUploadRoute = createRoute({
  method: "put",
  path: "/uploads/{upload_id}",
  tags: ["uploads"],
  summary: "Upload the document's bytes to a signed upload URL",
  description:
    "The URL comes from POST /v1/uploads and authorises itself (`expires` and `sig`); no bearer token. " +
    "The body is the raw file. A Content-Disposition filename, when given, names the document.",
  request: {
    params: UploadIdParams,
    query: UploadPutQuery,
    body: {
      content: {
        "application/octet-stream": { schema: z.string().openapi({ type: "string", format: "binary" }) },
      },
    },
  },
  responses: {
    200: jsonResponse(UploadStored, "The document is stored"),
    403: jsonResponse(ErrorResponse, "The signature is invalid or the URL has expired"),
    404: jsonResponse(ErrorResponse, "The upload no longer exists"),
    413: jsonResponse(ErrorResponse, "The document is larger than the deployment's maximum"),
  },
});

/** The filename of a Content-Disposition header (RFC 6266: filename* wins over filename). */
export function dispositionFilename(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const star = /filename\*\s*=\s*(?:UTF-8|ISO-8859-1)?'[^']*'([^;]+)/i.exec(header);
  if (star) {
    try {
      return decodeURIComponent(star[1]!.trim());
    } catch {
      // fall through to the plain parameter
    }
  }
  const quoted = /(?:^|;)\s*filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header);
  if (quoted) return quoted[1]!.replace(/\\(.)/g, "$1");
  const plain = /(?:^|;)\s*filename\s*=\s*([^;\s]+)/i.exec(header);
  return plain?.[1];
}

/** The last path component, at most 255 characters (the prepare step sanitises it for object keys). */
const baseName = (name: string) => (name.split(/[\\/]/).pop() || "document").slice(0, 255);

const tooLarge = (max: number) =>
  new ApiError(
    413,
    "document_too_large",
    `The document is larger than this deployment's maximum of ${max} bytes.`,
  );

async function* limited(body: AsyncIterable<Uint8Array>, max: number): AsyncGenerator<Buffer> {
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > max) throw tooLarge(max);
    yield Buffer.from(chunk);
  }
}

export function registerPutUpload(app: OpenAPIHono<AppEnv>): void {
  app.openapi(putUploadRoute, async (c) => {
    const { objects, bucket, config, clock, tokens } = c.var.deps;
    const { upload_id: id } = c.req.valid("param");
    const { expires, sig } = c.req.valid("query");
    const now = clock.now();
    const check = UPLOAD_ID_RE.test(id)
      ? checkUploadSignature(id, expires, sig, Math.floor(now.getTime() / 1000), tokens.hmac)
      : "invalid";
    if (check === "invalid") {
      throw new ApiError(
        403,
        "invalid_signature",
        "The upload URL's signature is not valid; use the upload_url exactly as POST /v1/uploads returned it.",
      );
    }
    if (check === "expired") {
      throw new ApiError(
        403,
        "url_expired",
        "The upload URL has expired; create a new upload with POST /v1/uploads.",
      );
    }
    const reservation = await readReservation(objects, bucket, id);
    if (!reservation) throw uploadNotFound();
    const max = config.maxDocumentBytes;
    const declared = Number(c.req.header("content-length"));
    if (Number.isFinite(declared) && declared > max) throw tooLarge(max);
    const body = c.req.raw.body;
    if (!body || declared === 0)
      throw invalid(["body"], "The upload is empty; send the document's bytes.", "missing");
    const contentType = c.req.header("content-type");
    const key = keys.upload(id);
    let size: number;
    try {
      ({ size } = await objects.put(
        bucket,
        key,
        Readable.from(limited(body as unknown as AsyncIterable<Uint8Array>, max)),
        contentType ? { contentType } : undefined,
      ));
    } catch (err) {
      // A partial or refused document must not stay behind: the upload reads as empty until a good PUT.
      await objects.delete(bucket, key).catch(() => undefined);
      await writeReservation(objects, bucket, id, { ...reservation, size: 0 });
      throw err;
    }
    if (size === 0) {
      await objects.delete(bucket, key);
      await writeReservation(objects, bucket, id, { ...reservation, size: 0 });
      throw invalid(["body"], "The upload is empty; send the document's bytes.", "missing");
    }
    const filename = dispositionFilename(c.req.header("content-disposition"));
    await writeReservation(objects, bucket, id, {
      ...reservation,
      size,
      filename: filename ? baseName(filename) : reservation.filename,
      content_type:
        contentType && contentType !== "application/octet-stream" ? contentType : reservation.content_type,
    });
    return c.json({ upload_id: id, size_bytes: size }, 200);
  });
}
