import { z } from "@hono/zod-openapi";
import { SCOPES } from "../core/scopes.js";
import { MESSAGES } from "./auth/tokens.js";
import type { ValidationIssue } from "./errors.js";

/** Shared answer schemas (the spec's ErrorResponse and HTTPValidationError). */
export const ErrorResponse = z
  .object({
    detail: z.string().openapi({ description: "One sentence: what went wrong and what to do about it" }),
  })
  .openapi("ErrorResponse");

export const ValidationError = z
  .object({
    loc: z
      .array(z.union([z.string(), z.number().int()]))
      .openapi({ description: "Where: `body`, `path`, `query` or `header`, then the field path" }),
    msg: z.string(),
    type: z.string().openapi({ description: "Machine-readable kind, e.g. `missing`, `extra_forbidden`" }),
    // Any JSON value (the document drops the `nullable` zod puts beside no `type`: see openapiDocument).
    input: z.unknown().optional().openapi({ description: "The offending input, when there is one" }),
    ctx: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "Details of the rule that failed (e.g. `le` of a maximum)" }),
  })
  .openapi("ValidationError");

export const HTTPValidationError = z
  .object({ detail: z.array(ValidationError).optional() })
  .openapi("HTTPValidationError");

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});
export const jsonResponse = json;

type Header = { description: string; schema: { type: "string" | "integer" } };

/** Example names for the documentation: the sentence's first words, lower-case, joined by `_`, numbered. */
const exampleName = (text: string, i: number) =>
  `${i + 1}_${text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 40)}`;

/**
 * An ErrorResponse answer with the exact `detail` sentences this operation can give as examples (so the
 * documentation never shows another status's message), plus any headers it sets.
 */
export function errorJson(description: string, details: readonly string[], headers?: Record<string, Header>) {
  const examples = Object.fromEntries(
    details.map((detail, i) => [exampleName(detail, i), { summary: detail, value: { detail } }]),
  );
  return {
    description,
    content: { "application/json": { schema: ErrorResponse, examples } },
    ...(headers ? { headers } : {}),
  };
}

/** An HTTPValidationError answer with typical entries of this operation as its example. */
export function validationJson(description: string, issues: readonly ValidationIssue[]) {
  return {
    description,
    content: {
      "application/json": { schema: HTTPValidationError, example: { detail: issues } },
    },
  };
}

const RETRY_AFTER: Record<string, Header> = {
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer" } },
};

/**
 * The answers every bearer-protected operation can give beyond its own: 401 (with the spec's messages),
 * 403 naming the operation's scope, 429 (only when the deployment sets DOCVERIFY_RATE_LIMIT_PER_MINUTE)
 * and 503 (the resource store is unavailable).
 */
export function bearerErrors(scope: string) {
  return {
    401: errorJson(
      "Bearer token absent, not a Bearer header, expired or invalid",
      [MESSAGES.missing, MESSAGES.expired, MESSAGES.invalid],
      { "WWW-Authenticate": { description: 'Bearer realm="docverify"', schema: { type: "string" } } },
    ),
    403: errorJson("The token lacks the operation's scope (`Missing required scopes: <names>`)", [
      `Missing required scopes: ${scope}`,
    ]),
    429: errorJson(
      "The per-client rate limit is exceeded (only when the deployment sets DOCVERIFY_RATE_LIMIT_PER_MINUTE)",
      ["Rate limit of 600 requests per minute exceeded for this client; retry after 12 seconds."],
      RETRY_AFTER,
    ),
    503: errorJson(
      "The service's storage is unavailable",
      ["The service's storage is unavailable; retry in a few seconds."],
      RETRY_AFTER,
    ),
  } as const;
}

/** bearerErrors of an operation that reads no resource (no 503). */
export function bearerErrorsWithoutStore(scope: string) {
  const { 503: _unused, ...rest } = bearerErrors(scope);
  return rest;
}

/** 413 of an operation whose JSON body is limited to `maxBytes`. */
export const bodyTooLarge = (maxBytes: number) =>
  errorJson(`The JSON body is larger than ${maxBytes / 1024} KiB`, [
    `The request body is larger than the limit of ${maxBytes} bytes.`,
  ]);

/** The OAuth2 scheme (Swagger UI's Authorize fetches a token with it) and the bearer scheme. */
export const SECURITY_SCHEMES = {
  OAuth2: {
    type: "oauth2" as const,
    description:
      "OAuth 2.0 client credentials: POST /token with grant_type=client_credentials, the client's id and " +
      "secret (form or HTTP Basic) and the scopes wanted; send the access token as `Authorization: Bearer`.",
    flows: {
      clientCredentials: {
        tokenUrl: "/token",
        scopes: {
          [SCOPES.all]: "Every operation",
          [SCOPES.detectionsAll]: "Every detection scope",
          [SCOPES.create]: "Start a detection (and reserve uploads)",
          [SCOPES.get]: "Read a detection and list detections",
          [SCOPES.delete]: "Delete a detection and its files",
          [SCOPES.createSample]: "Start a sample run within the contract allowance using X-Sample-Run",
          [SCOPES.feedback]: "Record a reviewer's verdict on a detection (feedback)",
          [SCOPES.jobsAll]: "Every batch job scope",
          [SCOPES.jobsCreate]: "Create a batch job",
          [SCOPES.jobsGet]: "Read a batch job",
        },
      },
    },
  },
  bearerAuth: {
    type: "http" as const,
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "An access token from POST /token, pasted as is.",
  },
};

/** Security of an operation that needs `scope`: an OAuth2 token holding it, or any bearer token. */
export const bearer = (...scopes: string[]) => [
  ...scopes.map((scope) => ({ OAuth2: [scope] })),
  { bearerAuth: [] as string[] },
];

/** Security of a public operation (no token). */
export const PUBLIC: Record<string, string[]>[] = [];

/**
 * Makes a generated document valid OpenAPI 3.0 where the generator is not: zod's unknown/any becomes
 * `{nullable: true}`, but `nullable` without a sibling `type` means nothing in 3.0 (validators reject it);
 * a schema without a `type` admits null already, so the key is dropped. Returns a new document.
 */
export function normalizeOpenApi<T>(doc: T): T {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== "object") return v;
    const out: Record<string, unknown> = {};
    const obj = v as Record<string, unknown>;
    for (const [k, child] of Object.entries(obj)) {
      if (k === "nullable" && child === true && !("type" in obj) && !("$ref" in obj)) continue;
      out[k] = walk(child);
    }
    return out;
  };
  return walk(doc) as T;
}
