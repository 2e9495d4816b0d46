import { beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ObjectNotFoundError, type ObjectStore } from "./ports.js";
import { readStepResult, STEP_RESULTS, writeStepResult } from "./step-results.js";
import { describeStoredRead, defineStored, readStored, StoredShapeError, writeStored } from "./stored.js";

/**
 * core/ keeps its own dependency rule in tests too, so this runs on a minimal in-memory ObjectStore (the
 * adapters have their own contract suites); every stored kind goes through these few lines.
 */
function memoryObjects(): ObjectStore & { data: Map<string, Buffer>; fail?: Error } {
  const data = new Map<string, Buffer>();
  const store = {
    data,
    fail: undefined as Error | undefined,
    async get(bucket: string, key: string) {
      if (store.fail) throw store.fail;
      const v = data.get(`${bucket}/${key}`);
      if (!v) throw new ObjectNotFoundError(bucket, key);
      return v;
    },
    async put(bucket: string, key: string, body: string | Buffer) {
      data.set(`${bucket}/${key}`, Buffer.from(body));
    },
  };
  return store as unknown as ObjectStore & { data: Map<string, Buffer>; fail?: Error };
}

const Thing = z.object({ name: z.string(), count: z.number().int().default(0) });
const THING = defineStored({ what: "the thing", key: (id: string) => `things/${id}.json`, schema: Thing });

let objects: ReturnType<typeof memoryObjects>;
beforeEach(() => {
  objects = memoryObjects();
});

describe("readStored / writeStored", () => {
  it("writes what the schema outputs and reads it back ok", async () => {
    expect(await writeStored(objects, "b", THING, { name: "a" }, "1")).toBe("things/1.json");
    expect(JSON.parse(objects.data.get("b/things/1.json")!.toString())).toEqual({ name: "a", count: 0 });
    expect(await readStored(objects, "b", THING, "1")).toEqual({
      kind: "ok",
      key: "things/1.json",
      value: { name: "a", count: 0 },
    });
  });

  it("missing, not JSON and the wrong shape are values, each saying what and where", async () => {
    const missing = await readStored(objects, "b", THING, "2");
    expect(missing).toEqual({ kind: "missing", key: "things/2.json" });
    await objects.put("b", "things/3.json", "{ half");
    const notJson = await readStored(objects, "b", THING, "3");
    expect(notJson).toMatchObject({ kind: "invalid", problem: "not_json", reason: "is not valid JSON" });
    await objects.put("b", "things/4.json", JSON.stringify({ name: "x", count: 1.5 }));
    const shape = await readStored(objects, "b", THING, "4");
    expect(shape).toMatchObject({ kind: "invalid", problem: "wrong_shape", at: "count" });
    if (missing.kind === "ok" || notJson.kind === "ok" || shape.kind === "ok") throw new Error("unreachable");
    expect(describeStoredRead(THING.what, missing)).toBe("The thing (things/2.json) is missing.");
    expect(describeStoredRead(THING.what, notJson)).toBe("The thing (things/3.json) is not valid JSON.");
    expect(describeStoredRead(THING.what, shape)).toMatch(
      /^The thing \(things\/4\.json\) does not have the expected shape \(count: .+\)\.$/,
    );
  });

  it("an unavailable object store is thrown (the caller's pass is retried), not read as missing", async () => {
    objects.fail = Object.assign(new Error("connect ECONNREFUSED"), { name: "StoreError" });
    await expect(readStored(objects, "b", THING, "1")).rejects.toThrow(/ECONNREFUSED/);
  });

  it("refuses to store a value of the wrong shape, naming the kind, the key and the field", async () => {
    await expect(writeStored(objects, "b", THING, { name: 7 } as never, "5")).rejects.toThrow(
      StoredShapeError,
    );
    await expect(writeStored(objects, "b", THING, { name: 7 } as never, "5")).rejects.toThrow(
      /^Refused to store the thing at things\/5\.json: it does not have the expected shape \(name: /,
    );
    expect(objects.data.size).toBe(0);
  });
});

describe("the stored kinds", () => {
  it("every step has its result kind at runs/<detection>/<step>.json", async () => {
    expect(Object.keys(STEP_RESULTS)).toEqual(["prepare", "check", "agent"]);
    for (const [step, kind] of Object.entries(STEP_RESULTS))
      expect(kind.key("det-1")).toBe(`runs/det-1/${step}.json`);
    await writeStepResult(objects, "b", "det-1", { step: "check", checks: [], discovered: ["qr_present"] });
    expect(await readStepResult(objects, "b", "det-1", "check")).toMatchObject({
      kind: "ok",
      value: { step: "check", discovered: ["qr_present"] },
    });
    // A prepare result stored where the check step's belongs is not a check result.
    await writeStepResult(objects, "b", "det-2", { step: "prepare" });
    await objects.put("b", "runs/det-2/check.json", objects.data.get("b/runs/det-2/prepare.json")!);
    expect(await readStepResult(objects, "b", "det-2", "check")).toMatchObject({
      kind: "invalid",
      problem: "wrong_shape",
    });
  });
});
