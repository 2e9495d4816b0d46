/**
 * The cluster runtime as the cluster e2e suites run it: a real kube-apiserver + etcd (RBAC on) with the
 * CRDs and the RBAC of deploy/rbac applied, Redis, S3 (s3rver), the node player for step Pods, and
 * factories for the operator and api processes with their own identities. Each suite starts its own.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { type Detection, DETECTION_KIND } from "../../core/detection.js";
import type { ObjectStore } from "../../core/ports.js";
import { createKubeResourceStore } from "../../platform/kube/resource-store.js";
import {
  type RedisServer,
  redisServerAvailable,
  startRedisServer,
} from "../../platform/redis/testdata/redis-server.js";
import { createS3ObjectStore } from "../../platform/s3/object-store.js";
import {
  type S3TestServer,
  s3TestServerAvailable,
  startS3TestServer,
} from "../../platform/s3/testdata/s3-test-server.js";
import { apiRequest, type ClusterAccess } from "./api-request.js";
import { type NodePlayer, startNodePlayer } from "./node-player.js";
import { ENTRY, ROOT, RuntimeProcess } from "./runtime-process.js";
import {
  kubeToolsAvailable,
  type StartTestClusterOptions,
  startTestCluster,
  TEST_CLUSTER_USERS,
  type TestCluster,
  testClusterAvailable,
  waitForPermission,
} from "./test-cluster.js";

const loadAll = (text: string): unknown[] => parseAllDocuments(text).map((d) => d.toJS());

export const BUCKET = "docverify";

export interface TestApiClient {
  client_id: string;
  client_secret: string;
  scopes: string[];
  buckets?: string[];
  sample_allowance?: number;
}

/** Why the cluster e2e cannot run here (empty: it can). */
export function missingPrerequisites(): string[] {
  return [testClusterAvailable(), redisServerAvailable(), s3TestServerAvailable(), kubeToolsAvailable()]
    .filter((p) => !p.ok)
    .map((p) => p.reason ?? "unavailable");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns something other than undefined/false; fails after `timeoutMs`. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

export async function expectOk(
  what: string,
  p: Promise<{ status: number; body: unknown }>,
): Promise<unknown> {
  const r = await p;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export function kubeConfigFor(cluster: TestCluster, identity: "admin" | "operator" | "api"): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(cluster.kubeconfig(identity));
  return kc;
}

export interface RuntimeWorldOptions {
  /** The namespace the runtime runs in; `extraNamespaces` are created too. */
  namespace: string;
  extraNamespaces?: string[];
  cluster?: StartTestClusterOptions;
  /** Paths the local document server answers (`${docBase}/<path>`). */
  documents?: Record<string, Buffer | { body: Buffer; delayMs?: number; type?: string }>;
  /** How the node player starts `docverify` (default: node and the built entry point). */
  stepCommand?: string[];
  /** Every output line of a step Pod's process. */
  onStepOutput?: (pod: string, stream: "stdout" | "stderr", line: string) => void;
  /**
   * The step mode the world's operators run in: `pods` (default) binds deploy/rbac/operator-step-pods.yaml
   * too; `workers` binds operator.yaml alone, so any Pod call of the operator is refused.
   */
  stepMode?: "pods" | "workers";
}

/** Starts everything but the operator and api (see `newOperator`, `startApi`). */
export async function startRuntimeWorld(opts: RuntimeWorldOptions) {
  const NS = opts.namespace;
  const cluster = await startTestCluster(opts.cluster);
  const admin = cluster.access("admin");
  for (const ns of [NS, ...(opts.extraNamespaces ?? [])]) {
    await expectOk(
      `create namespace ${ns}`,
      apiRequest(admin, "POST", "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: ns },
      }),
    );
  }

  // CRDs, as `kubectl apply -f crds/` would.
  for (const file of [
    "docverify.io_detections.yaml",
    "docverify.io_detectionjobs.yaml",
    "docverify.io_detectionpolicies.yaml",
  ]) {
    const crd = loadAll(await readFile(path.join(ROOT, "crds", file), "utf8")).find(Boolean) as {
      metadata: { name: string };
    };
    await expectOk(
      `create CRD ${file}`,
      apiRequest(admin, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd),
    );
    await until(`CRD ${crd.metadata.name} to be established`, async () => {
      const r = await apiRequest<{ status?: { conditions?: { type: string; status: string }[] } }>(
        admin,
        "GET",
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      );
      return r.body.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    });
  }

  // RBAC from deploy/rbac, each RoleBinding also naming the test cluster's user of that identity.
  for (const [file, user] of [
    ["operator.yaml", TEST_CLUSTER_USERS.operator],
    ...(opts.stepMode === "workers"
      ? []
      : [["operator-step-pods.yaml", TEST_CLUSTER_USERS.operator] as const]),
    ["api.yaml", TEST_CLUSTER_USERS.api],
  ] as const) {
    const docs = loadAll(await readFile(path.join(ROOT, "deploy/rbac", file), "utf8")) as {
      kind: string;
      metadata: { name: string; namespace?: string };
      subjects?: { kind: string; name: string; namespace?: string; apiGroup?: string }[];
    }[];
    for (const doc of docs.filter(Boolean)) {
      doc.metadata.namespace = NS;
      const where =
        doc.kind === "ServiceAccount"
          ? `/api/v1/namespaces/${NS}/serviceaccounts`
          : `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/${doc.kind === "Role" ? "roles" : "rolebindings"}`;
      if (doc.kind === "RoleBinding") {
        doc.subjects = [
          ...(doc.subjects ?? []).map((s) => ({ ...s, namespace: NS })),
          { kind: "User", name: user, apiGroup: "rbac.authorization.k8s.io" },
        ];
      }
      await expectOk(`create ${doc.kind} ${doc.metadata.name}`, apiRequest(admin, "POST", where, doc));
    }
  }
  await waitForPermission(cluster.access("operator"), {
    verb: "watch",
    resource: "detections",
    group: "docverify.io",
    namespace: NS,
  });
  if (opts.stepMode !== "workers")
    await waitForPermission(cluster.access("operator"), {
      verb: "create",
      resource: "pods",
      group: "",
      namespace: NS,
    });
  await waitForPermission(cluster.access("api"), {
    verb: "create",
    resource: "detections",
    group: "docverify.io",
    namespace: NS,
  });

  const [redis, s3]: [RedisServer, S3TestServer] = await Promise.all([
    startRedisServer(),
    startS3TestServer(),
  ]);

  const docServer = http.createServer((req, res) => {
    const entry = opts.documents?.[(req.url ?? "").split("?")[0]!];
    if (!entry) {
      res.writeHead(404).end();
      return;
    }
    const { body, delayMs, type } = Buffer.isBuffer(entry)
      ? { body: entry, delayMs: 0, type: undefined }
      : entry;
    setTimeout(() => {
      res.writeHead(200, { "content-type": type ?? "application/pdf", "content-length": body.length });
      res.end(body);
    }, delayMs ?? 0);
  });
  await new Promise<void>((r) => docServer.listen(0, "127.0.0.1", () => r()));
  const docBase = `http://127.0.0.1:${(docServer.address() as AddressInfo).port}`;

  let playerLog = "";
  const player: NodePlayer = await startNodePlayer(cluster.access("harness"), {
    namespace: NS,
    command: opts.stepCommand ?? [process.execPath, ENTRY],
    env: { HOME: process.env.HOME ?? os.tmpdir() },
    log: (line) => (playerLog += `${line}\n`),
    ...(opts.onStepOutput ? { onOutput: opts.onStepOutput } : {}),
  });

  const s3Env = {
    S3_ENDPOINT: s3.url,
    S3_ACCESS_KEY: s3.accessKey,
    S3_SECRET_KEY: s3.secretKey,
    S3_BUCKET: BUCKET,
    REDIS_URL: redis.url,
    KUBE_NAMESPACE: NS,
    DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true",
    DOCVERIFY_ALLOWED_SOURCE_PORTS: String((docServer.address() as AddressInfo).port),
    DOCVERIFY_LOG_LEVEL: "info",
    HOST: "127.0.0.1",
    PORT: "0",
  };
  const operatorEnv = {
    ...s3Env,
    KUBECONFIG: await cluster.kubeconfigPath("operator", NS),
    DOCVERIFY_STEP_IMAGE: "docverify:e2e",
    DOCVERIFY_LEASE_DURATION_SECONDS: "3",
    DOCVERIFY_LEASE_RENEW_DEADLINE_SECONDS: "2",
    DOCVERIFY_LEASE_RETRY_PERIOD_SECONDS: "0.5",
  };
  const operators: RuntimeProcess[] = [];
  const stepWorkers: RuntimeProcess[] = [];
  let api: RuntimeProcess | undefined;
  /** The api's clients-file folders, removed by `stop`. */
  const apiDirs: string[] = [];
  let apiUrl = "";
  let apiClients: TestApiClient[] = [];
  const tokens = new Map<string, string>();

  const world = {
    cluster,
    admin,
    redis,
    s3,
    player,
    docBase,
    s3Env,
    operatorEnv,
    operators,
    stepWorkers,
    get api() {
      return api;
    },
    get apiUrl() {
      return apiUrl;
    },
    /** An operator replica (POD_NAME `name`), started; `env` on top of the shared settings. */
    async newOperator(name: string, env: Record<string, string> = {}): Promise<RuntimeProcess> {
      const p = new RuntimeProcess(
        "operator",
        { ...operatorEnv, POD_NAME: name, ...env },
        `operator ${name}`,
      );
      operators.push(p);
      await p.start(/docverify operator (\S+) started/);
      return p;
    },
    /**
     * A warm step worker of one kind (`docverify step-worker --step <step>`, what the chart's Deployment
     * runs), started; it shares the operator's Redis and S3. `env` on top of the shared settings.
     */
    async newStepWorker(step: "prepare" | "check" | "agent", env: Record<string, string> = {}) {
      const p = new RuntimeProcess("step-worker", { ...s3Env, ...env }, `step-worker ${step}`, [
        "--step",
        step,
      ]);
      stepWorkers.push(p);
      await p.start(/docverify step-worker \S+ started/);
      return p;
    },
    /** The api with a clients file of `clients`; `env` on top of the shared settings. */
    async startApi(clients: TestApiClient[], env: Record<string, string> = {}): Promise<RuntimeProcess> {
      const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-cluster-e2e-"));
      apiDirs.push(dir);
      const clientsFile = path.join(dir, "clients.json");
      await writeFile(clientsFile, JSON.stringify({ clients }));
      apiClients = clients;
      tokens.clear(); // a new api signs with a new key
      api = new RuntimeProcess("api", {
        ...s3Env,
        KUBECONFIG: await cluster.kubeconfigPath("api", NS),
        DOCVERIFY_CLIENTS_FILE: clientsFile,
        DOCVERIFY_TOKEN_SIGNING_KEY: randomBytes(32).toString("hex"),
        ...env,
      });
      apiUrl = (await api.start(/listening on (http:\/\/[\d.]+:\d+)/))[1]!;
      return api;
    },
    /** One REST call as `client` (default: the first client of the api's clients file). */
    async call(
      method: string,
      p: string,
      json?: unknown,
      client: TestApiClient | undefined = apiClients[0],
      headers: Record<string, string> = {},
      // biome-ignore lint/suspicious/noExplicitAny: JSON answers of many shapes
    ): Promise<{ status: number; body: any }> {
      if (!client) throw new Error("start the api first");
      let token = tokens.get(client.client_id);
      if (!token) {
        const res = await fetch(`${apiUrl}/token`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            grant_type: "client_credentials",
            client_id: client.client_id,
            client_secret: client.client_secret,
          }),
        });
        if (res.status !== 200) throw new Error(`POST /token for ${client.client_id}: ${res.status}`);
        token = ((await res.json()) as { access_token: string }).access_token;
        tokens.set(client.client_id, token);
      }
      const res = await fetch(`${apiUrl}${p}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(json ? { "content-type": "application/json" } : {}),
          ...headers,
        },
        body: json ? JSON.stringify(json) : undefined,
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: res.status, body };
    },
    /** The last lines of every process, for a failure message. */
    diagnostics(): string {
      return (
        [...operators, ...stepWorkers].map((o) => `--- ${o.label}\n${o.tail(3000)}`).join("\n") +
        `\n--- api\n${api?.tail(2000) ?? ""}\n--- node player\n${playerLog.slice(-2000)}`
      );
    },
    // biome-ignore lint/suspicious/noExplicitAny: a DetectionDetail
    async waitTerminal(id: string, timeoutMs = 120_000): Promise<any> {
      try {
        return await until(
          `detection ${id} to finish`,
          async () => {
            const r = await world.call("GET", `/v1/detection/${id}`);
            if (r.status !== 200) throw new Error(`GET ${id}: ${r.status} ${JSON.stringify(r.body)}`);
            return r.body.status === "COMPLETED" || r.body.status === "FAILED" ? r.body : undefined;
          },
          timeoutMs,
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${world.diagnostics()}`);
      }
    },
    /** A Detection store in `ns` as the admin (what kubectl sees). */
    adminStore(ns = NS) {
      return createKubeResourceStore<Detection>(kubeConfigFor(cluster, "admin"), {
        namespace: ns,
        plural: "detections",
        kind: DETECTION_KIND,
      });
    },
    /** The S3 object store the runtime uses. */
    objects(): ObjectStore {
      return createS3ObjectStore({
        endPoint: s3.endPoint,
        port: s3.port,
        useSSL: false,
        accessKey: s3.accessKey,
        secretKey: s3.secretKey,
      });
    },
    async stop(): Promise<void> {
      await api?.stop();
      for (const o of operators) await o.stop();
      for (const o of stepWorkers) await o.stop();
      await player.stop();
      await new Promise<void>((r) => docServer.close(() => r()));
      await Promise.all([redis.stop(), s3.stop()]);
      await cluster.stop();
      for (const dir of apiDirs.splice(0)) await rm(dir, { recursive: true, force: true });
    },
  };
  return world;
}

export type RuntimeWorld = Awaited<ReturnType<typeof startRuntimeWorld>>;
export type { ClusterAccess };
