import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type DetectionPolicy, detectionPolicyResource, policyInForce } from "../core/detection-policy.js";
import { MemoryResourceStore } from "../platform/local/memory-resource-store.js";
import { createPolicyFiles } from "../platform/local/policy-files.js";
import { createPolicyReconciler, policySourceOf } from "./policy-controller.js";

const clock = { now: () => new Date("2030-01-02T03:04:05Z") };
const silent = pino({ level: "silent" });
const newStore = () => new MemoryResourceStore<DetectionPolicy>("DetectionPolicy", clock);
const condition = (p: DetectionPolicy | undefined, type: string) =>
  p?.status?.conditions?.find((c) => c.type === type);

const acme = (version: number, extra: Record<string, unknown> = {}) => ({
  version,
  producers: { flagged: [{ pattern: "Forgery Works", level: "proof", decidesAlone: true }] },
  ...extra,
});

describe("the DetectionPolicy reconciler", () => {
  it("puts a valid policy in force (Valid, InUse, observedGeneration)", async () => {
    const store = newStore();
    const r = createPolicyReconciler({ store, clock, log: silent });
    await store.create(detectionPolicyResource("acme", acme(1)));
    await r.reconcile("acme");
    const p = await store.get("acme");
    expect(condition(p, "Valid")).toMatchObject({ status: "True", observedGeneration: 1 });
    expect(condition(p, "InUse")).toMatchObject({ status: "True", reason: "InForce" });
    expect(p?.status?.inForce?.version).toBe(1);
    const src = policySourceOf(store);
    expect((await src.inForce("acme"))?.producers.flagged[0]?.pattern).toBe("Forgery Works");
    expect(await src.inForce("nobody")).toBeUndefined();
  });

  it("refuses an invalid edit with the field that is wrong, and keeps the version in force", async () => {
    const store = newStore();
    const r = createPolicyReconciler({ store, clock, log: silent });
    await store.create(detectionPolicyResource("acme", acme(1)));
    await r.reconcile("acme");
    const cur = (await store.get("acme"))!;
    // A producer at "proof" that does not say it decides alone.
    await store.update({
      ...cur,
      spec: { version: 2, producers: { flagged: [{ pattern: "Other", level: "proof" }] } },
    });
    await r.reconcile("acme");
    const p = await store.get("acme");
    const valid = condition(p, "Valid");
    expect(valid).toMatchObject({ status: "False", reason: "Invalid", observedGeneration: 2 });
    expect(valid?.message).toContain("producers.flagged");
    expect(valid?.message).toContain("decidesAlone");
    expect(condition(p, "InUse")?.message).toContain("Version 1 is in force");
    expect(policyInForce(p)?.version).toBe(1);
    expect(policyInForce(p)?.producers.flagged[0]?.pattern).toBe("Forgery Works");

    // signature.pdf may never be switched off; a changed policy must raise its version.
    await store.update({ ...(await store.get("acme"))!, spec: acme(3, { checksOff: ["signature.pdf"] }) });
    await r.reconcile("acme");
    expect(condition(await store.get("acme"), "Valid")?.message).toContain("checksOff");
    await store.update({
      ...(await store.get("acme"))!,
      spec: acme(1, { checksOff: ["fonts.consistency"] }),
    });
    await r.reconcile("acme");
    expect(condition(await store.get("acme"), "Valid")?.message).toContain("version: raise it above 1");
    expect(policyInForce(await store.get("acme"))?.checksOff).toEqual([]);

    // A valid new version replaces it.
    await store.update({
      ...(await store.get("acme"))!,
      spec: acme(4, { checksOff: ["fonts.consistency"] }),
    });
    await r.reconcile("acme");
    const after = await store.get("acme");
    expect(condition(after, "Valid")?.status).toBe("True");
    expect(policyInForce(after)?.version).toBe(4);
  });

  it("a status given back with its keys in another order (as the apiserver does) is neither refused nor rewritten", async () => {
    const store = newStore();
    const r = createPolicyReconciler({ store, clock, log: silent });
    await store.create(detectionPolicyResource("acme", acme(1)));
    await r.reconcile("acme");
    const p = (await store.get("acme"))!;
    const reorder = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reorder)
        : v && typeof v === "object"
          ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reorder(x)]))
          : v;
    const written = await store.updateStatus({ ...p, status: reorder(p.status) as DetectionPolicy["status"] });
    await r.reconcile("acme");
    const after = (await store.get("acme"))!;
    expect(after.metadata.resourceVersion).toBe(written.metadata.resourceVersion);
    expect(condition(after, "Valid")?.status).toBe("True");
  });

  it("a policy never valid is not in use", async () => {
    const store = newStore();
    const r = createPolicyReconciler({ store, clock, log: silent });
    await store.create(detectionPolicyResource("bad", { version: 0 }));
    await r.reconcile("bad");
    const p = await store.get("bad");
    expect(condition(p, "Valid")?.message).toMatch(/^Refused: version: /);
    expect(condition(p, "InUse")).toMatchObject({ status: "False", reason: "NoValidVersion" });
    expect(policyInForce(p)).toBeUndefined();
  });
});

describe("standalone policy files", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });

  it("writes each file's policy to the store, again when it changes; a file that cannot be read leaves it", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-policies-"));
    dirs.push(dir);
    await writeFile(path.join(dir, "acme.json"), JSON.stringify({ name: "acme", ...acme(1) }));
    await writeFile(
      path.join(dir, "beta.yaml"),
      "name: beta\nversion: 2\nchecksOff:\n  - fonts.consistency\n",
    );
    await writeFile(path.join(dir, "notes.txt"), "not a policy");
    const store = newStore();
    const lines: string[] = [];
    const log = pino({ level: "info" }, { write: (l: string) => void lines.push(l) });
    const files = createPolicyFiles({ path: dir, store, log, reloadSeconds: 3600 });
    await files.sync();
    expect((await store.get("acme"))?.spec).toEqual(acme(1));
    expect((await store.get("beta"))?.spec).toEqual({ version: 2, checksOff: ["fonts.consistency"] });
    expect((await store.list()).items).toHaveLength(2);

    await writeFile(path.join(dir, "acme.json"), "{ not json");
    await files.sync();
    expect((await store.get("acme"))?.spec).toEqual(acme(1));
    expect(lines.join("")).toContain("policy file refused: it is not valid JSON or YAML");

    await writeFile(path.join(dir, "acme.json"), JSON.stringify({ name: "acme", ...acme(2) }));
    await files.sync();
    expect((await store.get("acme"))?.spec).toEqual(acme(2));
    expect((await store.get("acme"))?.metadata.generation).toBe(2);

    await writeFile(path.join(dir, "acme.json"), JSON.stringify({ name: "Acme Bank", ...acme(3) }));
    await files.sync();
    expect(lines.join("")).toContain('"field":"name"');
    expect((await store.get("acme"))?.spec).toEqual(acme(2));
  });
});
