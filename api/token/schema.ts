import { z } from "@hono/zod-openapi";

export const TokenRequest = z
  .object({
    grant_type: z.string().optional().openapi({ example: "client_credentials" }),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    scope: z.string().optional().openapi({ example: "DocumentVerification:*" }),
  })
  .openapi("TokenRequest", {
    description: "Form-encoded. client_id/client_secret may instead come as HTTP Basic credentials.",
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
    detail: z.string().openapi({ example: "unsupported grant_type" }),
    error: z.string().openapi({ example: "unsupported_grant_type", description: "RFC 6749 error code" }),
  })
  .openapi("TokenError");
