import { z } from "@hono/zod-openapi";

export const TokenRequest = z
  .object({
    grant_type: z
      .string()
      .optional()
      .openapi({ example: "client_credentials", enum: ["client_credentials"] }),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    scope: z.string().optional().openapi({ example: "DocumentVerification:*" }),
  })
  .openapi("TokenRequest", {
    description:
      "Form-encoded. client_id/client_secret may instead come as HTTP Basic credentials. A missing or other " +
      "grant_type is answered 400 `unsupported grant_type`.",
    // Required by the contract; validated by the handler so a missing one gets the contract's 400 message.
    required: ["grant_type"],
  });

export const TokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal("bearer"),
    expires_in: z.number().int().openapi({ example: 3600 }),
    scope: z
      .string()
      .openapi({ example: "DocumentVerification:detections:create DocumentVerification:detections:get" }),
  })
  .openapi("TokenResponse");

export const TokenError = z
  .object({
    detail: z.string().openapi({ description: "One sentence (the contract's message where it names one)" }),
    error: z.string().openapi({
      description:
        "RFC 6749 error code; `temporarily_unavailable` (429, with Retry-After) when failed authentications are throttled",
      enum: [
        "invalid_request",
        "invalid_client",
        "unsupported_grant_type",
        "invalid_scope",
        "temporarily_unavailable",
      ],
    }),
  })
  .openapi("TokenError");
