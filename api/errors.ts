import type { ContentfulStatusCode } from "hono/utils/http-status";

/** One entry of an HTTPValidationError (the spec's ValidationError). */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

export interface ApiErrorOptions {
  headers?: Record<string, string>;
  /** Adds the RFC 6749 `error` field (= code) to the body (POST /token). */
  oauth?: boolean;
  cause?: unknown;
}

/** Most issues one 422 lists (a body with thousands of unknown keys would otherwise answer megabytes). */
export const MAX_ISSUES = 50;
/** Longest string echoed as an issue's `input`; longer ones are cut and end with "…". */
export const MAX_INPUT_CHARS = 200;
/** An object or array is echoed as `input` only up to these bounds; past them `input` is left out. */
const MAX_INPUT_VALUES = 32;
const MAX_INPUT_DEPTH = 4;
const MAX_INPUT_TEXT = 500;

/**
 * What a 422 may echo of a value the caller sent: small values as they are, a long string cut, and
 * nothing (undefined) for an object or array past the bounds. Walks the value without recursion and stops
 * at the first bound, so a body nested 30 000 levels deep costs a few steps, and the answer never
 * overflows the JSON serializer's stack.
 */
export function boundedInput(value: unknown): unknown {
  if (typeof value === "string") {
    return value.length > MAX_INPUT_CHARS ? `${value.slice(0, MAX_INPUT_CHARS)}…` : value;
  }
  if (value === null || typeof value !== "object") {
    return typeof value === "bigint" || typeof value === "function" || typeof value === "symbol"
      ? undefined
      : value;
  }
  let values = 0;
  let text = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (++values > MAX_INPUT_VALUES || depth > MAX_INPUT_DEPTH) return undefined;
    if (typeof v === "string") text += v.length;
    else if (v !== null && typeof v === "object") {
      for (const [k, child] of Object.entries(v)) {
        text += k.length;
        stack.push([child, depth + 1]);
      }
    }
    if (text > MAX_INPUT_TEXT) return undefined;
  }
  return value;
}

/** The issues a 422 answers: at most MAX_ISSUES, each echoing only a bounded `input`. */
function boundIssues(issues: ValidationIssue[]): ValidationIssue[] {
  return issues.slice(0, MAX_ISSUES).map((issue) => {
    if (!("input" in issue)) return issue;
    const { input, ...rest } = issue;
    const bounded = boundedInput(input);
    return bounded === undefined ? rest : { ...rest, input: bounded };
  });
}

/**
 * The API's one error class: an HTTP status, a machine code and the `detail` the caller reads
 * (a sentence, or the list of validation issues for 422, bounded by boundIssues). app.onError turns it
 * into the answer.
 */
export class ApiError extends Error {
  override name = "ApiError";
  readonly detail: string | ValidationIssue[];
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    detail: string | ValidationIssue[],
    readonly options: ApiErrorOptions = {},
  ) {
    const bounded = typeof detail === "string" ? detail : boundIssues(detail);
    super(
      typeof bounded === "string" ? bounded : bounded.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; "),
      {
        cause: options.cause,
      },
    );
    this.detail = bounded;
  }

  body(): { detail: string | ValidationIssue[]; error?: string } {
    return this.options.oauth ? { detail: this.detail, error: this.code } : { detail: this.detail };
  }
}

export const validationError = (issues: ValidationIssue[]) => new ApiError(422, "validation_error", issues);

/** A 422 with one issue. */
export const invalid = (loc: (string | number)[], msg: string, type = "value_error", input?: unknown) =>
  validationError([{ loc, msg, type, ...(input === undefined ? {} : { input }) }]);

export const unauthorized = (detail: string) =>
  new ApiError(401, "unauthorized", detail, { headers: { "WWW-Authenticate": 'Bearer realm="docverify"' } });

export const detectionNotFound = () => new ApiError(404, "not_found", "Detection not found");
