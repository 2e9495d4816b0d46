import { createHash } from "node:crypto";
import { keys, type PrepareResult, type StepInput } from "../core/detection.js";
import { failure } from "../core/failure-codes.js";
import { type ObjectInfo, ObjectNotFoundError } from "../core/ports.js";
import type { StepContext } from "../core/step-context.js";
import { readUploadReservation } from "../core/upload.js";
import { sniffContentType } from "./content-sniff.js";
import { filenameFromContentDisposition, filenameFromKey, filenameFromUrl } from "./filename.js";
import { SourceError, safeFetch } from "./safe-fetch.js";

/**
 * The prepare step: gets the document from its source (URL through the SSRF guard, an upload, or an
 * object in a client's bucket), sniffs its real content type, and stores it in the service bucket at
 * `keys.document(detection, filename)`. Every expected failure is a value (`failure`); only
 * infrastructure errors (object store down) are thrown, so the step is retried.
 */

interface Fetched {
  bytes: Buffer;
  filename: string | null;
  /** The content type the caller declared (an upload's content_type), compared by the file.type check. */
  declaredContentType?: string;
}

class PrepareFailure extends Error {
  override name = "PrepareFailure";
  constructor(
    readonly code: Parameters<typeof failure>[0],
    message: string,
  ) {
    super(message);
  }
}

/** Object store errors that mean "no such object or bucket" rather than "store unavailable". */
function isMissing(err: unknown): boolean {
  if (err instanceof ObjectNotFoundError) return true;
  const code = (err as { code?: unknown })?.code;
  return (
    typeof code === "string" &&
    ["NoSuchBucket", "NoSuchKey", "NotFound", "InvalidBucketName", "InvalidKey"].includes(code)
  );
}

async function fromUrl(url: string, ctx: StepContext): Promise<Fetched> {
  const res = await safeFetch(url, {
    allowPrivate: ctx.config.allowPrivateSources,
    allowedPorts: ctx.config.allowedSourcePorts,
    allowAddresses: ctx.config.allowedPrivateAddresses,
    timeoutMs: ctx.config.downloadTimeoutSeconds * 1000,
    maxBytes: ctx.config.maxDocumentBytes,
  });
  const filename =
    filenameFromContentDisposition(res.headers["content-disposition"]) ?? filenameFromUrl(res.finalUrl);
  return { bytes: res.body, filename };
}

async function readObject(
  ctx: StepContext,
  bucket: string,
  key: string,
  what: string,
): Promise<{ bytes: Buffer; info: ObjectInfo }> {
  try {
    const info = await ctx.objects.stat(bucket, key);
    if (!info) throw new PrepareFailure("upload_not_found", `${what} does not exist.`);
    if (info.size > ctx.config.maxDocumentBytes) {
      throw new PrepareFailure(
        "source_too_large",
        `${what} holds ${info.size} bytes, more than the limit of ${ctx.config.maxDocumentBytes}.`,
      );
    }
    return { bytes: await ctx.objects.get(bucket, key), info };
  } catch (err) {
    if (err instanceof PrepareFailure) throw err;
    if (isMissing(err)) throw new PrepareFailure("upload_not_found", `${what} does not exist.`);
    throw err;
  }
}

async function fromUpload(uploadId: string, input: StepInput, ctx: StepContext): Promise<Fetched> {
  const what = `The upload ${uploadId}`;
  let read: Awaited<ReturnType<typeof readUploadReservation>>;
  try {
    read = await readUploadReservation(ctx.objects, ctx.bucket, uploadId);
  } catch (err) {
    if (isMissing(err))
      throw new PrepareFailure("upload_not_found", `${what} was never reserved or has been removed.`);
    throw err;
  }
  if (read.kind === "missing")
    throw new PrepareFailure("upload_not_found", `${what} was never reserved or has been removed.`);
  if (read.kind === "invalid")
    throw new PrepareFailure("upload_not_found", `${what} has unreadable metadata.`);
  const meta = read.value;
  if (meta.client_id !== input.spec.submittedBy) {
    // The API checks this at create time; checked again so a forged spec cannot read another client's file.
    throw new PrepareFailure("upload_not_found", `${what} belongs to another client.`);
  }
  if (meta.detection !== undefined && meta.detection !== input.detection) {
    // An upload starts one detection only: the one its reservation names (a hand-made or racing one fails).
    throw new PrepareFailure("upload_not_found", `${what} was used by detection ${meta.detection}.`);
  }
  const { bytes, info } = await readObject(ctx, ctx.bucket, keys.upload(uploadId), what);
  if (bytes.length === 0)
    throw new PrepareFailure("upload_not_found", `${what} is empty; no file was uploaded.`);
  const changed =
    meta.detection !== undefined &&
    ((meta.size > 0 && bytes.length !== meta.size) ||
      (meta.document_modified_at !== undefined &&
        info.lastModified.toISOString() !== meta.document_modified_at));
  if (changed) {
    // The claim recorded the document the detection was created from (a presigned PUT can still replace it).
    throw new PrepareFailure("upload_not_found", `${what} was replaced after the detection was created.`);
  }
  return {
    bytes,
    filename: meta.filename ? (filenameFromKey(meta.filename) ?? null) : null,
    ...(meta.content_type ? { declaredContentType: meta.content_type } : {}),
  };
}

async function fromObject(source: { bucket: string; key: string }, ctx: StepContext): Promise<Fetched> {
  const what = `The object ${source.key} in bucket ${source.bucket}`;
  const { bytes } = await readObject(ctx, source.bucket, source.key, what);
  return { bytes, filename: filenameFromKey(source.key) };
}

export async function runPrepareStep(input: StepInput, ctx: StepContext): Promise<PrepareResult> {
  const log = ctx.log.child({ detection: input.detection, step: "prepare" });
  const source = input.spec.source;
  const started = performance.now();
  let fetched: Fetched;
  try {
    if (source.url !== undefined) {
      log.info({ url: source.url }, "downloading the document");
      fetched = await fromUrl(source.url, ctx);
    } else if (source.uploadId !== undefined) {
      log.info({ uploadId: source.uploadId }, "reading the uploaded document");
      fetched = await fromUpload(source.uploadId, input, ctx);
    } else if (source.object !== undefined) {
      log.info(
        { bucket: source.object.bucket, key: source.object.key },
        "copying the document from its bucket",
      );
      fetched = await fromObject(source.object, ctx);
    } else {
      throw new PrepareFailure("internal_error", "The detection names no document source.");
    }
  } catch (err) {
    if (err instanceof SourceError || err instanceof PrepareFailure) {
      log.warn({ code: err.code, reason: err.message }, "the document could not be obtained");
      return { step: "prepare", failure: failure(err.code) };
    }
    throw err;
  }

  const { contentType, detected } = await sniffContentType(fetched.bytes);
  if (!contentType) {
    log.warn(
      { detected: detected ?? "unknown", size: fetched.bytes.length },
      "the document is not a supported type",
    );
    return { step: "prepare", failure: failure("unsupported_content_type") };
  }

  const key = keys.document(input.detection, fetched.filename);
  const sha256 = createHash("sha256").update(fetched.bytes).digest("hex");
  // A retry may have stored a copy under another name before crashing: keep exactly one document.
  for await (const obj of ctx.objects.list(ctx.bucket, keys.documentPrefix(input.detection))) {
    if (obj.key !== key) await ctx.objects.delete(ctx.bucket, obj.key);
  }
  await ctx.objects.put(ctx.bucket, key, fetched.bytes, { contentType, metadata: { sha256 } });
  log.info(
    {
      key,
      contentType,
      sizeBytes: fetched.bytes.length,
      filename: fetched.filename,
      ms: Math.round(performance.now() - started),
    },
    "document stored",
  );
  return {
    step: "prepare",
    document: {
      filename: fetched.filename,
      contentType,
      sizeBytes: fetched.bytes.length,
      key,
      sha256,
      ...(fetched.declaredContentType ? { declaredContentType: fetched.declaredContentType } : {}),
    },
  };
}
