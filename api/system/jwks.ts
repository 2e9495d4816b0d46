import { type OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import type { AppEnv } from "../deps.js";
import { jsonResponse, PUBLIC } from "../schema.js";

const PublicJwk = z
  .object({
    kty: z.string().openapi({ example: "OKP" }),
    crv: z.string().openapi({ example: "Ed25519" }),
    x: z.string().openapi({ example: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" }),
    kid: z.string(),
    alg: z.string().openapi({ example: "EdDSA" }),
    use: z.string().openapi({ example: "sig" }),
  })
  .openapi("PublicJwk");

export const Jwks = z
  .object({
    keys: z.array(PublicJwk).openapi({
      description: "The current attestation key first, then the keys used before a rotation",
    }),
  })
  .openapi("Jwks");

export const jwksRoute = createRoute({
  method: "get",
  path: "/.well-known/jwks.json",
  tags: ["operations"],
  summary: "The public keys that verify attestations",
  description:
    "A JSON Web Key Set (RFC 7517) with the public halves of the current attestation signing key and of every " +
    "previous key the deployment lists, so attestations signed before a key rotation still verify. Public: no token.",
  operationId: "getJwks",
  security: PUBLIC,
  responses: { 200: jsonResponse(Jwks, "The key set") },
});

export function registerJwksRoute(app: OpenAPIHono<AppEnv>): void {
  app.openapi(jwksRoute, (c) => {
    c.header("Cache-Control", "public, max-age=300");
    return c.json(Jwks.parse(c.var.deps.attestation?.jwks() ?? { keys: [] }), 200);
  });
}
