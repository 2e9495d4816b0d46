import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../core/ports.js";
import { isGoneStatus, KubeAccessError, toStoreError } from "./kube-errors.js";

const status = (code: number, reason: string, message: string) =>
  new ApiException(
    code,
    "x",
    { kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message },
    {},
  );
const ctx = (verb: string) => ({ verb, what: "Detection det-1" });
const reasonOf = (e: Error) => (e instanceof StoreError ? e.reason : e.name);

describe("toStoreError", () => {
  it("maps 404 to NotFound with the apiserver's message", () => {
    const e = toStoreError(status(404, "NotFound", 'detections.docverify.io "det-1" not found'), ctx("get"));
    expect(reasonOf(e)).toBe("NotFound");
    expect(e.message).toBe('detections.docverify.io "det-1" not found');
  });

  it("maps 409 AlreadyExists to AlreadyExists and 409 Conflict to Conflict", () => {
    expect(reasonOf(toStoreError(status(409, "AlreadyExists", "exists"), ctx("create")))).toBe(
      "AlreadyExists",
    );
    const c = toStoreError(status(409, "Conflict", "the object has been modified"), ctx("update"));
    expect(reasonOf(c)).toBe("Conflict");
    expect(c.message).toMatch(/has been modified/);
  });

  it("without a Status body, a 409 on create is AlreadyExists and elsewhere Conflict", () => {
    const bare = (code: number) => new ApiException(code, "x", undefined, {});
    expect(reasonOf(toStoreError(bare(409), ctx("create")))).toBe("AlreadyExists");
    expect(reasonOf(toStoreError(bare(409), ctx("update the status of")))).toBe("Conflict");
    expect(toStoreError(bare(409), ctx("update")).message).toMatch(/Detection det-1/);
  });

  it("maps 410 to Gone, also from a watch error's statusCode", () => {
    expect(reasonOf(toStoreError(status(410, "Expired", "too old resource version"), ctx("watch")))).toBe(
      "Gone",
    );
    expect(reasonOf(toStoreError(Object.assign(new Error("Gone"), { statusCode: 410 }), ctx("watch")))).toBe(
      "Gone",
    );
  });

  it("maps 422 and 400 to Invalid and keeps the apiserver's explanation", () => {
    const msg =
      'Detection.docverify.io "det-1" is invalid: spec.source: Invalid value: "object": exactly one of url, uploadId or object must be set';
    const e = toStoreError(status(422, "Invalid", msg), ctx("create"));
    expect(reasonOf(e)).toBe("Invalid");
    expect(e.message).toBe(msg);
    expect(reasonOf(toStoreError(status(400, "BadRequest", "bad"), ctx("create")))).toBe("Invalid");
  });

  it("maps 413 and etcd's 'request is too large' to TooLarge; other 500s stay Unavailable", () => {
    expect(
      reasonOf(toStoreError(status(413, "RequestEntityTooLarge", "limit is 3145728"), ctx("update"))),
    ).toBe("TooLarge");
    const etcd = toStoreError(
      status(500, "InternalError", "etcdserver: request is too large"),
      ctx("update"),
    );
    expect(reasonOf(etcd)).toBe("TooLarge");
    expect(etcd.message).toMatch(/request is too large/);
    expect(reasonOf(toStoreError(status(500, "InternalError", "boom"), ctx("update")))).toBe("Unavailable");
  });

  it("maps 403 to KubeAccessError naming the verb, the object and where RBAC lives", () => {
    const e = toStoreError(status(403, "Forbidden", "user cannot delete"), ctx("delete"));
    expect(e).toBeInstanceOf(KubeAccessError);
    expect(e.message).toMatch(/refused to delete Detection det-1 \(403: user cannot delete\).*deploy\/rbac/);
  });

  it("maps 5xx, 429 and network failures to Unavailable", () => {
    expect(reasonOf(toStoreError(status(503, "ServiceUnavailable", "etcd"), ctx("list")))).toBe(
      "Unavailable",
    );
    expect(reasonOf(toStoreError(status(429, "TooManyRequests", "slow down"), ctx("list")))).toBe(
      "Unavailable",
    );
    const net = new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }),
    });
    const e = toStoreError(net, ctx("list"));
    expect(reasonOf(e)).toBe("Unavailable");
    expect(e.message).toMatch(/could not be reached.*ECONNREFUSED/);
  });

  it("passes store errors and unknown errors through unchanged", () => {
    const se = new StoreError("Conflict", "c");
    expect(toStoreError(se, ctx("update"))).toBe(se);
    const other = new Error("boom");
    expect(toStoreError(other, ctx("get"))).toBe(other);
    expect(toStoreError("text", ctx("get")).message).toBe("text");
  });
});

describe("isGoneStatus", () => {
  it("recognises the watch ERROR object of an expired resourceVersion", () => {
    expect(isGoneStatus({ kind: "Status", code: 410, reason: "Expired", message: "too old" })).toBe(true);
    expect(isGoneStatus({ kind: "Status", code: 500, reason: "InternalError" })).toBe(false);
    expect(isGoneStatus(undefined)).toBe(false);
  });
});
