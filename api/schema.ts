import { z } from "@hono/zod-openapi";

/** Shared answer schemas (the spec's ErrorResponse and HTTPValidationError). */
export const ErrorResponse = z
  .object({ detail: z.string().openapi({ example: "Missing bearer token" }) })
  .openapi("ErrorResponse");

export const ValidationError = z
  .object({
    loc: z.array(z.union([z.string(), z.number().int()])),
    msg: z.string(),
    type: z.string(),
    input: z.unknown().optional(),
    ctx: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi("ValidationError");

export const HTTPValidationError = z
  .object({ detail: z.array(ValidationError).optional() })
  .openapi("HTTPValidationError");

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

/** Error answers every bearer-protected operation can give, for the OpenAPI document. */
export const errorResponses = {
  401: json(ErrorResponse, "Bearer token absent, not a Bearer header, expired or invalid"),
  403: json(ErrorResponse, "The token lacks the required scopes (`Missing required scopes: <names>`)"),
  422: json(HTTPValidationError, "Validation error"),
  429: json(ErrorResponse, "Per-client rate limit exceeded (see Retry-After)"),
} as const;

export const jsonResponse = json;

export const BEARER = [{ bearerAuth: [] as string[] }];
