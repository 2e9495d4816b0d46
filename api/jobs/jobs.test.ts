import { afterEach, describe, expect, it } from "vitest";
import { DETECTION_JOB_KIND, type DetectionJob } from "../../core/detection-job.js";
import { failure } from "../../core/failure-codes.js";
import { MemoryResourceStore } from "../../platform/local/memory-resource-store.js";
import { call, createHarness, type Harness, TEST_CLIENTS } from "../testdata/app-kit.js";

const CLIENTS = [
  ...TEST_CLIENTS,
  {
    client_id: "batcher",
    client_secret: "batcher-secret",
    scopes: ["DocumentVerification:jobs:*", "DocumentVerification:detections:get"],
    buckets: ["inbox", "reports"],
  },
  {
    client_id: "batcher2",
    client_secret: "batcher2-secret",
    scopes: ["DocumentVerification:*"],
    buckets: ["inbox", "reports", "docverify"],
  },
  {
    client_id: "getter",
    client_secret: "getter-secret",
    scopes: ["DocumentVerification:jobs:get"],
    buckets: ["inbox", "reports"],
  },
];

const BODY = {
  connector: { type: "s3", bucket_name: "inbox", prefixes: ["2026-11-02/", "scans/"] },
  output: { type: "s3", bucket_name: "reports", prefix: "out/" },
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let h: Harness;
let jobs: MemoryResourceStore<DetectionJob>;
afterEach(async () => {
  await h?.close();
});

async function setup(opts: { withJobs?: boolean } = {}) {
  h = await createHarness({ clients: CLIENTS });
  jobs = new MemoryResourceStore<DetectionJob>(DETECTION_JOB_KIND, { now: () => h.clock.now() });
  if (opts.withJobs !== false) h.deps.jobs = jobs;
}

describe("POST /jobs: happy path", () => {
  it("answers 202 {job_id, status: QUEUED} and stores the job with defaults", async () => {
    await setup();
    const token = await h.token("batcher");
    const r = await call(h, "POST", "/jobs", { token, body: BODY });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body).toEqual({ job_id: expect.stringMatching(UUID), status: "QUEUED" });
    expect(r.headers.get("location")).toBe(`/jobs/${r.body.job_id}`);
    const stored = await jobs.get(r.body.job_id);
    expect(stored?.spec).toEqual({
      connector: { type: "s3", bucketName: "inbox", prefixes: ["2026-11-02/", "scans/"] },
      output: { type: "s3", bucketName: "reports", prefix: "out/" },
      forceError: false,
      docType: "other",
      region: h.deps.config.defaultRegion,
      submittedBy: "batcher",
    });
    expect(stored?.metadata.labels?.["docverify.io/client"]).toBe("batcher");
  });

  it("takes force_error, doc_type and region (any case)", async () => {
    await setup();
    const token = await h.token("batcher");
    const r = await call(h, "POST", "/jobs", {
      token,
      body: { ...BODY, force_error: true, doc_type: "payslip", region: "de" },
    });
    expect(r.status).toBe(202);
    expect((await jobs.get(r.body.job_id))?.spec).toMatchObject({
      forceError: true,
      docType: "payslip",
      region: "DE",
    });
  });

  it("takes a doc_type alias and stores its canonical type", async () => {
    await setup();
    const token = await h.token("batcher");
    const r = await call(h, "POST", "/jobs", { token, body: { ...BODY, doc_type: "driving_licence" } });
    expect(r.status).toBe(202);
    expect((await jobs.get(r.body.job_id))?.spec.docType).toBe("id_document");
  });
});

describe("GET /jobs/{job_id}", () => {
  it("answers the job's progress in the documented shape", async () => {
    await setup();
    const token = await h.token("batcher");
    const { body } = await call(h, "POST", "/jobs", { token, body: BODY });
    const queued = await call(h, "GET", `/jobs/${body.job_id}`, { token });
    expect(queued.status).toBe(200);
    expect(queued.body).toEqual({
      job_id: body.job_id,
      status: "QUEUED",
      failure_code: null,
      failure_message: null,
      created_at: h.clock.now().toISOString(),
      completed_at: null,
      counts: { total: 0, queued: 0, running: 0, completed: 0, failed: 0 },
      report: null,
    });

    const job = (await jobs.get(body.job_id))!;
    await jobs.updateStatus({
      ...job,
      status: {
        phase: "Completed",
        completedAt: "2030-01-02T03:10:00.000Z",
        counts: { total: 3, queued: 0, running: 0, completed: 2, failed: 1 },
        listing: { done: true, continueAfter: "scans/x.pdf" },
        report: { bucket: "reports", resultsKey: "out/a/results.jsonl", summaryKey: "out/a/summary.json" },
      },
    });
    const done = await call(h, "GET", `/jobs/${body.job_id.toUpperCase()}`, { token });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      status: "COMPLETED",
      completed_at: "2030-01-02T03:10:00.000Z",
      counts: { total: 3, queued: 0, running: 0, completed: 2, failed: 1 },
      report: { bucket: "reports", results_key: "out/a/results.jsonl", summary_key: "out/a/summary.json" },
    });
  });

  it("reports a failed job's failure_code and message", async () => {
    await setup();
    const token = await h.token("batcher");
    const { body } = await call(h, "POST", "/jobs", { token, body: { ...BODY, force_error: true } });
    const job = (await jobs.get(body.job_id))!;
    await jobs.updateStatus({ ...job, status: { phase: "Failed", failure: failure("forced_error") } });
    const r = await call(h, "GET", `/jobs/${body.job_id}`, { token });
    expect(r.body).toMatchObject({
      status: "FAILED",
      failure_code: "forced_error",
      failure_message: failure("forced_error").message,
      report: null,
    });
  });

  it("answers 404 for another client's job and for an unknown one", async () => {
    await setup();
    const { body } = await call(h, "POST", "/jobs", { token: await h.token("batcher"), body: BODY });
    const other = await call(h, "GET", `/jobs/${body.job_id}`, { token: await h.token("alice") });
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ detail: "Job not found" });
    const unknown = await call(h, "GET", "/jobs/00000000-0000-4000-8000-000000000000", {
      token: await h.token("batcher"),
    });
    expect(unknown.status).toBe(404);
  });

  it("answers 422 for an id that is not a UUID", async () => {
    await setup();
    const r = await call(h, "GET", "/jobs/not-a-job", { token: await h.token("batcher") });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(["path", "job_id"]);
  });
});

describe("errors", () => {
  it("answers 422 in the HTTPValidationError shape for bad bodies", async () => {
    await setup();
    const token = await h.token("batcher");
    const cases: [unknown, (string | number)[]][] = [
      [{ ...BODY, connector: { ...BODY.connector, type: "gcs" } }, ["body", "connector", "type"]],
      [{ ...BODY, connector: { ...BODY.connector, prefixes: [] } }, ["body", "connector", "prefixes"]],
      [
        { ...BODY, connector: { ...BODY.connector, prefixes: ["a//b"] } },
        ["body", "connector", "prefixes", 0],
      ],
      [
        { ...BODY, connector: { ...BODY.connector, bucket_name: "In_Box" } },
        ["body", "connector", "bucket_name"],
      ],
      [{ ...BODY, output: { type: "s3", bucket_name: "reports" } }, ["body", "output", "prefix"]],
      [{ connector: BODY.connector }, ["body", "output"]],
      [{ ...BODY, force_error: "yes" }, ["body", "force_error"]],
      [{ ...BODY, region: "XX" }, ["body", "region"]],
      [{ ...BODY, doc_type: "novel" }, ["body", "doc_type"]],
      [{ ...BODY, colour: "red" }, ["body", "colour"]],
    ];
    for (const [body, loc] of cases) {
      const r = await call(h, "POST", "/jobs", { token, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(
        r.body.detail.map((d: { loc: unknown }) => d.loc),
        JSON.stringify(r.body),
      ).toContainEqual(loc);
    }
    const malformed = await call(h, "POST", "/jobs", {
      token,
      raw: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].type).toBe("json_invalid");
  });

  it("answers 403 naming a bucket the client's list does not hold", async () => {
    await setup();
    const token = await h.token("batcher");
    const input = await call(h, "POST", "/jobs", {
      token,
      body: { ...BODY, connector: { ...BODY.connector, bucket_name: "someone-elses" } },
    });
    expect(input.status).toBe(403);
    expect(input.body.detail).toContain('"someone-elses"');
    const output = await call(h, "POST", "/jobs", {
      token,
      body: { ...BODY, output: { ...BODY.output, bucket_name: "elsewhere" } },
    });
    expect(output.status).toBe(403);
    expect(output.body.detail).toContain('"elsewhere"');
    // A client without a buckets list may name no bucket at all.
    const none = await call(h, "POST", "/jobs", { token: await h.token("alice"), body: BODY });
    expect(none.status).toBe(403);
    expect(none.body.detail).toContain('"inbox"');
    expect(await jobs.list()).toMatchObject({ items: [] });
  });

  it("never lets a job read or write the service's own bucket, even when listed", async () => {
    await setup();
    const token = await h.token("batcher2");
    for (const body of [
      { ...BODY, connector: { ...BODY.connector, bucket_name: "docverify" } },
      { ...BODY, output: { ...BODY.output, bucket_name: "docverify" } },
    ]) {
      const r = await call(h, "POST", "/jobs", { token, body });
      expect(r.status).toBe(403);
      expect(r.body.detail).toContain('"docverify"');
    }
  });

  it("orders 401 → 403 → 422 → 404", async () => {
    await setup();
    const none = await call(h, "POST", "/jobs", { body: BODY });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ detail: "Missing bearer token" });
    expect((await call(h, "GET", "/jobs/not-a-uuid")).status).toBe(401);

    const bob = await h.token("bob"); // detections:* only
    const noScope = await call(h, "POST", "/jobs", { token: bob, body: { bad: true } });
    expect(noScope.status).toBe(403);
    expect(noScope.body).toEqual({ detail: "Missing required scopes: DocumentVerification:jobs:create" });
    const noGet = await call(h, "GET", "/jobs/not-a-uuid", { token: bob });
    expect(noGet.status).toBe(403);
    expect(noGet.body).toEqual({ detail: "Missing required scopes: DocumentVerification:jobs:get" });

    const getter = await h.token("getter"); // jobs:get only
    expect((await call(h, "POST", "/jobs", { token: getter, body: BODY })).status).toBe(403);
    expect((await call(h, "GET", "/jobs/not-a-uuid", { token: getter })).status).toBe(422);
    expect(
      (await call(h, "GET", "/jobs/00000000-0000-4000-8000-000000000000", { token: getter })).status,
    ).toBe(404);
  });

  it("answers 503 with a detail when the deployment has no job store", async () => {
    await setup({ withJobs: false });
    const token = await h.token("batcher");
    const r = await call(h, "POST", "/jobs", { token, body: BODY });
    expect(r.status).toBe(503);
    expect(r.body.detail).toMatch(/not enabled/);
    expect((await call(h, "GET", "/jobs/00000000-0000-4000-8000-000000000000", { token })).status).toBe(503);
  });

  it("lists both operations in the OpenAPI document", async () => {
    await setup();
    const doc = (await call(h, "GET", "/openapi.json")).body;
    expect(doc.paths["/jobs"].post.responses).toHaveProperty("202");
    expect(doc.paths["/jobs/{job_id}"].get.responses).toHaveProperty("200");
    expect(doc.components.schemas).toHaveProperty("CreateJobRequest");
    expect(doc.components.schemas).toHaveProperty("JobDetail");
  });
});
