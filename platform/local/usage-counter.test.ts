import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocalUsageCounter } from "./usage-counter.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "usage-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("local usage counter", () => {
  it("consumes up to the limit and then refuses", async () => {
    const counter = createLocalUsageCounter(dir);
    expect(await counter.tryConsume("a", "sample", 2)).toBe(true);
    expect(await counter.tryConsume("a", "sample", 2)).toBe(true);
    expect(await counter.tryConsume("a", "sample", 2)).toBe(false);
    expect(await counter.used("a", "sample")).toBe(2);
    expect(await counter.used("b", "sample")).toBe(0);
  });

  it("a zero limit never consumes", async () => {
    const counter = createLocalUsageCounter(dir);
    expect(await counter.tryConsume("a", "sample", 0)).toBe(false);
    expect(await counter.used("a", "sample")).toBe(0);
  });

  it("survives a new instance on the same directory (durable)", async () => {
    await createLocalUsageCounter(dir).tryConsume("client/with:odd chars", "sample", 5);
    const again = createLocalUsageCounter(dir);
    expect(await again.used("client/with:odd chars", "sample")).toBe(1);
    const files = await readdir(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^[0-9a-f]{32}\.json$/);
    const content = JSON.parse(await readFile(path.join(dir, files[0]!), "utf8"));
    expect(content).toEqual({ client_id: "client/with:odd chars", counts: { sample: 1 } });
  });

  it("concurrent calls never exceed the limit", async () => {
    const counter = createLocalUsageCounter(dir);
    const results = await Promise.all(Array.from({ length: 20 }, () => counter.tryConsume("a", "sample", 7)));
    expect(results.filter(Boolean)).toHaveLength(7);
    expect(await counter.used("a", "sample")).toBe(7);
  });

  it("refund gives a unit back and never goes below zero", async () => {
    const counter = createLocalUsageCounter(dir);
    await counter.tryConsume("a", "sample", 1);
    await counter.refund("a", "sample");
    await counter.refund("a", "sample");
    expect(await counter.used("a", "sample")).toBe(0);
    expect(await counter.tryConsume("a", "sample", 1)).toBe(true);
  });

  it("leaves no temp files behind", async () => {
    const counter = createLocalUsageCounter(dir);
    await Promise.all([counter.tryConsume("a", "x", 9), counter.tryConsume("b", "x", 9)]);
    const files = await readdir(dir);
    expect(files.filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});
