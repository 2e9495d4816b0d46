import type { Context, MiddlewareHandler } from "hono";
import type { ZodError } from "zod";
import { ApiError, type ValidationIssue, invalid, validationError } from "./errors.js";

/** Where a zod-openapi validation target shows up in `loc`. */
const LOC_PREFIX: Record<string, string> = {
  json: "body",
  form: "body",
  param: "path",
  query: "query",
  header: "header",
  cookie: "cookie",
};

type ZodIssue = ZodError["issues"][number];

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = data;
  for (const key of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

/** Header names are case-insensitive: their loc is lower-case (["header", "x-sample-run"]). */
const locOf = (prefix: string, path: readonly PropertyKey[]): (string | number)[] => [
  prefix,
  ...path.map((p) => (typeof p === "number" ? p : prefix === "header" ? String(p).toLowerCase() : String(p))),
];

function typeOf(
  issue: ZodIssue,
  input: unknown,
): { type: string; msg?: string; ctx?: Record<string, unknown> } {
  if (input === undefined && (issue.code === "invalid_type" || issue.code === "invalid_value")) {
    return { type: "missing", msg: "Field required" };
  }
  switch (issue.code) {
    case "invalid_type":
      return { type: `${issue.expected}_type`, ctx: { expected: issue.expected } };
    case "too_small":
      return issue.origin === "string" || issue.origin === "array"
        ? { type: "too_short", ctx: { min_length: Number(issue.minimum) } }
        : {
            type: issue.inclusive ? "greater_than_equal" : "greater_than",
            ctx: { ge: Number(issue.minimum) },
          };
    case "too_big":
      return issue.origin === "string" || issue.origin === "array"
        ? { type: "too_long", ctx: { max_length: Number(issue.maximum) } }
        : { type: issue.inclusive ? "less_than_equal" : "less_than", ctx: { le: Number(issue.maximum) } };
    case "invalid_value": {
      const expected = issue.values.map((v) => String(v)).join(", ");
      return { type: "enum", msg: `Input should be one of: ${expected}`, ctx: { expected } };
    }
    case "invalid_format":
      return { type: issue.format === "regex" ? "string_pattern_mismatch" : `${issue.format}_parsing` };
    case "invalid_union":
      return { type: "union" };
    default:
      return { type: "value_error" };
  }
}

/** zod issues → the spec's ValidationError entries, `loc` starting at body/path/query/header. */
export function zodIssuesToValidation(error: ZodError, target: string, data: unknown): ValidationIssue[] {
  const prefix = LOC_PREFIX[target] ?? target;
  const out: ValidationIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        out.push({
          loc: locOf(prefix, path),
          msg: "Extra inputs are not permitted",
          type: "extra_forbidden",
          input: valueAt(data, path),
        });
      }
      continue;
    }
    const input = valueAt(data, issue.path);
    const t = typeOf(issue, input);
    const entry: ValidationIssue = {
      loc: locOf(prefix, issue.path),
      msg: t.msg ?? issue.message,
      type: t.type,
    };
    if (input !== undefined) entry.input = input;
    if (t.ctx) entry.ctx = t.ctx;
    out.push(entry);
  }
  return out;
}

/** zod-openapi's defaultHook: every failed validation becomes a 422 HTTPValidationError. */
export function validationHook(
  result: { target: string; success: boolean; error?: ZodError; data?: unknown },
  _c: Context,
): void {
  if (!result.success && result.error) {
    throw validationError(zodIssuesToValidation(result.error, result.target, result.data));
  }
}

const JSON_MEDIA_RE = /^application\/([\w.-]+\+)?json$/i;

export const mediaType = (contentType: string | undefined) =>
  (contentType ?? "").split(";")[0]!.trim().toLowerCase();

/**
 * Makes later body readers (zod-openapi's media-type gate and validators, c.req.json()) read `text`
 * instead of the stream we already consumed. Hono keeps promises in bodyCache (its type says values).
 */
export function cacheBodyText(c: Context, text: string): void {
  (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text);
}

/** Reads a request body into memory, refusing more than `maxBytes` with a 413. */
export async function readBodyLimited(c: Context, maxBytes: number): Promise<Buffer> {
  const declared = Number(c.req.header("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) throw bodyTooLarge(maxBytes);
  const body = c.req.raw.body;
  if (!body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw bodyTooLarge(maxBytes);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

const bodyTooLarge = (maxBytes: number) =>
  new ApiError(413, "body_too_large", `The request body is larger than the limit of ${maxBytes} bytes.`);

/**
 * Route middleware for JSON bodies, run after authentication and scopes and before zod validation:
 * the body must be JSON (else 422), at most `maxBytes` (else 413), and well-formed (else 422 json_invalid).
 * The parsed text is cached on the request so the zod validator reads it without a second parse of the stream.
 * `optional`: an absent, empty body is allowed (the validator then sees `{}`).
 */
export function jsonBody(opts: { maxBytes: number; optional?: boolean }): MiddlewareHandler {
  return async (c, next) => {
    const contentType = c.req.header("content-type");
    const buf = await readBodyLimited(c, opts.maxBytes);
    const text = buf.toString("utf8");
    // Later readers (zod-openapi's media-type gate and validator) read this cache, not the spent stream.
    cacheBodyText(c, text);
    if (buf.length === 0 && opts.optional && !contentType) {
      await next();
      return;
    }
    if (!JSON_MEDIA_RE.test(mediaType(contentType))) {
      throw invalid(
        ["body"],
        `The request body must be JSON sent with Content-Type: application/json (got ${contentType ? `"${contentType}"` : "no Content-Type"}).`,
        "model_attributes_type",
      );
    }
    if (text.trim() === "" && opts.optional) {
      cacheBodyText(c, "{}");
      await next();
      return;
    }
    try {
      JSON.parse(text);
    } catch (err) {
      throw validationError([
        {
          loc: ["body"],
          msg: `JSON decode error: ${(err as Error).message}`,
          type: "json_invalid",
          input: text.length > 200 ? `${text.slice(0, 200)}…` : text,
        },
      ]);
    }
    await next();
  };
}
