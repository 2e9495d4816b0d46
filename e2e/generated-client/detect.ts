/**
 * An integrator's program, written only against what the service publishes: the types come from
 * `openapi.gen.ts`, which e2e/generated-client.test.ts generates from the running service's /openapi.json
 * with openapi-typescript (it is not checked in), the calls go through openapi-fetch, and the access token
 * comes from an OAuth 2.0 client library (oauth4webapi) using the document's client-credentials tokenUrl.
 * The test type-checks this file against the generated types, then runs it:
 *   node --import tsx detect.ts <base-url> <client-id> <client-secret> <file.pdf>
 * It prints one JSON line per stage and exits 0 once the detection is COMPLETED or FAILED.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import * as oauth from "oauth4webapi";
import createClient from "openapi-fetch";
import type { components, paths } from "./openapi.gen.js";

type DetectionDetail = components["schemas"]["DetectionDetail"];

const [base, clientId, clientSecret, file] = process.argv.slice(2);
if (!base || !clientId || !clientSecret || !file) {
  process.stderr.write("usage: detect.ts <base-url> <client-id> <client-secret> <file.pdf>\n");
  process.exit(2);
}
const say = (stage: string, data: unknown) => process.stdout.write(`${JSON.stringify({ stage, data })}\n`);

// 1. The token endpoint as the OpenAPI document names it (OAuth2 clientCredentials tokenUrl).
const document = (await (await fetch(`${base}/openapi.json`)).json()) as {
  components: { securitySchemes: { OAuth2: { flows: { clientCredentials: { tokenUrl: string } } } } };
};
const tokenUrl = new URL(document.components.securitySchemes.OAuth2.flows.clientCredentials.tokenUrl, base);
const as: oauth.AuthorizationServer = { issuer: base, token_endpoint: tokenUrl.href };
const client: oauth.Client = { client_id: clientId };
const grant = await oauth.clientCredentialsGrantRequest(
  as,
  client,
  oauth.ClientSecretBasic(clientSecret),
  { scope: "DocumentVerification:detections:create DocumentVerification:detections:get" },
  // the test service listens on plain HTTP on loopback
  { [oauth.allowInsecureRequests]: true },
);
const token = await oauth.processClientCredentialsResponse(as, client, grant);
say("token", { token_type: token.token_type, expires_in: token.expires_in, scope: token.scope });

const api = createClient<paths>({
  baseUrl: base,
  headers: { Authorization: `Bearer ${token.access_token}` },
});

// 2. Reserve an upload, declaring the document, and PUT its bytes to the upload URL.
const bytes = await readFile(file);
const reserved = await api.POST("/v1/uploads", {
  body: { filename: path.basename(file), content_type: "application/pdf", size_bytes: bytes.length },
});
if (!reserved.data) throw new Error(`POST /v1/uploads: ${JSON.stringify(reserved.error)}`);
say("upload reserved", { upload_id: reserved.data.upload_id, expires_in: reserved.data.expires_in });
const uploadUrl = new URL(reserved.data.upload_url);
// The upload URL authorises itself: a client without the bearer token.
const uploads = createClient<paths>({ baseUrl: uploadUrl.origin });
const stored = await uploads.PUT("/uploads/{upload_id}", {
  params: {
    path: { upload_id: reserved.data.upload_id },
    query: {
      expires: uploadUrl.searchParams.get("expires") ?? "",
      sig: uploadUrl.searchParams.get("sig") ?? "",
    },
  },
  // the document's raw bytes, not JSON
  body: bytes as unknown as string,
  bodySerializer: (b) => b as unknown as RequestInit["body"],
  headers: { "Content-Type": "application/octet-stream" },
});
if (!stored.data) throw new Error(`PUT upload: ${JSON.stringify(stored.error)}`);
say("uploaded", stored.data);

// 3. Create the detection from the upload.
const created = await api.POST("/v1/detection", {
  body: { upload_id: reserved.data.upload_id, doc_type: "bank_statement", region: "GB" },
});
if (!created.data) throw new Error(`POST /v1/detection: ${JSON.stringify(created.error)}`);
say("created", { id: created.data.id, status: created.data.status });

// 4. Poll until COMPLETED or FAILED.
let detail: DetectionDetail = created.data;
const until = Date.now() + 170_000;
while (detail.status !== "COMPLETED" && detail.status !== "FAILED") {
  if (Date.now() > until) throw new Error(`still ${detail.status} after the test's patience`);
  await new Promise((r) => setTimeout(r, 200));
  const polled = await api.GET("/v1/detection/{detection_id}", {
    params: { path: { detection_id: detail.id } },
  });
  if (!polled.data) throw new Error(`GET detection: ${JSON.stringify(polled.error)}`);
  detail = polled.data;
}
say("finished", detail);
