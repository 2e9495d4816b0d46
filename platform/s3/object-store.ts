import type { Readable } from "node:stream";
import { Client, type ClientOptions, InvalidBucketNameError } from "minio";
import { type ObjectInfo, ObjectNotFoundError, type ObjectStore, type PutOptions } from "../../core/ports.js";
import { isValidS3BucketName, parseS3Endpoint, type S3ObjectStoreOptions } from "./s3-config.js";

export { type S3ObjectStoreOptions, s3ConfigFromEnv } from "./s3-config.js";

export type S3ObjectStoreErrorCode =
  | "InvalidBucketName"
  | "InvalidKey"
  | "InvalidMetadata"
  | "InvalidArgument"
  | "NoSuchBucket"
  | "BucketNameTaken"
  | "AccessDenied"
  | "Unavailable"
  | "RequestFailed";

/** A request the S3 object store refused or could not make; `code` says which. */
export class S3ObjectStoreError extends Error {
  override name = "S3ObjectStoreError";
  constructor(
    readonly code: S3ObjectStoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const MIB = 1024 * 1024;
const DEFAULT_PART_SIZE = 8 * MIB;
/** S3's smallest part (all but the last) and largest part count. */
const MIN_PART_SIZE = 5 * MIB;
const MAX_KEY_BYTES = 1024;
const PAGE_SIZE = 1000;
/** SigV4 presigned URLs live at most 7 days. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;
/** Header names S3 answers for itself; a user metadata key with one of these names would be ambiguous. */
const RESERVED_METADATA = new Set([
  "content-type",
  "cache-control",
  "content-encoding",
  "content-disposition",
  "content-language",
  "x-amz-website-redirect-location",
  "if-none-match",
  "if-match",
  "x-amz-storage-class",
  "x-amz-acl",
]);
const TOKEN_RE = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;
const HEADER_VALUE_RE = /^[\x20-\x7e]*$/;
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
]);
const NOT_FOUND_CODES = new Set(["NoSuchKey", "NotFound", "NoSuchBucket"]);

const s3Code = (err: unknown): string | undefined => (err as { code?: unknown })?.code as string | undefined;

function checkBucket(bucket: string): void {
  if (!isValidS3BucketName(bucket)) {
    throw new S3ObjectStoreError(
      "InvalidBucketName",
      `Bucket name ${JSON.stringify(bucket)} is invalid: use 3 to 63 lowercase letters, digits, '.' or '-', starting and ending with a letter or digit.`,
    );
  }
}

function checkKey(key: string): void {
  if (key.length === 0) throw new S3ObjectStoreError("InvalidKey", "Object key is invalid: it is empty.");
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) {
    throw new S3ObjectStoreError(
      "InvalidKey",
      `Object key ${JSON.stringify(key.slice(0, 40))}… is invalid: it is longer than ${MAX_KEY_BYTES} bytes.`,
    );
  }
}

/** Request headers of a put: content type and `x-amz-meta-*` user metadata (ASCII header values). */
function putHeaders(opts: PutOptions | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (opts?.contentType) {
    if (!HEADER_VALUE_RE.test(opts.contentType)) {
      throw new S3ObjectStoreError(
        "InvalidMetadata",
        `Content type ${JSON.stringify(opts.contentType)} is invalid: use printable ASCII only.`,
      );
    }
    headers["Content-Type"] = opts.contentType;
  }
  for (const [name, value] of Object.entries(opts?.metadata ?? {})) {
    const lower = name.toLowerCase();
    if (!TOKEN_RE.test(lower) || RESERVED_METADATA.has(lower) || lower.startsWith("x-amz-")) {
      throw new S3ObjectStoreError(
        "InvalidMetadata",
        `Metadata key ${JSON.stringify(name)} is invalid: use letters, digits and '-', not a standard header name (S3 stores keys lower-case).`,
      );
    }
    if (!HEADER_VALUE_RE.test(value)) {
      throw new S3ObjectStoreError(
        "InvalidMetadata",
        `Metadata value of ${JSON.stringify(name)} is invalid: S3 carries metadata in HTTP headers, so use printable ASCII only (encode anything else, e.g. as hex).`,
      );
    }
    headers[`X-Amz-Meta-${lower}`] = value;
  }
  return headers;
}

/** Splits a byte stream into buffers of exactly `size` bytes (the last one may be shorter). */
async function* chunks(body: Readable, size: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of body) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    pending.push(buf);
    pendingBytes += buf.length;
    while (pendingBytes >= size) {
      const all = Buffer.concat(pending, pendingBytes);
      yield all.subarray(0, size);
      pending = [all.subarray(size)];
      pendingBytes -= size;
    }
  }
  if (pendingBytes > 0) yield Buffer.concat(pending, pendingBytes);
}

/**
 * The cluster object store: any S3-compatible storage through the `minio` client. Streams of more than
 * one part (8 MiB by default) go up as a multipart upload, aborted when the body fails, so a failed put
 * leaves the previous object untouched and no parts behind. `presignPut` signs for `publicEndpoint` (the
 * host clients reach) when given, with a second client that makes no requests of its own when `region`
 * is set. Missing objects answer ObjectNotFoundError (get, getStream) or undefined (stat); deleting a
 * missing object is fine. User metadata keys come back lower-case (S3 rule).
 */
/**
 * The errors of a request written to a connection the server had already closed: Node's agent keeps
 * connections alive between requests, and a server closes one that stays idle past its keep-alive timeout
 * (5 s for many). When the process was busy meanwhile (a check step reading a long document between fetching
 * it and storing its text), the close is not seen yet and the next request goes out on the dead connection.
 */
const STALE_CONNECTION_CODES: ReadonlySet<string> = new Set(["ECONNRESET", "EPIPE"]);

/**
 * Runs an idempotent request (a buffered put, a read, a stat, a delete) once more when it failed on a
 * connection the server had closed, after letting the event loop see the closes: what AWS's SDKs do too.
 */
export async function retryOnStaleConnection<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    if (!STALE_CONNECTION_CODES.has((err as NodeJS.ErrnoException | undefined)?.code ?? "")) throw err;
    await new Promise((resolve) => setImmediate(resolve));
    return request();
  }
}

export function createS3ObjectStore(opts: S3ObjectStoreOptions): ObjectStore {
  const partSize = opts.partSize ?? DEFAULT_PART_SIZE;
  if (!Number.isInteger(partSize) || partSize < MIN_PART_SIZE) {
    throw new S3ObjectStoreError(
      "InvalidArgument",
      `partSize must be a whole number of bytes, at least ${MIN_PART_SIZE} (5 MiB, S3's smallest part); got ${partSize}.`,
    );
  }
  const base: Omit<ClientOptions, "endPoint" | "port" | "useSSL"> = {
    accessKey: opts.accessKey,
    secretKey: opts.secretKey,
    pathStyle: opts.pathStyle ?? true,
    partSize,
    ...(opts.region ? { region: opts.region } : {}),
  };
  const describe = `${opts.useSSL ? "https" : "http"}://${opts.endPoint}:${opts.port}`;
  const client = new Client({ ...base, endPoint: opts.endPoint, port: opts.port, useSSL: opts.useSSL });
  const publicTarget = opts.publicEndpoint
    ? parseS3Endpoint(opts.publicEndpoint, "publicEndpoint", opts.useSSL)
    : undefined;
  /** Presigning clients for the public host, one per region (signatures include the region). */
  const signers = new Map<string, Client>();

  async function signerFor(bucket: string): Promise<Client> {
    if (!publicTarget) return client;
    // Without a configured region, ask the internal endpoint (never the public one) for the bucket's.
    const region = opts.region ?? (await client.getBucketRegionAsync(bucket));
    let signer = signers.get(region);
    if (!signer) {
      signer = new Client({
        ...base,
        region,
        endPoint: publicTarget.endPoint,
        port: publicTarget.port,
        useSSL: publicTarget.useSSL,
      });
      signers.set(region, signer);
    }
    return signer;
  }

  /** Turns a minio or network error into an S3ObjectStoreError whose message says what to do. */
  function wrap(op: string, bucket: string, key: string | undefined, err: unknown): Error {
    if (err instanceof S3ObjectStoreError || err instanceof ObjectNotFoundError) return err;
    const code = s3Code(err);
    const what = key === undefined ? `bucket ${bucket}` : `${key} in bucket ${bucket}`;
    if (code === "NoSuchBucket") {
      return new S3ObjectStoreError(
        "NoSuchBucket",
        `Bucket ${bucket} does not exist on ${describe}; create it first (ensureBucket).`,
        { cause: err },
      );
    }
    if (code && ["AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "Forbidden"].includes(code)) {
      return new S3ObjectStoreError(
        "AccessDenied",
        `S3 at ${describe} refused to ${op} ${what} (${code}); check S3_ACCESS_KEY, S3_SECRET_KEY and the bucket's policy.`,
        { cause: err },
      );
    }
    if (code && NETWORK_CODES.has(code)) {
      return new S3ObjectStoreError(
        "Unavailable",
        `Cannot reach S3 at ${describe} (${code}) to ${op} ${what}; check S3_ENDPOINT and that the storage is running.`,
        { cause: err },
      );
    }
    if (err instanceof InvalidBucketNameError) {
      return new S3ObjectStoreError(
        "InvalidBucketName",
        `Bucket name ${JSON.stringify(bucket)} is invalid.`,
        {
          cause: err,
        },
      );
    }
    const detail = code ? `${code}: ${(err as Error).message}` : String((err as Error)?.message ?? err);
    return new S3ObjectStoreError("RequestFailed", `S3 at ${describe} could not ${op} ${what} (${detail}).`, {
      cause: err,
    });
  }

  async function putStream(bucket: string, key: string, body: Readable, headers: Record<string, string>) {
    const parts = chunks(body, partSize);
    const first = await parts.next();
    const second = first.done ? first : await parts.next();
    if (first.done || second.done) {
      // One part or less: a single PUT.
      const buf = first.done ? Buffer.alloc(0) : first.value;
      await client.putObject(bucket, key, buf, buf.length, headers);
      return buf.length;
    }
    const uploadId = await client.initiateNewMultipartUpload(bucket, key, headers);
    try {
      const etags: { part: number; etag: string }[] = [];
      let size = 0;
      const upload = async (payload: Buffer) => {
        const part = etags.length + 1;
        const { etag } = await client.uploadPart(
          { bucketName: bucket, objectName: key, uploadID: uploadId, partNumber: part, headers: {} },
          payload,
        );
        etags.push({ part, etag });
        size += payload.length;
      };
      await upload(first.value);
      await upload(second.value);
      for await (const payload of parts) await upload(payload);
      await client.completeMultipartUpload(bucket, key, uploadId, etags);
      return size;
    } catch (err) {
      await client.abortMultipartUpload(bucket, key, uploadId).catch(() => undefined);
      throw err;
    }
  }

  const store: ObjectStore = {
    async ensureBucket(bucket) {
      checkBucket(bucket);
      try {
        if (await client.bucketExists(bucket)) return;
        await client.makeBucket(bucket, opts.region);
      } catch (err) {
        const code = s3Code(err);
        // Another replica created it first (a race), or it exists already.
        if (code === "BucketAlreadyOwnedByYou") return;
        if (code === "BucketAlreadyExists") {
          if (await client.bucketExists(bucket).catch(() => false)) return;
          throw new S3ObjectStoreError(
            "BucketNameTaken",
            `Bucket ${bucket} belongs to someone else on ${describe}; choose another name (S3_BUCKET).`,
            { cause: err },
          );
        }
        throw wrap("create", bucket, undefined, err);
      }
    },

    async put(bucket, key, body, putOpts) {
      checkBucket(bucket);
      checkKey(key);
      const headers = putHeaders(putOpts);
      try {
        if (typeof body === "string" || Buffer.isBuffer(body)) {
          const buf = typeof body === "string" ? Buffer.from(body) : body;
          await retryOnStaleConnection(() => client.putObject(bucket, key, buf, buf.length, headers));
          return { size: buf.length };
        }
        return { size: await putStream(bucket, key, body, headers) };
      } catch (err) {
        throw wrap("store", bucket, key, err);
      }
    },

    async get(bucket, key) {
      const stream = await store.getStream(bucket, key);
      const bufs: Buffer[] = [];
      try {
        for await (const chunk of stream) bufs.push(chunk as Buffer);
      } catch (err) {
        throw wrap("read", bucket, key, err);
      }
      return Buffer.concat(bufs);
    },

    async getStream(bucket, key) {
      checkBucket(bucket);
      checkKey(key);
      try {
        return await retryOnStaleConnection(() => client.getObject(bucket, key));
      } catch (err) {
        if (NOT_FOUND_CODES.has(s3Code(err) ?? "")) throw new ObjectNotFoundError(bucket, key);
        throw wrap("read", bucket, key, err);
      }
    },

    async stat(bucket, key) {
      checkBucket(bucket);
      checkKey(key);
      let st: Awaited<ReturnType<Client["statObject"]>>;
      try {
        st = await retryOnStaleConnection(() => client.statObject(bucket, key));
      } catch (err) {
        if (NOT_FOUND_CODES.has(s3Code(err) ?? "")) return undefined;
        throw wrap("inspect", bucket, key, err);
      }
      let contentType: string | undefined;
      const metadata: Record<string, string> = {};
      for (const [name, value] of Object.entries(st.metaData ?? {})) {
        const lower = name.toLowerCase();
        if (lower === "content-type") contentType = String(value);
        else if (!RESERVED_METADATA.has(lower) && !lower.startsWith("x-amz-"))
          metadata[lower] = String(value);
      }
      return {
        key,
        size: st.size,
        lastModified: st.lastModified,
        ...(contentType ? { contentType } : {}),
        ...(Object.keys(metadata).length ? { metadata } : {}),
      };
    },

    list(bucket, prefix, listOpts) {
      checkBucket(bucket);
      const maxKeys = Math.max(1, Math.min(PAGE_SIZE, Math.floor(listOpts?.pageSize ?? PAGE_SIZE)));
      const startAfter = listOpts?.startAfter ?? "";
      return (async function* (): AsyncGenerator<ObjectInfo> {
        let token = "";
        for (;;) {
          let page: Awaited<ReturnType<Client["listObjectsV2Query"]>>;
          try {
            // start-after on the first request; the continuation token carries the position after it.
            page = await client.listObjectsV2Query(
              bucket,
              prefix,
              token,
              "",
              maxKeys,
              token ? "" : startAfter,
            );
          } catch (err) {
            if (s3Code(err) === "NoSuchBucket") return;
            throw wrap("list", bucket, undefined, err);
          }
          for (const o of page.objects) {
            if (o.name !== undefined) yield { key: o.name, size: o.size, lastModified: o.lastModified };
          }
          if (!page.isTruncated || !page.nextContinuationToken) return;
          token = page.nextContinuationToken;
        }
      })();
    },

    async delete(bucket, key) {
      checkBucket(bucket);
      checkKey(key);
      try {
        await retryOnStaleConnection(() => client.removeObject(bucket, key));
      } catch (err) {
        if (NOT_FOUND_CODES.has(s3Code(err) ?? "")) return;
        throw wrap("delete", bucket, key, err);
      }
    },

    async deletePrefix(bucket, prefix) {
      checkBucket(bucket);
      let deleted = 0;
      let after = "";
      for (;;) {
        // Page by start-after (not a continuation token): the listing shrinks as we delete.
        let page: Awaited<ReturnType<Client["listObjectsV2Query"]>>;
        try {
          page = await client.listObjectsV2Query(bucket, prefix, "", "", PAGE_SIZE, after);
        } catch (err) {
          if (s3Code(err) === "NoSuchBucket") return deleted;
          throw wrap("list", bucket, undefined, err);
        }
        const names = page.objects.flatMap((o) => (o.name === undefined ? [] : [o.name]));
        if (names.length === 0) return deleted;
        let failures: Awaited<ReturnType<Client["removeObjects"]>>;
        try {
          failures = await client.removeObjects(bucket, names);
        } catch (err) {
          throw wrap("delete objects under", bucket, prefix, err);
        }
        const failed = failures.filter((f) => f && (f as { Code?: string }).Code !== "NoSuchKey");
        if (failed.length > 0) {
          const first = failed[0] as { Code?: string; Message?: string; Key?: string };
          throw new S3ObjectStoreError(
            "RequestFailed",
            `S3 at ${describe} could not delete ${failed.length} object(s) under ${prefix} in bucket ${bucket} (first: ${first.Key}: ${first.Code} ${first.Message ?? ""}); try again.`,
          );
        }
        deleted += names.length - failures.length;
        after = names[names.length - 1]!;
        if (!page.isTruncated) return deleted;
      }
    },

    async presignPut(bucket, key, expiresSeconds) {
      checkBucket(bucket);
      checkKey(key);
      if (!Number.isInteger(expiresSeconds) || expiresSeconds < 1 || expiresSeconds > MAX_PRESIGN_SECONDS) {
        throw new S3ObjectStoreError(
          "InvalidArgument",
          `A presigned URL must live 1 to ${MAX_PRESIGN_SECONDS} seconds (7 days), got ${expiresSeconds}.`,
        );
      }
      try {
        const signer = await signerFor(bucket);
        return await signer.presignedPutObject(bucket, key, expiresSeconds);
      } catch (err) {
        throw wrap("presign an upload of", bucket, key, err);
      }
    },
  };
  return store;
}
