/**
 * The cluster runtime in `stepMode: workers` on a real kube-apiserver + etcd: the operator hands steps to
 * per-step-kind Redis queues and warm step workers (`docverify step-worker --step <kind>`, what the chart's
 * Deployments run) take them; no step Pod is ever created. The node player runs (as in pods mode) only to
 * prove that. Also: a hostile document ends document_too_complex inside a warm check worker, which keeps
 * serving; and kill -9 of a worker mid-step is noticed when its lease runs out, the step is retried under
 * decideRetry as a new attempt, and nothing is lost or run twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Detection } from "../../core/detection.js";
import { API_GROUP_VERSION } from "../../core/resource.js";
import { makeDocument } from "../../fixtures/documents.js";
import { makeHostilePdf } from "../../fixtures/hostile-pdf.js";
import { apiRequest } from "./api-request.js";
import type { RuntimeProcess } from "./runtime-process.js";
import { missingPrerequisites, type RuntimeWorld, startRuntimeWorld, until } from "./runtime-world.js";

const NS = "docverify-workers";
const CLIENT = {
  client_id: "acme-bank",
  client_secret: "s3cret-acme-0123456789",
  scopes: ["DocumentVerification:*"],
};
/** Short, so a killed worker is noticed quickly; renewed every half of it by a live worker. */
const LEASE_SECONDS = "4";

const missing = missingPrerequisites();
const title = missing.length
  ? `cluster runtime with warm step workers: SKIPPED — ${missing.join("; ")}`
  : "cluster runtime with warm step workers";

/** The workloads a step worker finished, from its "step finished" log lines. */
function finishedBy(p: RuntimeProcess): { workload: string; state: string; reason?: string }[] {
  const out: { workload: string; state: string; reason?: string }[] = [];
  for (const line of p.log.split("\n")) {
    if (!line.includes('"step finished"')) continue;
    try {
      const j = JSON.parse(line) as { workload: string; state: string; reason?: string };
      out.push(j);
    } catch {
      // not a log line of ours
    }
  }
  return out;
}

describe.skipIf(missing.length > 0)(title, () => {
  let w: RuntimeWorld;
  const podsRun = new Set<string>();
  const workers: Record<"prepare" | "check" | "agent", RuntimeProcess[]> = {
    prepare: [],
    check: [],
    agent: [],
  };
  let metricsUrl = "";
  const startWorker = async (step: "prepare" | "check" | "agent") => {
    const p = await w.newStepWorker(step, { DOCVERIFY_STEP_LEASE_SECONDS: LEASE_SECONDS });
    workers[step].push(p);
    return p;
  };

  beforeAll(async () => {
    const docs = {
      invoice: Buffer.from(await makeDocument({ seed: 7, docType: "invoice", region: "US" })),
      statement: Buffer.from(await makeDocument({ seed: 8, docType: "bank_statement", region: "GB" })),
      fanout: Buffer.from(makeHostilePdf("xobject_fanout")),
      bomb: Buffer.from(makeHostilePdf("flate_bomb")),
    };
    w = await startRuntimeWorld({
      namespace: NS,
      documents: {
        "/invoice.pdf": docs.invoice,
        "/fanout.pdf": docs.fanout,
        "/bomb.pdf": docs.bomb,
        // Long enough that the step is still downloading when the test has seen it Running on a loaded machine.
        "/slow/statement.pdf": { body: docs.statement, delayMs: 15_000 },
      },
      onStepOutput: (pod) => podsRun.add(pod),
      // deploy/rbac/operator.yaml alone: the operator may not create, list or delete a Pod.
      stepMode: "workers",
    });
    const op = await w.newOperator("operator-a", { DOCVERIFY_STEP_MODE: "workers" });
    await op.waitForLog(/is the leader/, 30_000);
    metricsUrl = /metrics on (http:\/\/\S+\/metrics)/.exec(op.log)?.[1] ?? "";
    for (const step of ["prepare", "check", "agent"] as const) await startWorker(step);
    await w.startApi([CLIENT]);
  }, 240_000);

  afterAll(async () => {
    await w?.stop();
  }, 120_000);

  const submit = async (file: string, docType = "invoice", region = "us") => {
    const created = await w.call("POST", "/v1/detection", {
      source_url: `${w.docBase}/${file}`,
      doc_type: docType,
      region,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    return created.body.id as string;
  };
  const detectionOf = async (id: string) =>
    (
      await apiRequest<Detection>(
        w.admin,
        "GET",
        `/apis/${API_GROUP_VERSION}/namespaces/${NS}/detections/${id}`,
      )
    ).body;

  it("runs a detection to COMPLETED on the warm workers, each step in a worker of its kind, without a Pod", async () => {
    const id = await submit("invoice.pdf");
    const done = await w.waitTerminal(id);
    expect(done, JSON.stringify(done)).toMatchObject({ id, status: "COMPLETED", billable: true });
    expect(done.verdict).toMatchObject({ fraud_score: done.score });
    for (const step of ["prepare", "check", "agent"] as const) {
      const names = workers[step].flatMap((p) => finishedBy(p).map((f) => f.workload));
      expect(names, step).toContain(`${id}-${step}-1`);
      // A worker runs only steps of its own kind.
      for (const n of names) expect(n).toMatch(new RegExp(`-${step}-\\d+$`));
    }
    const pods = await apiRequest<{ items: unknown[] }>(w.admin, "GET", `/api/v1/namespaces/${NS}/pods`);
    expect(pods.body.items).toHaveLength(0);
    expect([...podsRun]).toEqual([]);
    // The queue's finished job is removed once its result is recorded (the workload GC of pods mode).
    const text = await (await fetch(metricsUrl)).text();
    expect(text).toMatch(/docverify_step_queue_jobs\{step="check",state="prioritized"\} 0/);
    expect(text).toMatch(/docverify_step_queue_jobs\{step="check",state="active"\} 0/);
  });

  it("ends hostile documents document_too_complex in the warm check worker, which keeps serving", async () => {
    const checkWorker = workers.check[0]!;
    for (const file of ["fanout.pdf", "bomb.pdf"]) {
      const id = await submit(file);
      const done = await w.waitTerminal(id);
      expect(done, file).toMatchObject({
        status: "FAILED",
        failure_code: "document_too_complex",
        billable: false,
      });
      expect((await detectionOf(id)).status?.steps?.find((s) => s.name === "check")).toMatchObject({
        attempt: 1,
        state: "Succeeded",
      });
    }
    expect(checkWorker.running).toBe(true);
    const after = await submit("invoice.pdf");
    expect((await w.waitTerminal(after)).status).toBe("COMPLETED");
    expect(finishedBy(checkWorker).map((f) => f.workload)).toContain(`${after}-check-1`);
  });

  it("kill -9 of a worker mid-step: its lease runs out, the step is retried as attempt 2, nothing is lost or run twice", async () => {
    const id = await submit("slow/statement.pdf", "bank_statement", "gb");
    // Mid-step: the prepare step downloads for 15 s; the Detection says its attempt 1 is Running.
    await until(
      "the prepare step to be Running",
      async () => {
        const step = (await detectionOf(id)).status?.steps?.find((s) => s.name === "prepare");
        return step?.state === "Running" && step.attempt === 1;
      },
      60_000,
    );
    const victim = workers.prepare[0]!;
    await victim.stop("SIGKILL");
    // The Deployment's replacement comes up (here: started by the test, playing the ReplicaSet).
    await startWorker("prepare");

    const done = await w.waitTerminal(id, 180_000);
    expect(done, JSON.stringify(done)).toMatchObject({ id, status: "COMPLETED" });
    const steps = (await detectionOf(id)).status?.steps ?? [];
    expect(steps.find((s) => s.name === "prepare")).toMatchObject({ attempt: 2, state: "Succeeded" });
    expect(steps.find((s) => s.name === "check")).toMatchObject({ attempt: 1, state: "Succeeded" });
    expect(steps.find((s) => s.name === "agent")).toMatchObject({ attempt: 1, state: "Succeeded" });

    // Each step of this detection finished exactly once, in a live worker; the killed attempt never did.
    const all = Object.values(workers)
      .flat()
      .flatMap((p) => finishedBy(p).map((f) => f.workload))
      .filter((n) => n.startsWith(`${id}-`));
    expect(all.sort()).toEqual([`${id}-agent-1`, `${id}-check-1`, `${id}-prepare-2`]);
    // Events are recorded after the status write that made the detection terminal: wait for the event.
    const events = await until("the Completed event", async () => {
      const r = await apiRequest<{ items: { reason: string; message: string }[] }>(
        w.admin,
        "GET",
        `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name=${id}`,
      );
      return r.body.items.some((e) => e.reason === "Completed") ? r.body.items : undefined;
    });
    expect(JSON.stringify(events)).toMatch(/stopped renewing its lease|lease expired/);
    expect([...podsRun]).toEqual([]);
  }, 240_000);
});
