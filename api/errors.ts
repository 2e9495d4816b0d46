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

/**
 * The API's one error class: an HTTP status, a machine code and the `detail` the caller reads
 * (a sentence, or the list of validation issues for 422). app.onError turns it into the answer.
 */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    readonly detail: string | ValidationIssue[],
    readonly options: ApiErrorOptions = {},
  ) {
    super(
      typeof detail === "string" ? detail : detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; "),
      {
        cause: options.cause,
      },
    );
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
