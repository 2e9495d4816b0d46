import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { ClientsFile } from "./clients.js";
import { webhookSettingsFrom } from "./webhook-settings.js";
import { DELIVERY_ID_RE, deliveryId, endpointId, signatureHeaders } from "./webhooks.js";

const secret = `whsec_${Buffer.alloc(24, 7).toString("base64")}`;
const client = (webhooks: unknown) => ({
  clients: [{ client_id: "acme", client_secret: "s", scopes: [], webhooks }],
});

describe("webhook endpoints in the clients file", () => {
  it("parses endpoints; a client without any has none", () => {
    const f = ClientsFile.parse(client([{ url: "https://h.example.com/x", events: ["job.failed"], secret }]));
    expect(f.clients[0]?.webhooks).toEqual([
      { url: "https://h.example.com/x", events: ["job.failed"], secret },
    ]);
    expect(
      ClientsFile.parse({ clients: [{ client_id: "b", client_secret: "s", scopes: [] }] }).clients[0]
        ?.webhooks,
    ).toEqual([]);
  });

  it.each([
    [
      "a secret that is not whsec_…",
      [{ url: "https://h.example.com/x", events: ["job.failed"], secret: "hunter2" }],
      /whsec_/,
    ],
    [
      "an unknown event",
      [{ url: "https://h.example.com/x", events: ["detection.started"], secret }],
      /events/,
    ],
    ["no events", [{ url: "https://h.example.com/x", events: [], secret }], /events/],
    [
      "credentials in the URL",
      [{ url: "https://u:p@h.example.com/x", events: ["job.failed"], secret }],
      /user name or password/,
    ],
    ["another scheme", [{ url: "ftp://h.example.com/x", events: ["job.failed"], secret }], /http or https/],
    [
      "one URL twice",
      [
        { url: "https://h.example.com/x", events: ["job.failed"], secret },
        { url: "https://h.example.com/x", events: ["job.completed"], secret },
      ],
      /listed once/,
    ],
  ])("refuses %s, saying why", (_what, webhooks, message) => {
    const r = ClientsFile.safeParse(client(webhooks));
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toMatch(message);
  });

  it("endpoint ids are stable per client and URL, and differ across clients", () => {
    expect(endpointId("acme", "https://h/x")).toMatch(/^ep_[0-9a-f]{12}$/);
    expect(endpointId("acme", "https://h/x")).toBe(endpointId("acme", "https://h/x"));
    expect(endpointId("other", "https://h/x")).not.toBe(endpointId("acme", "https://h/x"));
  });
});

describe("signing and delivery ids", () => {
  it("signs with every active secret; the standardwebhooks verifier accepts either", () => {
    const old = `whsec_${Buffer.alloc(24, 9).toString("base64")}`;
    const body = '{"type":"detection.completed"}';
    const headers = signatureHeaders({ secret, previous_secret: old }, "msg_1", new Date(), body);
    expect(headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    for (const s of [secret, old]) expect(() => new Webhook(s).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
  });

  it("delivery ids are deterministic and sort newest first", () => {
    const ep = endpointId("acme", "https://h/x");
    const a = deliveryId({ id: "msg_a", at: "2026-01-01T00:00:00Z" }, ep);
    const b = deliveryId({ id: "msg_b", at: "2026-01-02T00:00:00Z" }, ep);
    expect(a).toMatch(DELIVERY_ID_RE);
    expect(deliveryId({ id: "msg_a", at: "2026-01-01T00:00:00Z" }, ep)).toBe(a);
    expect(b < a).toBe(true);
  });
});

describe("webhook settings", () => {
  it("by default: the first retry within 30 s, the schedule over at least 24 h", () => {
    const s = webhookSettingsFrom({});
    expect(s.retryDelaysMs[0] ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(30_000);
    expect(s.retryDelaysMs.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(24 * 3_600_000);
  });

  it("reads a shortened schedule and refuses nonsense", () => {
    expect(webhookSettingsFrom({ DOCVERIFY_WEBHOOK_RETRY_SECONDS: "0.2, 1,2" }).retryDelaysMs).toEqual([
      200, 1000, 2000,
    ]);
    expect(() => webhookSettingsFrom({ DOCVERIFY_WEBHOOK_RETRY_SECONDS: "5,soon" })).toThrow(
      /DOCVERIFY_WEBHOOK_RETRY_SECONDS/,
    );
    expect(() => webhookSettingsFrom({ DOCVERIFY_WEBHOOK_ENDPOINT_CONCURRENCY: "0" })).toThrow(
      /ENDPOINT_CONCURRENCY/,
    );
  });
});
