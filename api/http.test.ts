import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keys } from "../core/detection.js";
import { createHarness, type Harness } from "./testdata/app-kit.js";

/** The app over real HTTP on 127.0.0.1 (port 0): what bin/ serves. */
let h: Harness;
let base: string;
let server: ReturnType<typeof serve>;

beforeAll(async () => {
  let fetchApp: (req: Request) => Response | Promise<Response> = () =>
    new Response("starting", { status: 503 });
  server = serve({ fetch: (req) => fetchApp(req), port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  h = await createHarness({ publicUrl: base, config: { maxDocumentBytes: 64 * 1024 } });
  fetchApp = h.app.fetch;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await h.close();
});

describe("over HTTP", () => {
  it("token → reserve → PUT the signed URL → create → get → delete", async () => {
    const tokenRes = await fetch(`${base}/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: "alice",
        client_secret: "alice-secret",
      }),
    });
    expect(tokenRes.status).toBe(200);
    const { access_token } = (await tokenRes.json()) as { access_token: string };
    const auth = { authorization: `Bearer ${access_token}` };

    const up = (await (await fetch(`${base}/v1/uploads`, { method: "POST", headers: auth })).json()) as {
      upload_id: string;
      upload_url: string;
    };
    expect(up.upload_url.startsWith(`${base}/uploads/`)).toBe(true);
    const bytes = Buffer.alloc(40 * 1024, 7);
    const putRes = await fetch(up.upload_url, {
      method: "PUT",
      body: bytes,
      headers: { "content-type": "application/pdf", "content-disposition": 'attachment; filename="big.pdf"' },
    });
    expect(putRes.status).toBe(200);
    expect(await putRes.json()).toEqual({ upload_id: up.upload_id, size_bytes: bytes.length });
    expect((await h.deps.objects.get(h.deps.bucket, keys.upload(up.upload_id))).equals(bytes)).toBe(true);

    const tooBig = await fetch(up.upload_url, { method: "PUT", body: Buffer.alloc(65 * 1024) });
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as { detail: string }).detail).toMatch(/65536 bytes/);
    await fetch(up.upload_url, { method: "PUT", body: bytes });

    const created = await fetch(`${base}/v1/detection`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ upload_id: up.upload_id, doc_type: "contract", region: "fr" }),
    });
    expect(created.status).toBe(202);
    const { id } = (await created.json()) as { id: string };
    const location = created.headers.get("location")!;
    const got = await fetch(`${base}${location}`, { headers: auth });
    expect(got.status).toBe(200);
    expect(((await got.json()) as { id: string }).id).toBe(id);

    const del = await fetch(`${base}${location}`, { method: "DELETE", headers: auth });
    expect(await del.json()).toEqual({ id, deleted: true });
    expect((await fetch(`${base}${location}`, { headers: auth })).status).toBe(404);
  });

  it("malformed JSON and an unknown path answer JSON over the wire", async () => {
    const res = await fetch(`${base}/v1/detection`, {
      method: "POST",
      headers: { authorization: "Bearer x", "content-type": "application/json" },
      body: "{",
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const nf = await fetch(`${base}/nope`);
    expect(nf.status).toBe(404);
    expect(await nf.json()).toEqual({ detail: "Not Found" });
  });
});
