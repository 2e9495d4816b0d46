import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import { createHarness, type Harness } from "../api/testdata/app-kit.js";
import { completeWithEvidence, sampleChecks } from "../api/testdata/evidence-kit.js";
import { keys } from "../core/detection.js";
import { runSubmit, type SubmitIo } from "./submit.js";

let dir: string;
let pdf: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "docverify-submit-"));
  pdf = path.join(dir, "Statement March.pdf");
  await writeFile(pdf, "%PDF-1.7\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n");
  await writeFile(path.join(dir, "empty.pdf"), "");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `docverify submit` with captured output. */
async function submit(args: string[], env: Record<string, string> = {}) {
  let out = "";
  let err = "";
  const io: SubmitIo = {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    env: { DOCVERIFY_CLIENT_ID: "alice", DOCVERIFY_CLIENT_SECRET: "alice-secret", ...env },
    pollMs: 10,
  };
  const code = await runSubmit(args, io);
  return { code, out, err };
}

describe("docverify submit: options are checked before anything is sent", () => {
  let requests = 0;
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      requests++;
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  it.each([
    [
      ["--doc-type", "bankstatement"],
      /--doc-type "bankstatement" is not a document type; use one of: bank_statement, /,
    ],
    [["--region", "XX"], /--region "XX" is not an ISO 3166-1 alpha-2 region code/],
    [["--timeout", "soon"], /--timeout "soon" is not a number of seconds greater than 0\./],
    [["--url", "ftp://host"], /The service URL "ftp:\/\/host" is not an http\(s\) URL/],
    [["--bogus"], /Unknown option '--bogus'/],
  ])("%j → exit 2 with a sentence, nothing sent", async (extra, message) => {
    const r = await submit([pdf, "--url", url, ...extra]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).not.toMatch(/[{[]"/);
    expect(requests).toBe(0);
  });

  it("--evidence needs a directory and the verdict", async () => {
    const noWait = await submit([pdf, "--url", url, "--evidence", dir, "--no-wait"]);
    expect(noWait.code).toBe(2);
    expect(noWait.err).toMatch(/--evidence needs the verdict: leave out --no-wait/);
    const file = await submit([pdf, "--url", url, "--evidence", pdf]);
    expect(file.code).toBe(2);
    expect(file.err).toMatch(/--evidence .* is not a directory\./);
    expect(requests).toBe(0);
  });

  it("refuses a missing, empty or second target the same way", async () => {
    for (const [args, message] of [
      [[path.join(dir, "nope.pdf")], /nope\.pdf does not exist/],
      [[path.join(dir, "empty.pdf")], /empty\.pdf is empty\./],
      [[dir], /is not a file\./],
      [[pdf, pdf], /Give exactly one file or URL; got 2/],
      [[], /Give the file or the http\(s\) URL/],
    ] as const) {
      const r = await submit([...args, "--url", url]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(message);
    }
    expect(requests).toBe(0);
  });

  it("--version and --help print and exit 0 without sending anything", async () => {
    const v = await submit(["--version"]);
    expect(v).toMatchObject({ code: 0, out: "docverify 0.1.0\n" });
    const h = await submit(["--help"]);
    expect(h.code).toBe(0);
    expect(h.out).toMatch(/--json\s+print the final DetectionDetail as JSON/);
    expect(requests).toBe(0);
  });

  it("an unreachable service is a sentence", async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const r = await submit([pdf, "--url", `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `docverify submit: Cannot reach the service at http://127.0.0.1:${port} (ECONNREFUSED); is it running, and is --url right?\n`,
    );
  });
});

describe("docverify submit against the API", () => {
  let h: Harness;
  let server: ReturnType<typeof serve>;
  let url: string;
  beforeAll(async () => {
    h = await createHarness({ config: { maxDocumentBytes: 64 * 1024 } });
    server = serve({ fetch: h.app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise((r) => server.once("listening", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    h.deps.publicUrl = url;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await h.close();
  });

  it("accepts a doc_type alias, which the service stores as its canonical type", async () => {
    const r = await submit([pdf, "--url", url, "--doc-type", "passport", "--no-wait", "--json"]);
    expect(r.code, r.err).toBe(0);
    const created = JSON.parse(r.out) as { id: string };
    expect((await h.store.get(created.id))?.spec.docType).toBe("id_document");
  });

  it("sends an Idempotency-Key and retries a create whose answer was lost without a second detection", async () => {
    const create = h.store.create.bind(h.store);
    let failures = 1;
    const keys: (string | undefined)[] = [];
    h.store.create = async (obj) => {
      keys.push(obj.metadata.labels?.["docverify.io/idempotency-key"]);
      const made = await create(obj);
      // Created, but the answer is lost (as when the service dies before answering).
      if (failures-- > 0) throw new Error("connection reset after the create");
      return made;
    };
    try {
      const before = (await h.store.list()).items.length;
      const r = await submit([
        "https://example.com/retried.pdf",
        "--url",
        url,
        "--no-wait",
        "--json",
        "--idempotency-key",
        "cli-retry-1",
      ]);
      expect(r.code, r.err).toBe(0);
      const created = JSON.parse(r.out) as { id: string };
      const after = (await h.store.list()).items;
      expect(after.length).toBe(before + 1);
      expect(after.map((d) => d.metadata.name)).toContain(created.id);
      expect(keys).toHaveLength(1); // the retry found the first create: nothing was created twice
      expect(keys[0]).toMatch(/^[0-9a-f]{40}$/);
    } finally {
      h.store.create = create;
    }
    // Without the option a fresh key is sent on every run: two runs, two detections.
    const before = (await h.store.list()).items.length;
    for (let i = 0; i < 2; i++) {
      const r = await submit(["https://example.com/twice.pdf", "--url", url, "--no-wait"]);
      expect(r.code, r.err).toBe(0);
    }
    const labelled = (await h.store.list()).items.slice(before);
    expect(labelled).toHaveLength(2);
    for (const d of labelled)
      expect(d.metadata.labels?.["docverify.io/idempotency-key"]).toMatch(/^[0-9a-f]{40}$/);
  });

  it("uploads a file declaring its name, type and size, and creates the detection", async () => {
    const r = await submit([
      pdf,
      "--url",
      url,
      "--doc-type",
      "bank_statement",
      "--region",
      "gb",
      "--no-wait",
      "--json",
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe(""); // --json: nothing but the JSON
    const created = JSON.parse(r.out) as { id: string; status: string };
    expect(created.status).toBe("QUEUED");
    const d = (await h.store.get(created.id))!;
    expect(d.spec).toMatchObject({ docType: "bank_statement", region: "GB" });
    const uploadId = d.spec.source.uploadId!;
    const meta = JSON.parse((await h.deps.objects.get(h.deps.bucket, keys.uploadMeta(uploadId))).toString());
    expect(meta).toMatchObject({
      filename: "Statement March.pdf",
      content_type: "application/pdf",
      size_bytes: 50,
      size: 50,
      detection: created.id,
    });
  });

  it("--evidence DIR writes evidence.json and the page images, and prints the reviewer page's link", async () => {
    const out = path.join(dir, "evidence-out");
    const known = new Set((await h.store.list()).items.map((d) => d.metadata.name));
    const running = submit([
      pdf,
      "--url",
      url,
      "--doc-type",
      "bank_statement",
      "--region",
      "GB",
      "--evidence",
      out,
    ]);
    // Play the operator: once the detection exists, complete it with evidence.
    let id: string | undefined;
    while (!id) {
      id = (await h.store.list()).items.map((d) => d.metadata.name).find((n) => !known.has(n));
      if (!id) await new Promise((r) => setTimeout(r, 5));
    }
    await completeWithEvidence(h, id, sampleChecks(), { firstSaved: [1] });
    const r = await running;
    expect(r.code, r.err).toBe(0);
    const evidence = JSON.parse(await readFile(path.join(out, "evidence.json"), "utf8"));
    expect(evidence).toMatchObject({ id, status: "COMPLETED", findings_total: 2, groups_total: 1 });
    for (const name of ["page-1.png", "page-1-first-saved.png"]) {
      expect((await sharp(await readFile(path.join(out, name))).metadata()).format).toBe("png");
    }
    expect(r.out).toContain(
      `Evidence:  2 findings in 1 group; evidence.json and 2 page images written to ${out}`,
    );
    expect(r.out).toMatch(
      new RegExp(
        `Review page: ${url}/review/${id}\\?token=\\d+\\.[A-Za-z0-9_-]+\\.[0-9a-f]{64} \\(valid until `,
      ),
    );
  });

  it("prints the service's refusals as sentences, never as JSON", async () => {
    const creds = await submit([pdf, "--url", url], { DOCVERIFY_CLIENT_SECRET: "wrong" });
    expect(creds.code).toBe(1);
    expect(creds.err).toBe(
      "docverify submit: The service refused the credentials: Client authentication failed: unknown client or wrong secret.\n",
    );
    const long = await submit([`https://example.com/${"a".repeat(3000)}.pdf`, "--url", url]);
    expect(long.code).toBe(1);
    expect(long.err).toMatch(/^docverify submit: The service refused the detection: source_url: .+\.\n$/);
    expect(long.err).not.toMatch(/[{[]/);
  });
});
