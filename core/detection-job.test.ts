import { decodeTime } from "ulid";
import { describe, expect, it } from "vitest";
import { batchDetectionName, DetectionJob, jobReportKeys } from "./detection-job.js";
import { newDetectionId } from "./ids.js";
import { OBJECT_NAME_RE } from "./resource.js";

const JOB = "9f1c2e4a-7b3d-4c5e-8f90-123456789abc";
const CREATED = "2026-11-02T10:00:00.000Z";

describe("batchDetectionName", () => {
  it("is deterministic for a job and key, and differs between keys and jobs", () => {
    const a = batchDetectionName(JOB, CREATED, "in/a.pdf");
    expect(batchDetectionName(JOB, CREATED, "in/a.pdf")).toBe(a);
    expect(batchDetectionName(JOB, CREATED, "in/b.pdf")).not.toBe(a);
    expect(batchDetectionName("0d9e8f7a-1111-4222-8333-444455556666", CREATED, "in/a.pdf")).not.toBe(a);
  });

  it("has the form of a detection id, with the job's creation time as its ULID time", () => {
    const name = batchDetectionName(JOB, CREATED, "x/y/z.png");
    expect(name).toMatch(/^det-[0-9a-hjkmnp-tv-z]{26}$/);
    expect(name).toMatch(OBJECT_NAME_RE);
    expect(decodeTime(name.slice(4).toUpperCase())).toBe(Date.parse(CREATED));
    const single = newDetectionId(Date.parse(CREATED) + 1);
    expect(name < single).toBe(true);
  });

  it("refuses a creation time that is not a time", () => {
    expect(() => batchDetectionName(JOB, "yesterday", "a")).toThrow(RangeError);
  });
});

describe("DetectionJob schema", () => {
  it("accepts a job and defaults forceError", () => {
    const job = DetectionJob.parse({
      apiVersion: "docverify.io/v1alpha1",
      kind: "DetectionJob",
      metadata: { name: JOB },
      spec: {
        connector: { type: "s3", bucketName: "inbox", prefixes: ["a/", "b/"] },
        output: { type: "s3", bucketName: "reports", prefix: "out/" },
        docType: "other",
        region: "US",
        submittedBy: "client-a",
      },
    });
    expect(job.spec.forceError).toBe(false);
    expect(jobReportKeys(JOB, job.spec.output)).toEqual({
      resultsKey: `out/${JOB}/results.jsonl`,
      summaryKey: `out/${JOB}/summary.json`,
    });
  });

  it("refuses a connector that is not s3 and an empty prefix list", () => {
    const base = {
      apiVersion: "docverify.io/v1alpha1",
      kind: "DetectionJob",
      metadata: { name: JOB },
      spec: {
        connector: { type: "gcs", bucketName: "inbox", prefixes: [] },
        output: { type: "s3", bucketName: "reports", prefix: "" },
        docType: "other",
        region: "US",
        submittedBy: "c",
      },
    };
    const r = DetectionJob.safeParse(base);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join("."))).toEqual(
      expect.arrayContaining(["spec.connector.type", "spec.connector.prefixes"]),
    );
  });
});
