import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { readClientsFile, parseClientsJson } from "../api/auth/clients.js";
import { ClientsFile } from "../core/clients.js";
import { loadConfig } from "../core/config.js";
import {
  endpointsOf,
  eventBody,
  signatureHeaders,
  TEST_EVENT_TYPE,
  type WebhookEndpoint,
} from "../core/webhooks.js";
import { webhookSenderFor } from "./webhooks.js";

const HELP = `Usage: docverify webhooks test (--client <id> | --url <url> --secret <whsec_…>)

Sends one signed "webhook.test" event (Standard Webhooks headers, signed with the standardwebhooks library)
and prints how each attempt ended. The address policy is the deployment's: DOCVERIFY_ALLOW_PRIVATE_SOURCES,
DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES, DOCVERIFY_ALLOWED_SOURCE_PORTS (redirects are not followed).

  --client <id>     every endpoint of this client in DOCVERIFY_CLIENTS_FILE (signed with its secrets)
  --url <url>       one URL, signed with --secret
  --secret <s>      the endpoint's secret (whsec_…), with --url
  --json            print the results as JSON lines

Exits 0 when every endpoint acknowledged the event with a 2xx, 1 otherwise, 2 on a usage error.
`;

/** `docverify webhooks test`: one test event to a client's endpoints, or to one URL. */
export async function runWebhooksCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "test" || rest.includes("--help") || rest.includes("-h")) {
    process.stderr.write(HELP);
    return sub === "test" ? 0 : 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      client: { type: "string" },
      url: { type: "string" },
      secret: { type: "string" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const config = loadConfig(process.env);
  let endpoints: WebhookEndpoint[];
  let clientId = values.client ?? "cli";
  if (values.client) {
    if (!config.clientsFile) {
      process.stderr.write("docverify: --client reads DOCVERIFY_CLIENTS_FILE, which is not set.\n");
      return 2;
    }
    const file = ClientsFile.parse(
      parseClientsJson(config.clientsFile, await readClientsFile(config.clientsFile)),
    );
    const client = file.clients.find((c) => c.client_id === values.client);
    if (!client) {
      process.stderr.write(`docverify: no client "${values.client}" in ${config.clientsFile}.\n`);
      return 2;
    }
    endpoints = endpointsOf(client.client_id, client.webhooks);
    if (endpoints.length === 0) {
      process.stderr.write(`docverify: client "${values.client}" has no webhook endpoints.\n`);
      return 2;
    }
  } else if (values.url && values.secret) {
    clientId = "cli";
    const parsed = endpointsOf(clientId, [
      { url: values.url, events: ["detection.completed"], secret: values.secret },
    ]);
    endpoints = parsed;
    if (!/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/.test(values.secret)) {
      process.stderr.write(
        "docverify: --secret is whsec_ followed by the base64 of at least 24 random bytes.\n",
      );
      return 2;
    }
  } else {
    process.stderr.write(HELP);
    return 2;
  }
  const sender = webhookSenderFor(config);
  const now = new Date();
  const id = `msg_test_${randomUUID()}`;
  const body = eventBody({
    id,
    type: TEST_EVENT_TYPE,
    clientId,
    at: now.toISOString(),
    data: { id: "test", status: "COMPLETED", score: null, url: "/v1/webhooks" },
  });
  let ok = true;
  try {
    for (const ep of endpoints) {
      const result = await sender.send({
        url: ep.url,
        headers: signatureHeaders(ep, id, new Date(), body),
        body,
      });
      if (result.outcome !== "delivered") ok = false;
      if (values.json) {
        process.stdout.write(
          `${JSON.stringify({ endpoint_id: ep.id, url: ep.url, webhook_id: id, ...result })}\n`,
        );
      } else {
        process.stdout.write(
          `${result.outcome === "delivered" ? "ok  " : "FAIL"} ${ep.url} (${ep.id}): ${result.message} [${result.durationMs} ms, webhook-id ${id}]\n`,
        );
      }
    }
  } finally {
    await sender.close();
  }
  return ok ? 0 : 1;
}
