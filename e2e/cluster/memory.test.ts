/**
 * The tenant memory (issue 23) in the cluster runtime, on a real kube-apiserver + etcd with the real operator,
 * api, warm step workers (the chart's default stepMode: workers: step Pods made this file take 344 s in CI, workers ~110 s, and
 * the same check code runs in both), Redis and S3 (s3rver): the same PDF twice names the first detection; the
 * statement re-rendered by its producer with another holder is matched with the names side by side; another
 * tenant's identical document matches nothing; DELETE and then retention remove the entries and their index
 * keys from S3 (asserted on the bucket). Retention is an operator restart with a 1-second retention period.
 */

import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ObjectStore } from "../../core/ports.js";
import { buildDocument } from "../../fixtures/real-producer/content.js";
import type { RpDoc } from "../../fixtures/real-producer/model.js";
import { produce } from "../../fixtures/real-producer/produce.js";
import { sameTemplateStatement } from "../../fixtures/same-template.js";
import { missingPrerequisites, type RuntimeWorld, startRuntimeWorld, until } from "./runtime-world.js";

const NS = "docverify-memory";
const CLIENT = {
  client_id: "acme-bank",
  client_secret: "s3cret-acme-0123456789",
  scopes: ["DocumentVerification:*"],
};
const OTHER = {
  client_id: "other-bank",
  client_secret: "s3cret-other-0123456789",
  scopes: ["DocumentVerification:*"],
};
/** The tenant of the 30 holders' statements (a tenant of its own: the other test expects an empty memory). */
const HOLDERS_CLIENT = {
  client_id: "statement-desk",
  client_secret: "s3cret-desk-0123456789",
  scopes: ["DocumentVerification:*"],
};
/** 30 holders of one bank's template (the check-level test's generator, seeded). */
const HOLDERS = Array.from({ length: 30 }, (_, i) => 101 + i);
const MEMORY_KEY = "cluster-e2e-memory-key-0123456789abcdef";

const missing = missingPrerequisites();
const title = missing.length
  ? `tenant memory in the cluster runtime: SKIPPED — ${missing.join("; ")}`
  : "tenant memory in the cluster runtime";

describe.skipIf(missing.length > 0)(title, () => {
  let w: RuntimeWorld;
  let dir: string;
  let objects: ObjectStore;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "docverify-memory-e2e-"));
    const doc = buildDocument(7, "bank_statement", "GB");
    const opts = { family: "ghostscript" as const, tz: "UTC", at: doc.issuedOn };
    await produce(doc, path.join(dir, "a"), path.join(dir, "a.pdf"), opts);
    await produce(
      { ...doc, recipient: { ...doc.recipient, name: "Jane Other" } },
      path.join(dir, "b"),
      path.join(dir, "b.pdf"),
      opts,
    );
    // Another holder's statement of the same bank: the bank's template (typography, header, footer) kept.
    const sameTemplate = (seed: number): RpDoc => sameTemplateStatement(doc, seed);
    const holders: Record<string, Buffer> = {};
    // Two producer runs at a time (the machine is shared).
    for (let i = 0; i < HOLDERS.length; i += 2)
      await Promise.all(
        HOLDERS.slice(i, i + 2).map(async (seed) => {
          const out = path.join(dir, `holder-${seed}.pdf`);
          await produce(sameTemplate(seed), path.join(dir, `holder-${seed}`), out, opts);
          holders[`/holder-${seed}.pdf`] = await readFile(out);
        }),
      );
    w = await startRuntimeWorld({
      namespace: NS,
      stepMode: "workers",
      documents: {
        "/a.pdf": await readFile(path.join(dir, "a.pdf")),
        "/b.pdf": await readFile(path.join(dir, "b.pdf")),
        ...holders,
      },
    });
    const op = await w.newOperator("op-1", {
      DOCVERIFY_MEMORY_KEY: MEMORY_KEY,
      DOCVERIFY_STEP_MODE: "workers",
    });
    await op.waitForLog(/is the leader/, 30_000);
    for (const step of ["prepare", "check", "agent"] as const)
      await w.newStepWorker(step, { DOCVERIFY_MEMORY_KEY: MEMORY_KEY });
    await w.startApi([CLIENT, OTHER, HOLDERS_CLIENT]);
    objects = w.objects();
  }, 420_000);

  afterAll(async () => {
    await w?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  /** Keys of the tenant memory on S3 (all, or those of one detection). */
  async function memoryKeys(id?: string): Promise<string[]> {
    const out: string[] = [];
    for await (const o of objects.list("docverify", "memory/"))
      if (id === undefined || o.key.includes(id)) out.push(o.key);
    return out;
  }

  async function submit(source: string, client = CLIENT, completed = true): Promise<string> {
    const r = await w.call(
      "POST",
      "/v1/detection",
      { source_url: `${w.docBase}${source}`, doc_type: "bank_statement", region: "GB" },
      client,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const id = r.body.id as string;
    const done = await until(
      `detection ${id} to finish`,
      async () => {
        const b = (await w.call("GET", `/v1/detection/${id}`, undefined, client)).body;
        return b.status === "COMPLETED" || b.status === "FAILED" ? b : undefined;
      },
      180_000,
    );
    if (completed) expect(done.status, w.diagnostics()).toBe("COMPLETED");
    await until(
      `the memory entry of ${id}`,
      async () => ((await memoryKeys(id)).some((k) => k.endsWith(`/e/${id}.json`)) ? true : undefined),
      60_000,
    );
    return id;
  }

  async function historyOf(id: string, client = CLIENT) {
    const ev = await w.call("GET", `/v1/detection/${id}/evidence`, undefined, client);
    expect(ev.status).toBe(200);
    const d = (await w.call("GET", `/v1/detection/${id}`, undefined, client)).body;
    return {
      // biome-ignore lint/suspicious/noExplicitAny: evidence findings as JSON
      findings: (ev.body.findings as any[]).filter((f) => f.check_id === "history.matches"),
      discovered: (d.discovered ?? []) as string[],
      score: d.score as number,
    };
  }

  // First: the retention test below forgets every entry.
  it("30 genuine statements of one bank's template from different holders: nothing above a note, no 50", async () => {
    const ids: string[] = [];
    for (let i = 0; i < HOLDERS.length; i += 3)
      ids.push(
        ...(await Promise.all(
          HOLDERS.slice(i, i + 3).map((seed) => submit(`/holder-${seed}.pdf`, HOLDERS_CLIENT, false)),
        )),
      );
    const seen = await Promise.all(
      ids.map(async (id) => {
        const d = (await w.call("GET", `/v1/detection/${id}`, undefined, HOLDERS_CLIENT)).body;
        return { id, status: d.status as string, ...(await historyOf(id, HOLDERS_CLIENT)) };
      }),
    );
    expect(seen.map((s) => s.status)).toEqual(ids.map(() => "COMPLETED"));
    const above = seen.flatMap((s) => s.findings).filter((f) => f.severity > 2);
    expect(above, JSON.stringify(above.slice(0, 3))).toEqual([]);
    expect(seen.flatMap((s) => s.discovered)).not.toContain("seen_with_other_values");
    const high = seen.filter((s) => s.score >= 50);
    expect(high.map((s) => [s.id, s.score, s.findings.map((f) => f.code)])).toEqual([]);
  }, 900_000);

  it("duplicate, another holder, another tenant; DELETE and retention remove the entries from S3", async () => {
    const first = await submit("/a.pdf");
    expect((await historyOf(first)).findings).toEqual([]);

    const second = await submit("/a.pdf");
    const dup = await historyOf(second);
    expect(dup.discovered).toContain("duplicate_submission");
    expect(dup.findings.find((f) => f.code === "duplicate_submission")?.evidence.earlier).toContain(first);

    const renamed = await submit("/b.pdf");
    const other = await historyOf(renamed);
    expect(other.discovered).toContain("seen_with_other_values");
    const changed = other.findings.filter((f) => f.code === "same_document_other_values");
    expect(changed.map((f) => [f.before, f.after])).toContainEqual(["Amelia Thomas", "Jane Other"]);
    expect(other.score).toBeLessThan(50);

    const foreign = await submit("/a.pdf", OTHER);
    const none = await historyOf(foreign, OTHER);
    expect(none.findings).toEqual([]);
    expect(none.discovered).not.toContain("duplicate_submission");

    // DELETE: the entry, its index markers and its owner record go.
    expect((await memoryKeys(first)).length).toBeGreaterThan(3);
    expect((await w.call("DELETE", `/v1/detection/${first}`)).status).toBe(200);
    await until(
      "the deleted detection's memory",
      async () => ((await memoryKeys(first)).length === 0 ? true : undefined),
      60_000,
    );
    expect((await memoryKeys()).length).toBeGreaterThan(0);

    // Retention of 1 s (an operator restart): every remembered detection is forgotten.
    for (const o of w.operators) await o.stop();
    const pruning = await w.newOperator("op-prune", {
      DOCVERIFY_MEMORY_KEY: MEMORY_KEY,
      DOCVERIFY_STEP_MODE: "workers",
      DOCVERIFY_RETENTION_SECONDS: "1",
    });
    await pruning.waitForLog(/is the leader/, 30_000);
    await until(
      "the tenant memory to be empty after retention",
      async () => ((await memoryKeys()).length === 0 ? true : undefined),
      120_000,
    );
  }, 900_000);
});
