import { Readable } from "node:stream";
import { type OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { keys } from "../../core/detection.js";
import type { AppEnv } from "../deps.js";
import { ApiError, invalid } from "../errors.js";
import { errorJson, jsonResponse, validationJson } from "../schema.js";
import { readReservation, uploadAlreadyUsed, uploadNotFound, writeReservation } from "./reservation.js";
import { UPLOAD_ID_RE, UploadIdParams, UploadPutQuery, UploadStored } from "./schema.js";
import { decodeTime } from "ulid";
import { clientStillTrusts } from "../auth/credential-binding.js";

const REVOKED_UPLOAD_MESSAGE =
  "The client that created this upload URL is no longer registered as it was then; its upload URLs accept no documents. Get a token for a registered client and create a new upload with POST /v1/uploads.";
import { checkUploadSignature } from "./signing.js";

export const putUploadRoute = createRoute({
  method: "put",
  path: "/uploads/{upload_id}",
  tags: ["uploads"],
  summary: "Upload the document's bytes to a signed upload URL",
  description:
    "The URL comes from POST /v1/uploads and authorises itself (`expires` and `sig`); no bearer token. " +
    "The body is the raw file. A Content-Disposition filename, when given, names the document. When the upload " +
    "declared `size_bytes`, the body must have exactly that size (more: 413, fewer: 422). A second PUT replaces " +
    "the document until a detection is created from the upload; after that the upload is frozen (409).",
  operationId: "uploadDocument",
  security: [],
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
    403: errorJson(
      "The signature is invalid, the URL has expired, or the client that created it was removed since",
      [
        "The upload URL's signature is not valid; use the upload_url exactly as POST /v1/uploads returned it.",
        "The upload URL has expired; create a new upload with POST /v1/uploads.",
        REVOKED_UPLOAD_MESSAGE,
      ],
    ),
    404: errorJson("The upload no longer exists (it expired unused, or went with its detection)", [
      "Upload not found; create a new one with POST /v1/uploads.",
    ]),
    409: errorJson("A detection was already created from this upload; it accepts no further PUT", [
      "This upload already started detection det-01jd5x9q3m8w2v7k4c6b0n1r2t and cannot be changed; create a new upload with POST /v1/uploads for another document.",
    ]),
    413: errorJson("The document is larger than the declared size_bytes or the deployment's maximum", [
      "The document is larger than the 48213 bytes declared (size_bytes) for this upload.",
      "The document is larger than this deployment's maximum of 52428800 bytes.",
    ]),
    422: validationJson("The body is empty, or smaller than the declared size_bytes", [
      {
        loc: ["body"],
        msg: "The document has 1024 bytes but the upload declared size_bytes 48213; send the whole file.",
        type: "upload_size_mismatch",
      },
    ]),
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

/** The largest body a PUT may send: the declared size when there is one, else the deployment's maximum. */
interface SizeLimit {
  max: number;
  declared: number | null;
}

const tooLarge = (limit: SizeLimit) =>
  new ApiError(
    413,
    "document_too_large",
    limit.declared !== null && limit.declared <= limit.max
      ? `The document is larger than the ${limit.declared} bytes declared (size_bytes) for this upload.`
      : `The document is larger than this deployment's maximum of ${limit.max} bytes.`,
  );

const sizeMismatch = (size: number, declared: number) =>
  invalid(
    ["body"],
    `The document has ${size} bytes but the upload declared size_bytes ${declared}; send the whole file.`,
    "upload_size_mismatch",
  );

async function* limited(body: AsyncIterable<Uint8Array>, limit: SizeLimit): AsyncGenerator<Buffer> {
  const cap = Math.min(limit.max, limit.declared ?? limit.max);
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > cap) throw tooLarge(limit);
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
    const size = await c.var.uploadLocks(id, async () => {
      const reservation = await readReservation(objects, bucket, id);
      if (!reservation) throw uploadNotFound();
      // A removed client's upload URLs stop working (the upload id's ULID is the time it was reserved).
      if (!clientStillTrusts(c.var.deps, reservation.client_id, decodeTime(id.slice(4).toUpperCase()))) {
        throw new ApiError(403, "client_revoked", REVOKED_UPLOAD_MESSAGE);
      }
      if (reservation.detection !== undefined) throw uploadAlreadyUsed(reservation.detection);
      const limit: SizeLimit = { max: config.maxDocumentBytes, declared: reservation.size_bytes };
      const cap = Math.min(limit.max, limit.declared ?? limit.max);
      const length = Number(c.req.header("content-length") ?? Number.NaN);
      if (Number.isFinite(length) && length > cap) throw tooLarge(limit);
      const body = c.req.raw.body;
      if (!body || length === 0)
        throw invalid(["body"], "The upload is empty; send the document's bytes.", "missing");
      if (Number.isFinite(length) && limit.declared !== null && length < limit.declared)
        throw sizeMismatch(length, limit.declared);
      const contentType = c.req.header("content-type");
      const key = keys.upload(id);
      /** A partial or refused document must not stay behind: the upload reads as empty until a good PUT. */
      const discard = async () => {
        await objects.delete(bucket, key).catch(() => undefined);
        await writeReservation(objects, bucket, id, { ...reservation, size: 0 });
      };
      let stored: number;
      try {
        ({ size: stored } = await objects.put(
          bucket,
          key,
          Readable.from(limited(body as unknown as AsyncIterable<Uint8Array>, limit)),
          contentType ? { contentType } : undefined,
        ));
      } catch (err) {
        await discard();
        throw err;
      }
      if (stored === 0) {
        await discard();
        throw invalid(["body"], "The upload is empty; send the document's bytes.", "missing");
      }
      if (limit.declared !== null && stored !== limit.declared) {
        await discard();
        throw sizeMismatch(stored, limit.declared);
      }
      // The PUT's Content-Type is not a declaration (curl sends a form type by default): only the
      // content_type given to POST /v1/uploads is compared with the real type.
      const filename = dispositionFilename(c.req.header("content-disposition"));
      await writeReservation(objects, bucket, id, {
        ...reservation,
        size: stored,
        filename: filename ? baseName(filename) : reservation.filename,
      });
      return stored;
    });
    return c.json({ upload_id: id, size_bytes: size }, 200);
  });
}
