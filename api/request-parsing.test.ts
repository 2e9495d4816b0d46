/**
 * Hostile request bodies on every JSON route: however deep, wide or large, the answer is a 413 or a 422
 * of bounded size, never a 500; the 422 never echoes unbounded input.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DETECTION_JOB_KIND, type DetectionJob } from "../core/detection-job.js";
import { MemoryResourceStore } from "../platform/local/memory-resource-store.js";
import { call, createHarness, type Harness, TEST_CLIENTS } from "./testdata/app-kit.js";

/** 30 000 levels of arrays are 60 000 bytes, under the 64 KiB limit: parsed, then refused by validation. */
const DEPTH = 30_000;
const deepArray = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
/** Objects take 7 bytes a level: 9 000 levels fit in the limit, 30 000 do not (413). */
const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;
const OBJECT_DEPTH = 9_000;

const valid = {
  "/v1/detection": { source_url: "https://docs.example.com/a.pdf", doc_type: "invoice", region: "US" },
  "/v1/uploads": { filename: "a.pdf" },
  "/jobs": {
    connector: { type: "s3", bucket_name: "inbox", prefixes: ["a/"] },
    output: { type: "s3", bucket_name: "reports", prefix: "out/" },
  },
} as const;
const ROUTES = Object.keys(valid) as (keyof typeof valid)[];

/** `valid[route]` with the JSON text `raw` put at `field` (a top-level key, possibly unknown). */
function withField(route: keyof typeof valid, field: string, raw: string): string {
  const rest = JSON.stringify({ ...valid[route], [field]: null });
  return rest.replace(`"${field}":null`, `"${field}":${raw}`);
}

let h: Harness;
let token: string;
beforeAll(async () => {
  h = await createHarness({
    clients: [
      ...TEST_CLIENTS,
      {
        client_id: "all",
        client_secret: "all-secret",
        scopes: ["DocumentVerification:*"],
        buckets: ["inbox", "reports"],
      },
    ],
  });
  h.deps.jobs = new MemoryResourceStore<DetectionJob>(DETECTION_JOB_KIND, { now: () => h.clock.now() });
  token = await h.token("all");
});
afterAll(async () => {
  await h.close();
});

const post = (route: string, raw: string) =>
  call(h, "POST", route, { token, raw, headers: { "content-type": "application/json" } });

/** The answer is a well-formed 422 whose serialised form stays small. */
function expectBounded422(r: Awaited<ReturnType<typeof post>>, what: string) {
  expect(r.status, what).toBe(422);
  expect(Array.isArray(r.body.detail), what).toBe(true);
  expect(JSON.stringify(r.body).length, what).toBeLessThan(16 * 1024);
}

describe.each(ROUTES)("POST %s with hostile JSON", (route) => {
  it(`answers 422, not 500, for a body nested ${DEPTH} levels deep`, async () => {
    for (const raw of [deepArray(DEPTH), deepObject(OBJECT_DEPTH)]) {
      expectBounded422(await post(route, raw), "top level");
    }
    expect((await post(route, deepObject(DEPTH))).status).toBe(413);
  });

  it("answers 422 for deep values in every known field and in an unknown one, echoing no deep input", async () => {
    const fields = [...Object.keys(valid[route]), "unexpected"];
    for (const field of fields) {
      for (const raw of [deepArray(DEPTH - 100), deepObject(OBJECT_DEPTH)]) {
        const r = await post(route, withField(route, field, raw));
        expectBounded422(r, `${field}: ${raw.slice(0, 5)}`);
        for (const issue of r.body.detail) {
          // A deep or large value is never echoed; small ones may be.
          if (issue.input !== undefined) expect(JSON.stringify(issue.input).length).toBeLessThan(600);
        }
      }
    }
  });

  it("truncates a long string it echoes", async () => {
    const r = await post(route, withField(route, "unexpected", JSON.stringify("x".repeat(50_000))));
    expectBounded422(r, "long string");
    const issue = r.body.detail.find((d: { loc: string[] }) => d.loc.join(".") === "body.unexpected");
    expect(issue.input).toBe(`${"x".repeat(200)}…`);
  });

  it("answers 422 with a bounded list for thousands of unknown keys", async () => {
    const wide = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i]));
    const r = await post(route, JSON.stringify({ ...valid[route], ...wide }));
    expectBounded422(r, "wide");
    expect(r.body.detail.length).toBeLessThanOrEqual(50);
  });

  it("answers 413 for a body over 64 KiB, declared or streamed", async () => {
    const big = JSON.stringify({ ...valid[route], unexpected: "x".repeat(70 * 1024) });
    expect((await post(route, big)).status).toBe(413);
    const res = await h.app.request(route, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 100; i++) controller.enqueue(new TextEncoder().encode(" ".repeat(1024)));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ detail: "The request body is larger than the limit of 65536 bytes." });
  });

  it("answers 422 for malformed JSON, echoing a bounded excerpt", async () => {
    const r = await post(route, `{"a": "${"y".repeat(10_000)}`);
    expectBounded422(r, "malformed");
    expect(r.body.detail[0].type).toBe("json_invalid");
  });
});

describe("every operation with a request body", () => {
  it("is one of the routes tested here", async () => {
    const spec = (await (await h.app.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
    };
    const withJson: string[] = [];
    for (const [p, ops] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (op.requestBody?.content["application/json"]) withJson.push(`${method.toUpperCase()} ${p}`);
      }
    }
    // The feedback route's hostile bodies are answered in api/detections/feedback.test.ts (it needs a detection).
    expect(withJson.sort()).toEqual(
      [...ROUTES.map((r) => `POST ${r}`), "PUT /v1/detection/{detection_id}/feedback"].sort(),
    );
  });
});
