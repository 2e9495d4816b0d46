/**
 * The cluster runtime end to end on a real kube-apiserver + etcd (RBAC on): the CRDs and the RBAC of
 * deploy/rbac applied, the operator and the api as real processes with their own identities, step Pods
 * played by the node player, Redis for admission and S3 (s3rver) for documents.
 *
 * The apiserver runs without its watch cache and compacts etcd every second, so watches really expire
 * (410 Gone) while the tests run, and the operator has to recover from that again and again.
 */
import { execFile } from "node:child_process";
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DETECTION_KIND, type Detection, keys } from "../../core/detection.js";
import { isStoreError, type StoreError, type WatchEvent } from "../../core/ports.js";
import { API_GROUP_VERSION } from "../../core/resource.js";
import { makeDocument, makeRandomBytes } from "../../fixtures/documents.js";
import { makeHostilePdf } from "../../fixtures/hostile-pdf.js";
import { ENTRY, runNode } from "../harness.js";
import { apiRequest } from "./api-request.js";
import type { RuntimeProcess } from "./runtime-process.js";
import { missingPrerequisites, type RuntimeWorld, startRuntimeWorld, until } from "./runtime-world.js";
import { canI, testClusterBinDir } from "./test-cluster.js";
import { tempDirs } from "../../fixtures/temp-dirs.js";

const temp = tempDirs();
afterAll(temp.removeAll);

const run = promisify(execFile);
const NS = "docverify-e2e";
const SCRATCH = "docverify-scratch";
const BUCKET = "docverify";
const INBOX = "loan-inbox";
const REPORTS = "loan-reports";
const CLIENT = {
  client_id: "acme-bank",
  client_secret: "s3cret-acme-0123456789",
  scopes: ["DocumentVerification:*"],
  buckets: [INBOX, REPORTS],
};

const missing = missingPrerequisites();
const title = missing.length
  ? `cluster runtime on a real kube-apiserver: SKIPPED — ${missing.join("; ")}`
  : "cluster runtime on a real kube-apiserver";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(missing.length > 0)(title, () => {
  let w: RuntimeWorld;
  const startedAt = Date.now();
  const operators: RuntimeProcess[] = [];
  /** Api processes replaced by a restart (their logs are checked at the end too). */
  const retiredApis: RuntimeProcess[] = [];
  const newOperator = async (name: string) => {
    const p = await w.newOperator(name);
    operators.push(p);
    return p;
  };
  const identityOf = (p: RuntimeProcess) => /docverify operator (\S+) started/.exec(p.log)?.[1] ?? "";

  beforeAll(async () => {
    const docs = {
      invoice: Buffer.from(await makeDocument({ seed: 7, docType: "invoice", region: "US" })),
      statement: Buffer.from(await makeDocument({ seed: 8, docType: "bank_statement", region: "GB" })),
      fanout: Buffer.from(makeHostilePdf("xobject_fanout")),
      bomb: Buffer.from(makeHostilePdf("flate_bomb")),
    };
    w = await startRuntimeWorld({
      namespace: NS,
      extraNamespaces: [SCRATCH],
      // No watch cache, and etcd compacted every second: resuming a watch from an old version answers 410.
      cluster: { extraApiserverArgs: ["--watch-cache=false", "--etcd-compaction-interval=1s"] },
      documents: {
        "/invoice.pdf": docs.invoice,
        "/fanout.pdf": docs.fanout,
        "/bomb.pdf": docs.bomb,
        "/slow/statement.pdf": { body: docs.statement, delayMs: 6_000 },
      },
    });
    const a = await newOperator("operator-a");
    await a.waitForLog(/is the leader/, 30_000);
    await newOperator("operator-b");
    // The attestation key as the chart gives it: an Ed25519 PKCS#8 PEM in a mounted file.
    keyDir = await temp.make("docverify-cluster-attestation-");
    keyFile = path.join(keyDir, "key");
    await writeFile(
      keyFile,
      generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }) as string,
      { mode: 0o600 },
    );
    await w.startApi([{ ...CLIENT, sample_allowance: 1 }], { DOCVERIFY_ATTESTATION_KEY_FILE: keyFile });
    invoiceSha256 = createHash("sha256").update(docs.invoice).digest("hex");
    invoice = docs.invoice;
  }, 240_000);

  afterAll(async () => {
    await w?.stop();
    process.stdout.write(`cluster e2e: ${((Date.now() - startedAt) / 1000).toFixed(1)} s in total\n`);
  }, 120_000);

  const call = (method: string, p: string, json?: unknown) => w.call(method, p, json);
  const waitTerminal = (id: string, timeoutMs?: number) => w.waitTerminal(id, timeoutMs);
  const adminStore = (ns: string) => w.adminStore(ns);
  const detection = (name: string, source: Detection["spec"]["source"]): Detection => ({
    apiVersion: API_GROUP_VERSION,
    kind: DETECTION_KIND,
    metadata: { name },
    spec: {
      source,
      docType: "invoice",
      region: "US",
      submittedBy: "e2e",
      sample: false,
      priority: "interactive",
    },
  });

  let completedId = "";
  let invoiceSha256 = "";
  let invoice = Buffer.alloc(0);
  let keyDir = "";
  let keyFile = "";

  it("runs a detection through the REST API to COMPLETED with a verdict, with Events on the Detection", async () => {
    const created = await call("POST", "/v1/detection", {
      source_url: `${w.docBase}/invoice.pdf`,
      doc_type: "invoice",
      region: "us",
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ status: "QUEUED" });
    const id = created.body.id as string;
    const done = await waitTerminal(id);
    expect(done, JSON.stringify(done)).toMatchObject({ id, status: "COMPLETED", billable: true });
    expect(done.score).toEqual(expect.any(Number));
    expect(done.verdict).toMatchObject({ fraud_score: done.score, document_type_match: expect.any(Boolean) });
    expect(done.verdict.reasoning).toEqual(expect.any(String));
    expect(done).toMatchObject({ content_type: "application/pdf", s3_key: expect.stringContaining(id) });
    completedId = id;

    const events = await until("the Completed event", async () => {
      const r = await apiRequest<{
        items: { reason: string; type: string; involvedObject: { name: string } }[];
      }>(w.admin, "GET", `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name=${id}`);
      return r.body.items.some((e) => e.reason === "Completed") ? r.body.items : undefined;
    });
    const reasons = events.map((e) => e.reason);
    for (const r of ["StepStarted", "StepSucceeded", "Completed"]) expect(reasons).toContain(r);
    // Finished step Pods are deleted by the operator once their results are recorded (the deletion may
    // land just after the Completed event on a busy machine: wait for it).
    const remaining = await until("the finished step Pods to be deleted", async () => {
      const pods = await apiRequest<{ items: unknown[] }>(
        w.admin,
        "GET",
        `/api/v1/namespaces/${NS}/pods?labelSelector=docverify.io/detection=${id}`,
      );
      return pods.body.items.length === 0 ? pods.body.items : undefined;
    });
    expect(remaining).toHaveLength(0);
  });

  it("the completed detection's attestation verifies with the api's JWKS and attests the invoice's sha256", async () => {
    expect(completedId).not.toBe("");
    const r = await call("GET", `/v1/detection/${completedId}/attestation`);
    expect(r.status).toBe(200);
    const jwks = (await (await fetch(`${w.apiUrl}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
    expect(JSON.stringify(jwks)).not.toMatch(/"d"\s*:/);
    const { payload } = await compactVerify(r.body.attestation as string, createLocalJWKSet(jwks));
    const attested = JSON.parse(new TextDecoder().decode(payload));
    expect(attested).toMatchObject({ detection_id: completedId, document_sha256: invoiceSha256 });
    expect(attested.checks.length).toBeGreaterThan(0);
    expect(attested.checks.every((c: { version: string | null }) => typeof c.version === "string")).toBe(
      true,
    );
  });

  it("after a key rotation (the chart's way: a new key Secret, the old public key in previousKeysSecret) the old attestation still verifies, new ones use the new kid, changes are refused", async () => {
    expect(completedId).not.toBe("");
    const before = await call("GET", `/v1/detection/${completedId}/attestation`);
    expect(before.status).toBe(200);
    const oldJws = before.body.attestation as string;
    const oldKid = decodeProtectedHeader(oldJws).kid;

    // What an operator does: a new private key in the key Secret, and the old key's public half (openssl pkey
    // -pubout) as an entry of the Secret `attestationKey.previousKeysSecret` names, which the chart mounts as
    // a directory and names in DOCVERIFY_ATTESTATION_PREVIOUS_KEYS. The directory is laid out as the kubelet
    // lays out a Secret volume: each entry a symlink through `..data` to a timestamped directory.
    const oldPublic = createPublicKey(createPrivateKey(await readFile(keyFile, "utf8"))).export({
      format: "pem",
      type: "spki",
    }) as string;
    const previousDir = path.join(keyDir, "attestation-previous");
    const stamped = path.join(previousDir, "..2026_11_27_18_00_00.000000001");
    await mkdir(stamped, { recursive: true });
    await writeFile(path.join(stamped, "2026-11.pem"), oldPublic);
    await symlink(path.basename(stamped), path.join(previousDir, "..data"));
    await symlink("..data/2026-11.pem", path.join(previousDir, "2026-11.pem"));
    const newKeyFile = path.join(keyDir, "key-rotated");
    await writeFile(
      newKeyFile,
      generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }) as string,
      { mode: 0o600 },
    );
    // The api Deployment rolls: the old Pod stops, a new one starts with the new mounts.
    await w.api?.stop();
    retiredApis.push(w.api!);
    await w.startApi([{ ...CLIENT, sample_allowance: 1 }], {
      DOCVERIFY_ATTESTATION_KEY_FILE: newKeyFile,
      DOCVERIFY_ATTESTATION_PREVIOUS_KEYS: previousDir,
    });
    const jwksUrl = `${w.apiUrl}/.well-known/jwks.json`;
    const jwks = (await (await fetch(jwksUrl)).json()) as JSONWebKeySet;
    const [newKid, ...previous] = jwks.keys.map((k) => k.kid);
    expect(newKid).not.toBe(oldKid);
    expect(previous).toEqual([oldKid]);

    // The attestation given before the rotation, with the JWKS served after it.
    const tmp = await temp.make("docverify-cluster-rotation-");
    const doc = path.join(tmp, "invoice.pdf");
    await writeFile(doc, invoice);
    const oldFile = path.join(tmp, "old.attestation.json");
    await writeFile(oldFile, JSON.stringify({ attestation: oldJws }));
    const ok = await runNode([ENTRY, "verify", doc, oldFile, "--jwks", jwksUrl, "--no-rerun"]);
    expect(ok.code, `${ok.stdout}${ok.stderr}`).toBe(0);
    expect(ok.stdout).toContain(`signature: valid (kid ${oldKid})`);
    // Without the previous key it would not.
    await expect(
      compactVerify(oldJws, createLocalJWKSet({ keys: jwks.keys.filter((k) => k.kid === newKid) })),
    ).rejects.toThrow();

    // A new detection is signed with the new kid.
    const created = await call("POST", "/v1/detection", {
      source_url: `${w.docBase}/invoice.pdf`,
      doc_type: "invoice",
      region: "us",
    });
    expect(created.status).toBe(202);
    expect(await waitTerminal(created.body.id as string)).toMatchObject({ status: "COMPLETED" });
    const fresh = await call("GET", `/v1/detection/${created.body.id}/attestation`);
    expect(fresh.status).toBe(200);
    expect(decodeProtectedHeader(fresh.body.attestation as string).kid).toBe(newKid);
    await compactVerify(fresh.body.attestation as string, createLocalJWKSet(jwks));

    // One changed byte of the document, or one changed finding, is refused.
    const changed = Buffer.from(invoice);
    changed[changed.length - 20]! ^= 1;
    const changedDoc = path.join(tmp, "invoice-changed.pdf");
    await writeFile(changedDoc, changed);
    const badDoc = await runNode([ENTRY, "verify", changedDoc, oldFile, "--jwks", jwksUrl, "--no-rerun"]);
    expect(badDoc.code).toBe(1);
    expect(badDoc.stdout).toMatch(/^document: MISMATCH/m);
    const [h, p, s] = oldJws.split(".");
    const payload = JSON.parse(Buffer.from(p!, "base64url").toString("utf8"));
    payload.checks[0].severity = payload.checks[0].severity === 0 ? 1 : 0;
    if (payload.findings.length > 0) payload.findings[0].code = `${payload.findings[0].code}_x`;
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${s}`;
    await expect(compactVerify(forged, createLocalJWKSet(jwks))).rejects.toThrow();
  });

  it("an Idempotency-Key create retried answers the same Detection: one in the apiserver, with the key's label", async () => {
    const body = { source_url: `${w.docBase}/invoice.pdf`, doc_type: "invoice", region: "us" };
    const key = { "Idempotency-Key": `cluster-${Date.now()}` };
    const answers = await Promise.all(
      [0, 1, 2].map(() => w.call("POST", "/v1/detection", body, undefined, key)),
    );
    for (const a of answers) expect([202, 409], JSON.stringify(a.body)).toContain(a.status);
    const ids = new Set(answers.filter((a) => a.status === 202).map((a) => a.body.id as string));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    const again = await w.call("POST", "/v1/detection", body, undefined, key);
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(id);
    const other = await w.call("POST", "/v1/detection", { ...body, region: "gb" }, undefined, key);
    expect(other.status).toBe(422);
    expect(other.body.detail[0].type).toBe("idempotency_key_reused");
    // What kubectl sees: exactly one Detection carries the key's label, the one answered.
    const all = (await adminStore(NS).list()).items;
    const labelled = all.filter((d) => d.metadata.labels?.["docverify.io/idempotency-key"]);
    expect(labelled.map((d) => d.metadata.name)).toEqual([id]);
  });

  it("ends hostile documents document_too_complex in their check Pod, without retrying them", async () => {
    for (const file of ["fanout.pdf", "bomb.pdf"]) {
      const created = await call("POST", "/v1/detection", {
        source_url: `${w.docBase}/${file}`,
        doc_type: "invoice",
        region: "us",
      });
      expect(created.status).toBe(202);
      const done = await waitTerminal(created.body.id as string);
      expect(done, file).toMatchObject({
        status: "FAILED",
        failure_code: "document_too_complex",
        billable: false,
      });
      const d = await apiRequest<Detection>(
        w.admin,
        "GET",
        `/apis/${API_GROUP_VERSION}/namespaces/${NS}/detections/${created.body.id}`,
      );
      expect(d.body.status?.steps?.find((x) => x.name === "check")).toMatchObject({
        attempt: 1,
        state: "Succeeded",
      });
    }
  });

  it("`kubectl get detections` shows the printer columns (and the message under -o wide)", async () => {
    const kubectl = path.join(testClusterBinDir(), "kubectl");
    const cfg = await w.cluster.kubeconfigPath("admin", NS);
    const plain = (await run(kubectl, ["--kubeconfig", cfg, "get", "detections"])).stdout;
    const wide = (await run(kubectl, ["--kubeconfig", cfg, "get", "det", "-o", "wide"])).stdout;
    const category = (await run(kubectl, ["--kubeconfig", cfg, "get", "docverify"])).stdout;
    process.stdout.write(`\n$ kubectl get detections\n${plain}\n$ kubectl get det -o wide\n${wide}\n`);
    expect(plain.split("\n")[0]).toMatch(/^NAME\s+PHASE\s+SCORE\s+TRUST\s+DOCTYPE\s+SUBMITTER\s+AGE\s*$/);
    expect(plain).toMatch(new RegExp(`${completedId}\\s+Completed\\s+\\d+\\s+invoice\\s+acme-bank\\s+`));
    expect(wide.split("\n")[0]).toMatch(/AGE\s+MESSAGE\s*$/);
    expect(wide).toMatch(/Verdict ready: fraud score \d+\./);
    expect(category).toContain(completedId);
  });

  it("rejects a Detection with two sources by the CRD's CEL rule, and a malformed one by its schema", async () => {
    const store = adminStore(SCRATCH);
    const both = detection("det-two-sources", { url: "https://example.com/a.pdf", uploadId: "u-1" });
    const err = await store.create(both).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStoreError(err, "Invalid"), String(err)).toBe(true);
    expect((err as StoreError).message).toMatch(/exactly one of url, uploadId or object must be set/);
    const none = await store.create(detection("det-no-source", {})).catch((e: unknown) => e);
    expect(isStoreError(none, "Invalid")).toBe(true);
    const bad = detection("det-bad-region", { url: "https://example.com/a.pdf" });
    (bad.spec as { region: string }).region = "usa";
    const badErr = await store.create(bad).catch((e: unknown) => e);
    expect(isStoreError(badErr, "Invalid")).toBe(true);
    expect((badErr as StoreError).message).toMatch(/spec.region/);
  });

  it("the resource store keeps Kubernetes semantics: conflicts on stale writes, one winner among concurrent status writers", async () => {
    const store = adminStore(SCRATCH);
    const a = await store.create(detection("det-concurrent", { url: "https://example.com/a.pdf" }));
    expect(a.metadata.uid).toBeTruthy();
    const dup = await store
      .create(detection("det-concurrent", { url: "https://example.com/a.pdf" }))
      .catch((e) => e);
    expect(isStoreError(dup, "AlreadyExists")).toBe(true);
    expect(await store.get("det-missing")).toBeUndefined();

    // Five writers read the same version and write status at once: exactly one wins, the rest get Conflict.
    const writers = Array.from({ length: 5 }, () => adminStore(SCRATCH));
    const copies = await Promise.all(writers.map((w) => w.get("det-concurrent")));
    const results = await Promise.allSettled(
      copies.map((d, i) => writers[i]!.updateStatus({ ...d!, status: { phase: "Running", score: i } })),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    const conflicts = results.filter((r) => r.status === "rejected" && isStoreError(r.reason, "Conflict"));
    expect(won).toHaveLength(1);
    expect(conflicts).toHaveLength(4);
    const after = await store.get("det-concurrent");
    expect(after?.status?.phase).toBe("Running");
    // The loser re-reads and writes again: that succeeds (the reconciler's "look again").
    const fresh = await store.get("det-concurrent");
    await store.updateStatus({ ...fresh!, status: { ...fresh!.status, phase: "Completed", score: 9 } });
    // A spec update through update() leaves status alone; a stale update() is a Conflict too.
    const stale = copies[0]!;
    const staleErr = await store
      .update({ ...stale, metadata: { ...stale.metadata, labels: { x: "y" } } })
      .catch((e) => e);
    expect(isStoreError(staleErr, "Conflict")).toBe(true);
    const labelled = await store.update({
      ...fresh!,
      metadata: { ...(await store.get("det-concurrent"))!.metadata, labels: { x: "y" } },
    });
    expect(labelled.status).toMatchObject({ phase: "Completed", score: 9 });
    expect((await store.list({ labels: { x: "y" } })).items.map((d) => d.metadata.name)).toEqual([
      "det-concurrent",
    ]);
    expect((await store.list({ labels: { x: "z" } })).items).toEqual([]);
    // The status schema keeps nulls where core's zod allows them (nullable enum included).
    const cur = (await store.get("det-concurrent"))!;
    const nulls = {
      phase: "Completed" as const,
      score: null,
      verdict: null,
      authoritative: { checkId: "signature.pdf", trust: null, directive: null },
      document: { filename: null, contentType: "application/pdf", sizeBytes: 1, key: "k", sha256: "s" },
    };
    const written = await store.updateStatus({ ...cur, status: nulls });
    expect(written.status).toEqual(nulls);
    expect((await store.get("det-concurrent"))?.status).toEqual(nulls);
  });

  it("a watch from a compacted version ends with Gone (410); list + watch again delivers what follows", async () => {
    const store = adminStore(SCRATCH);
    const first = await store.create(detection("det-watch-0", { url: "https://example.com/a.pdf" }));
    const oldVersion = first.metadata.resourceVersion!;
    // Move etcd on and let the apiserver's 1 s compaction pass that version.
    for (let i = 1; i <= 3; i++) {
      await store.create(detection(`det-watch-${i}`, { url: "https://example.com/a.pdf" }));
      await sleep(1_200);
    }
    const gone = await until(
      "a Gone from a watch on the compacted version",
      () =>
        new Promise<StoreError | undefined>((resolve) => {
          const h = store.watch(
            { resourceVersion: oldVersion },
            () => {},
            (err) => {
              h.stop();
              resolve(err);
            },
          );
          setTimeout(() => {
            h.stop();
            resolve(undefined);
          }, 2_000);
        }).then((e) => (e && isStoreError(e, "Gone") ? e : undefined)),
      30_000,
    );
    expect(gone.reason).toBe("Gone");

    // Relist and watch from the list's version: the next change arrives, the old ones do not repeat.
    const { items, resourceVersion } = await store.list();
    expect(items.map((d) => d.metadata.name)).toContain("det-watch-3");
    const seen: WatchEvent<Detection>[] = [];
    const h = store.watch(
      { resourceVersion },
      (e) => seen.push(e),
      () => {},
    );
    await store.create(detection("det-watch-4", { url: "https://example.com/a.pdf" }));
    await store.delete("det-watch-0");
    await until("the watch to deliver ADDED and DELETED", async () => seen.length >= 2, 10_000);
    h.stop();
    expect(seen.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      "ADDED det-watch-4",
      "DELETED det-watch-0",
    ]);
  });

  it("the operator's own watches expire on this apiserver and it relists and keeps working", async () => {
    const leader = operators.find((o) => o.running && /is the leader/.test(o.log))!;
    // The controller's watch resumes every 25 s; with 1 s compaction a quiet stretch ends in 410 Gone.
    await leader.waitForLog(/watch ended; relisting/, 90_000);
    const created = await call("POST", "/v1/detection", {
      source_url: `${w.docBase}/invoice.pdf`,
      doc_type: "invoice",
      region: "US",
    });
    expect(created.status).toBe(202);
    expect((await waitTerminal(created.body.id)).status).toBe("COMPLETED");
  });

  it("survives kill -9 of the leading operator mid-run: the standby takes the Lease and finishes the detection", async () => {
    const [a, b] = operators;
    expect(a!.running && b!.running).toBe(true);
    const leaseOf = async () =>
      (
        await apiRequest<{ spec: { holderIdentity?: string; leaseTransitions?: number } }>(
          w.admin,
          "GET",
          `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/docverify-operator`,
        )
      ).body.spec;
    expect((await leaseOf()).holderIdentity).toBe(identityOf(a!));

    const created = await call("POST", "/v1/detection", {
      source_url: `${w.docBase}/slow/statement.pdf`,
      doc_type: "bank_statement",
      region: "GB",
    });
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    // Mid-run: the prepare Pod exists (its download takes 6 s).
    const pod = await until(
      "the prepare Pod",
      async () => {
        const r = await apiRequest<{ metadata: any; spec: any; status?: { phase?: string } }>(
          w.admin,
          "GET",
          `/api/v1/namespaces/${NS}/pods/${id}-prepare-1`,
        );
        return r.status === 200 && r.body.status?.phase === "Running" ? r.body : undefined;
      },
      60_000,
    );
    const store = adminStore(NS);
    const d = await store.get(id);
    expect(pod.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: "Detection",
        name: id,
        uid: d!.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      }),
    ]);
    expect(pod.metadata.labels).toMatchObject({
      "app.kubernetes.io/name": "docverify",
      "app.kubernetes.io/component": "step",
      "docverify.io/detection": id,
      "docverify.io/step": "prepare",
    });
    expect(pod.spec).toMatchObject({
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
    });
    expect(pod.spec.containers[0].securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });

    await a!.stop("SIGKILL");
    const done = await waitTerminal(id);
    expect(done.status).toBe("COMPLETED");
    const lease = await leaseOf();
    expect(lease.holderIdentity).toBe(identityOf(b!));
    expect(lease.leaseTransitions).toBeGreaterThanOrEqual(1);
    expect(b!.log).toMatch(/is the leader/);

    // The killed replica comes back as a standby; a graceful stop of the leader hands the Lease over at once.
    const a2 = await newOperator("operator-a2");
    await sleep(1_000);
    expect(a2.log).not.toMatch(/is the leader/);
    const handover = Date.now();
    expect(await b!.stop("SIGTERM")).toBe(0);
    expect(b!.log).toMatch(/released the lease/);
    await a2.waitForLog(/is the leader/, 10_000);
    const handoverMs = Date.now() - handover;
    process.stdout.write(`lease handed over in ${handoverMs} ms after SIGTERM of the leader\n`);
    expect((await leaseOf()).holderIdentity).toBe(identityOf(a2));
    const again = await call("POST", "/v1/detection", {
      source_url: `${w.docBase}/invoice.pdf`,
      doc_type: "invoice",
      region: "US",
    });
    expect((await waitTerminal(again.body.id)).status).toBe("COMPLETED");
  });

  it("a batch job over a bucket fans out Detections and writes its report to S3", async () => {
    const objects = w.objects();
    for (const b of [INBOX, REPORTS]) await objects.ensureBucket(b);
    const inputs: Record<string, Buffer> = {
      "applications/2026-11-02/01-invoice.pdf": Buffer.from(
        await makeDocument({ seed: 41, docType: "invoice", region: "US" }),
      ),
      "applications/2026-11-02/02-statement.pdf": Buffer.from(
        await makeDocument({ seed: 42, docType: "bank_statement", region: "GB" }),
      ),
      "applications/2026-11-02/03-invoice.pdf": Buffer.from(
        await makeDocument({ seed: 43, docType: "invoice", region: "DE" }),
      ),
      "scans/04-statement.pdf": Buffer.from(
        await makeDocument({ seed: 44, docType: "bank_statement", region: "US" }),
      ),
      "scans/05-invoice.pdf": Buffer.from(await makeDocument({ seed: 45, docType: "invoice", region: "GB" })),
      "scans/zz-noise.bin": Buffer.from(makeRandomBytes(9, 2048)),
    };
    for (const [key, body] of Object.entries(inputs)) await objects.put(INBOX, key, body);
    await objects.put(INBOX, "elsewhere/not-in-the-job.pdf", inputs["scans/05-invoice.pdf"]!);

    const created = await call("POST", "/jobs", {
      connector: { type: "s3", bucket_name: INBOX, prefixes: ["applications/2026-11-02/", "scans/"] },
      output: { type: "s3", bucket_name: REPORTS, prefix: "daily/" },
      doc_type: "other",
      region: "gb",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    expect(created.body).toEqual({ job_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: "QUEUED" });
    const jobId = created.body.job_id as string;

    let job: any;
    try {
      job = await until(
        `job ${jobId} to finish`,
        async () => {
          const r = await call("GET", `/jobs/${jobId}`);
          if (r.status !== 200) throw new Error(`GET /jobs/${jobId}: ${r.status} ${JSON.stringify(r.body)}`);
          return r.body.status === "COMPLETED" || r.body.status === "FAILED" ? r.body : undefined;
        },
        180_000,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${w.diagnostics()}`);
    }
    expect(job, JSON.stringify(job)).toMatchObject({
      job_id: jobId,
      status: "COMPLETED",
      counts: { total: 6, queued: 0, running: 0, completed: 5, failed: 1 },
      report: {
        bucket: REPORTS,
        results_key: `daily/${jobId}/results.jsonl`,
        summary_key: `daily/${jobId}/summary.json`,
      },
    });

    const listed = await call("GET", `/v1/detection?batch_id=${jobId}&limit=50`);
    expect(listed.status).toBe(200);
    expect(listed.body.items).toHaveLength(6);
    expect(listed.body.next_cursor ?? null).toBeNull();
    for (const d of listed.body.items) expect(d.batch_id).toBe(jobId);
    const ids = new Set<string>(listed.body.items.map((d: { id: string }) => d.id));
    expect(ids.size).toBe(6);

    const lines = (await objects.get(REPORTS, `daily/${jobId}/results.jsonl`))
      .toString("utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; status: string; failure_code: string | null });
    expect(lines).toHaveLength(6);
    for (const line of lines) {
      expect(line).toMatchObject({
        id: expect.any(String),
        status: expect.stringMatching(/^(COMPLETED|FAILED)$/),
      });
      expect(ids.has(line.id), `report line ${line.id} is a detection of the job`).toBe(true);
    }
    expect(lines.filter((l) => l.status === "COMPLETED")).toHaveLength(5);
    expect(lines.filter((l) => l.status === "FAILED")).toEqual([
      expect.objectContaining({ failure_code: "unsupported_content_type" }),
    ]);
    const summary = JSON.parse((await objects.get(REPORTS, `daily/${jobId}/summary.json`)).toString("utf8"));
    expect(summary).toMatchObject({ job_id: jobId, status: "COMPLETED" });
    expect(summary.objects.map((o: { key: string }) => o.key).sort()).toEqual(Object.keys(inputs).sort());

    const kubectl = path.join(testClusterBinDir(), "kubectl");
    const cfg = await w.cluster.kubeconfigPath("admin", NS);
    const djobs = (await run(kubectl, ["--kubeconfig", cfg, "get", "djob"])).stdout;
    process.stdout.write(`\n$ kubectl get djob\n${djobs}\n`);
    expect(djobs).toMatch(new RegExp(`${jobId}\\s+Completed\\s+6\\s+5\\s+1\\s+acme-bank`));
  }, 240_000);

  it("DELETE removes the Detection after its finalizer removed the stored files from S3", async () => {
    const objects = w.objects();
    const stored = async () => {
      const out: string[] = [];
      for (const prefix of [keys.documentPrefix(completedId), keys.runPrefix(completedId)])
        for await (const o of objects.list(BUCKET, prefix)) out.push(o.key);
      return out;
    };
    expect((await stored()).length).toBeGreaterThan(0);
    const del = await call("DELETE", `/v1/detection/${completedId}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: completedId, deleted: true });
    expect((await call("GET", `/v1/detection/${completedId}`)).status).toBe(404);
    await until(
      "the Detection to be gone from the apiserver",
      async () => (await adminStore(NS).get(completedId)) === undefined,
      30_000,
    );
    expect(await stored()).toEqual([]);
  });

  it("each identity has exactly its Role: nothing it needs was refused, nothing beyond it is allowed", async () => {
    const operator = w.cluster.access("operator");
    const apiAccess = w.cluster.access("api");
    const group = "docverify.io";
    for (const [verb, resource, g, sub] of [
      ["watch", "detections", group, undefined],
      ["update", "detections", group, "status"],
      ["create", "pods", "", undefined],
      ["delete", "detections", group, undefined],
      ["create", "events", "", undefined],
      ["update", "leases", "coordination.k8s.io", undefined],
    ] as const) {
      expect(
        await canI(operator, { verb, resource, group: g, subresource: sub, namespace: NS }),
        `${verb} ${resource}`,
      ).toBe(true);
    }
    for (const [who, verb, resource, g, ns] of [
      [operator, "get", "secrets", "", NS],
      [operator, "create", "pods", "", "default"],
      [operator, "list", "detections", group, undefined],
      [apiAccess, "update", "detections", group, NS],
      [apiAccess, "create", "pods", "", NS],
      [apiAccess, "update", "leases", "coordination.k8s.io", NS],
    ] as const) {
      expect(
        await canI(who, { verb, resource, group: g, namespace: ns }),
        `${verb} ${resource} in ${ns ?? "all"}`,
      ).toBe(false);
    }
    // Every call the runtime made during this file was allowed by those Roles.
    for (const p of [...operators, ...retiredApis, w.api!])
      expect(p.log, p.label).not.toMatch(/refused to|HTTP-Code: 40[13]|could not record a Kubernetes Event/);
  });
});
