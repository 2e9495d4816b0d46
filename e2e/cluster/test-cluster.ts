import { type ChildProcess, spawn } from "node:child_process";
import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { type ApiResponse, type ClusterAccess, apiRequest } from "./api-request.js";

/**
 * A real kube-apiserver backed by a real etcd on loopback, built by scripts/build-test-cluster.sh.
 * No scheduler, kubelet or controller-manager run: see node-player.ts for the node, and remember that
 * nothing garbage-collects owned objects or creates a namespace's `default` ServiceAccount.
 */

export type TestIdentity = "admin" | "api" | "operator" | "harness";

/** Static-token users: the admin is in system:masters; the others start with no permissions except the harness. */
export const TEST_CLUSTER_USERS = {
  admin: "docverify-test-admin",
  api: "docverify-api",
  operator: "docverify-operator",
  harness: "docverify-harness",
} as const satisfies Record<TestIdentity, string>;

/** The ClusterRole bound to the harness identity at start: exactly what the node player calls. */
export const NODE_PLAYER_CLUSTER_ROLE = "docverify-test-node-player";

export interface TestCluster {
  /** https://127.0.0.1:<port> */
  url: string;
  /** PEM of the CA that signed the apiserver's serving certificate. */
  caPem: string;
  tokens: Record<TestIdentity, string>;
  /** url + caPem + token of one identity (for apiRequest, startNodePlayer, KubeConfig.loadFromOptions). */
  access(identity: TestIdentity): Required<ClusterAccess>;
  /** A kubeconfig YAML for one identity (current context on `namespace` when given). */
  kubeconfig(identity: TestIdentity, namespace?: string): string;
  /** The same kubeconfig written to a file in the cluster's temp dir (for kubectl/helm `--kubeconfig`). */
  kubeconfigPath(identity: TestIdentity, namespace?: string): Promise<string>;
  /** A token of a ServiceAccount through the TokenRequest API (the ServiceAccount must exist). */
  serviceAccountToken(namespace: string, name: string, expirationSeconds?: number): Promise<string>;
  /** Milliseconds from spawning etcd to the apiserver answering /readyz 200. */
  readyAfterMs: number;
  /** etcd's client URL (http://127.0.0.1:<port>), e.g. to count the objects the apiserver stores. */
  etcdUrl: string;
  /** The temp dir holding etcd's data, certificates, keys, token file and logs. */
  dir: string;
  /** Stops the apiserver, then etcd, and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

export interface StartTestClusterOptions {
  /** Folder holding kube-apiserver and etcd; default: testClusterBinDir(). */
  binDir?: string;
  /** Default 90 s (the first start after a build may be slower while the OS pages the binaries in). */
  readyTimeoutMs?: number;
  /** Extra kube-apiserver flags (e.g. `--watch-cache=false`). */
  extraApiserverArgs?: string[];
  /** Keep the temp dir (logs) after stop() for debugging. */
  keepDir?: boolean;
}

export class TestClusterError extends Error {
  constructor(
    readonly code: "binaries_missing" | "start_failed" | "not_ready" | "request_failed",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "TestClusterError";
  }
}

const repoRoot = path.resolve(import.meta.dirname, "../..");
const goModuleDir = path.join(repoRoot, "e2e/cluster/go");

/** The cache folder scripts/build-test-cluster.sh builds into. */
export function testClusterCacheDir(): string {
  return process.env.DOCVERIFY_TEST_CLUSTER_DIR || path.join(os.homedir(), ".cache/docverify/test-cluster");
}

export function testClusterBinDir(): string {
  return path.join(testClusterCacheDir(), "bin");
}

/** The stamp build-test-cluster.sh writes for the pins in e2e/cluster/go (go.mod + go.sum), without its recipe part. */
export function expectedBuildStamp(): string {
  const mod = readFileSync(path.join(goModuleDir, "go.mod"));
  const sum = readFileSync(path.join(goModuleDir, "go.sum"));
  const pinned = (module: string) =>
    mod
      .toString("utf8")
      .split("\n")
      .map((l) => l.trim().split(/\s+/))
      .find((f) => f[0] === module && f[1]?.startsWith("v"))?.[1];
  const pins = createHash("sha256").update(mod).update(sum).digest("hex");
  return `kube-apiserver=${pinned("k8s.io/kubernetes")} etcd=${pinned("go.etcd.io/etcd/server/v3")} pins=${pins}`;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether the binaries of the pinned versions are built; the reason says how to get them when not. */
export function testClusterAvailable(binDir = testClusterBinDir()): { ok: boolean; reason?: string } {
  const setup = "run `npm run test:setup` (or `bash scripts/build-test-cluster.sh`) to build them";
  const missing = ["kube-apiserver", "etcd"].filter((b) => !isExecutable(path.join(binDir, b)));
  if (missing.length > 0) {
    return { ok: false, reason: `test cluster: ${missing.join(" and ")} not built in ${binDir}; ${setup}` };
  }
  const stampFile = path.join(binDir, "versions.stamp");
  const stamp = existsSync(stampFile) ? readFileSync(stampFile, "utf8").trim() : "";
  // The script appends " recipe=<hash of its link flags>"; the pins are what this side can check.
  if (binDir === testClusterBinDir() && stamp.split(" recipe=")[0] !== expectedBuildStamp()) {
    return {
      ok: false,
      reason: `test cluster: the binaries in ${binDir} were built for other pins than e2e/cluster/go (${stamp || "no stamp"}); ${setup}`,
    };
  }
  return { ok: true };
}

/** Whether kubectl and helm (scripts/fetch-kube-tools.sh) are in the cache bin folder. */
export function kubeToolsAvailable(binDir = testClusterBinDir()): { ok: boolean; reason?: string } {
  const missing = ["kubectl", "helm"].filter((b) => !isExecutable(path.join(binDir, b)));
  if (missing.length === 0) return { ok: true };
  return {
    ok: false,
    reason: `${missing.join(" and ")} not found in ${binDir}; run \`npm run test:setup\` (or \`bash scripts/fetch-kube-tools.sh\`)`,
  };
}

/** Free loopback ports: all held open at once so they differ, then released for the processes to bind. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once("error", reject);
          s.listen(0, "127.0.0.1", () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

interface Proc {
  child: ChildProcess;
  logFile: string;
  exited: Promise<number | null>;
  exitCode(): number | null | undefined;
}

async function spawnLogged(bin: string, args: string[], logFile: string): Promise<Proc> {
  const log = await open(logFile, "a");
  const child = spawn(bin, args, { stdio: ["ignore", log.fd, log.fd] });
  await log.close();
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (c, signal) => {
      code = c ?? (signal ? -1 : null);
      resolve(code);
    });
    child.once("error", () => {
      code = -1;
      resolve(code);
    });
  });
  return { child, logFile, exited, exitCode: () => code };
}

async function logTail(file: string, lines = 25): Promise<string> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

async function stopProc(p: Proc, graceMs: number): Promise<void> {
  if (p.exitCode() !== undefined) return;
  p.child.kill("SIGTERM");
  const timer = setTimeout(() => p.child.kill("SIGKILL"), graceMs);
  await p.exited;
  clearTimeout(timer);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  procs: Proc[],
  deadline: number,
): Promise<void> {
  for (;;) {
    for (const p of procs) {
      if (p.exitCode() !== undefined) {
        throw new TestClusterError(
          "start_failed",
          `${path.basename(p.logFile, ".log")} exited (code ${p.exitCode()}) while waiting for ${what}; its log ends with:\n${await logTail(p.logFile)}`,
        );
      }
    }
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) {
      const tails = await Promise.all(
        procs.map(async (p) => `--- ${p.logFile}\n${await logTail(p.logFile)}`),
      );
      throw new TestClusterError(
        "not_ready",
        `test cluster: timed out waiting for ${what}.\n${tails.join("\n")}`,
      );
    }
    await sleep(100);
  }
}

/** Kills child processes if the test process exits without calling stop(). */
const live = new Set<Proc>();
let exitHookInstalled = false;
function track(p: Proc): void {
  live.add(p);
  void p.exited.then(() => live.delete(p));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const q of live) q.child.kill("SIGKILL");
    });
  }
}

function lastPemCertificate(pem: string): string {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const last = blocks.at(-1);
  if (!last)
    throw new TestClusterError("start_failed", "test cluster: the apiserver wrote no serving certificate");
  return `${last}\n`;
}

function kubeconfigYaml(url: string, caPem: string, user: string, token: string, namespace?: string): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "  - name: docverify-test",
    "    cluster:",
    `      server: ${q(url)}`,
    `      certificate-authority-data: ${Buffer.from(caPem).toString("base64")}`,
    "users:",
    `  - name: ${q(user)}`,
    "    user:",
    `      token: ${q(token)}`,
    "contexts:",
    `  - name: ${q(`${user}@docverify-test`)}`,
    "    context:",
    "      cluster: docverify-test",
    `      user: ${q(user)}`,
    ...(namespace ? [`      namespace: ${q(namespace)}`] : []),
    `current-context: ${q(`${user}@docverify-test`)}`,
    "",
  ].join("\n");
}

function expectOk<T>(what: string, res: ApiResponse<T>, ok: number[] = [200, 201]): T {
  if (!ok.includes(res.status)) {
    const msg =
      typeof res.body === "object" && res.body ? (res.body as { message?: string }).message : res.body;
    throw new TestClusterError(
      "request_failed",
      `test cluster: ${what} failed with HTTP ${res.status}: ${msg}`,
    );
  }
  return res.body;
}

export interface AccessAttributes {
  verb: string;
  resource: string;
  group?: string;
  namespace?: string;
  subresource?: string;
}

/** Asks the apiserver whether `access` may do something (SelfSubjectAccessReview). */
export async function canI(access: ClusterAccess, attrs: AccessAttributes): Promise<boolean> {
  const res = await apiRequest<{ status?: { allowed?: boolean } }>(
    access,
    "POST",
    "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: { ...attrs, group: attrs.group ?? "" } },
    },
  );
  return expectOk("SelfSubjectAccessReview", res).status?.allowed === true;
}

/** Waits until a new (Cluster)RoleBinding is in effect for `access` (RBAC reads through a cache). */
export async function waitForPermission(
  access: ClusterAccess,
  attrs: AccessAttributes,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await canI(access, attrs))) {
    if (Date.now() > deadline) {
      throw new TestClusterError(
        "not_ready",
        `test cluster: ${attrs.verb} ${attrs.resource} was still denied after ${timeoutMs} ms; check the binding's subject and role`,
      );
    }
    await sleep(50);
  }
}

async function grantNodePlayer(admin: ClusterAccess): Promise<void> {
  const rbac = "/apis/rbac.authorization.k8s.io/v1";
  const role = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: NODE_PLAYER_CLUSTER_ROLE },
    rules: [
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "delete"] },
      { apiGroups: [""], resources: ["pods/status"], verbs: ["get", "patch", "update"] },
      { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["get", "create"] },
    ],
  };
  const binding = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: NODE_PLAYER_CLUSTER_ROLE },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: NODE_PLAYER_CLUSTER_ROLE },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: TEST_CLUSTER_USERS.harness }],
  };
  expectOk(
    "creating the node player's ClusterRole",
    await apiRequest(admin, "POST", `${rbac}/clusterroles`, role),
  );
  expectOk(
    "creating the node player's ClusterRoleBinding",
    await apiRequest(admin, "POST", `${rbac}/clusterrolebindings`, binding),
  );
}

const ADMISSION_PLUGINS = [
  "NamespaceLifecycle",
  "LimitRanger",
  "ServiceAccount",
  "PodSecurity",
  "Priority",
  "DefaultTolerationSeconds",
  "ResourceQuota",
  "MutatingAdmissionWebhook",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionWebhook",
];

async function startOnce(binDir: string, dir: string, opts: StartTestClusterOptions): Promise<TestCluster> {
  const started = Date.now();
  const deadline = started + (opts.readyTimeoutMs ?? 90_000);
  const [etcdClient, etcdPeer, securePort] = await freePorts(3);
  const tokens: Record<TestIdentity, string> = {
    admin: randomBytes(24).toString("hex"),
    api: randomBytes(24).toString("hex"),
    operator: randomBytes(24).toString("hex"),
    harness: randomBytes(24).toString("hex"),
  };
  // token,user,uid,"group1,group2"
  const tokenCsv = (Object.keys(tokens) as TestIdentity[])
    .map((id) => {
      const user = TEST_CLUSTER_USERS[id];
      return `${tokens[id]},${user},${user}${id === "admin" ? ',"system:masters"' : ""}`;
    })
    .join("\n");
  const sa = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  await Promise.all([
    writeFile(path.join(dir, "tokens.csv"), `${tokenCsv}\n`, { mode: 0o600 }),
    writeFile(path.join(dir, "sa.key"), sa.privateKey.export({ type: "pkcs8", format: "pem" }), {
      mode: 0o600,
    }),
    writeFile(path.join(dir, "sa.pub"), sa.publicKey.export({ type: "spki", format: "pem" })),
  ]);

  const etcdUrl = `http://127.0.0.1:${etcdClient}`;
  const peerUrl = `http://127.0.0.1:${etcdPeer}`;
  const etcd = await spawnLogged(
    path.join(binDir, "etcd"),
    [
      "--name=docverify-test",
      `--data-dir=${path.join(dir, "etcd")}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=docverify-test=${peerUrl}`,
      "--initial-cluster-state=new",
      // Test data only: skipping fsync and electing fast keep startup and writes quick.
      "--unsafe-no-fsync",
      "--heartbeat-interval=10",
      "--election-timeout=100",
      "--log-level=warn",
    ],
    path.join(dir, "etcd.log"),
  );
  track(etcd);
  const procs: Proc[] = [etcd];
  let apiserver: Proc | undefined;
  const stopAll = async () => {
    if (apiserver) await stopProc(apiserver, 5_000);
    await stopProc(etcd, 5_000);
  };
  try {
    await waitUntil(
      "etcd to be healthy",
      async () => {
        const res = await fetch(`${etcdUrl}/health`);
        return res.ok && ((await res.json()) as { health?: string }).health === "true";
      },
      procs,
      deadline,
    );

    const certDir = path.join(dir, "certs");
    apiserver = await spawnLogged(
      path.join(binDir, "kube-apiserver"),
      [
        `--etcd-servers=${etcdUrl}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${securePort}`,
        `--cert-dir=${certDir}`,
        `--token-auth-file=${path.join(dir, "tokens.csv")}`,
        "--authorization-mode=RBAC",
        `--enable-admission-plugins=${ADMISSION_PLUGINS.join(",")}`,
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${path.join(dir, "sa.pub")}`,
        `--service-account-signing-key-file=${path.join(dir, "sa.key")}`,
        "--service-cluster-ip-range=10.0.0.0/24",
        "--endpoint-reconciler-type=none",
        "--profiling=false",
        ...(opts.extraApiserverArgs ?? []),
      ],
      path.join(dir, "kube-apiserver.log"),
    );
    track(apiserver);
    procs.push(apiserver);

    // The apiserver writes its self-signed chain (leaf + the CA that signed it) at start; trust the CA.
    const certFile = path.join(certDir, "apiserver.crt");
    let caPem = "";
    await waitUntil(
      "the apiserver's serving certificate",
      async () => {
        caPem = lastPemCertificate(await readFile(certFile, "utf8"));
        return true;
      },
      procs,
      deadline,
    );
    const url = `https://127.0.0.1:${securePort}`;
    const access = (id: TestIdentity): Required<ClusterAccess> => ({ url, caPem, token: tokens[id] });
    await waitUntil(
      "kube-apiserver /readyz",
      async () =>
        (await apiRequest(access("admin"), "GET", "/readyz", undefined, { timeoutMs: 2_000 })).status === 200,
      procs,
      deadline,
    );
    await grantNodePlayer(access("admin"));
    await waitForPermission(access("harness"), { verb: "watch", resource: "pods", namespace: "default" });
    const readyAfterMs = Date.now() - started;

    let stopped: Promise<void> | undefined;
    return {
      url,
      caPem,
      tokens,
      access,
      readyAfterMs,
      etcdUrl,
      dir,
      kubeconfig: (id, namespace) =>
        kubeconfigYaml(url, caPem, TEST_CLUSTER_USERS[id], tokens[id], namespace),
      async kubeconfigPath(id, namespace) {
        const file = path.join(dir, `kubeconfig-${id}${namespace ? `-${namespace}` : ""}.yaml`);
        await writeFile(file, kubeconfigYaml(url, caPem, TEST_CLUSTER_USERS[id], tokens[id], namespace), {
          mode: 0o600,
        });
        return file;
      },
      async serviceAccountToken(namespace, name, expirationSeconds = 3600) {
        const res = await apiRequest<{ status?: { token?: string } }>(
          access("admin"),
          "POST",
          `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}/token`,
          { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds } },
        );
        const token = expectOk(`requesting a token for ServiceAccount ${namespace}/${name}`, res).status
          ?.token;
        if (!token)
          throw new TestClusterError("request_failed", "test cluster: the TokenRequest answer held no token");
        return token;
      },
      stop() {
        stopped ??= (async () => {
          await stopAll();
          if (!opts.keepDir) await rm(dir, { recursive: true, force: true });
        })();
        return stopped;
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * Starts etcd and kube-apiserver on free loopback ports with a fresh data dir and waits for /readyz.
 * Throws TestClusterError (code binaries_missing, start_failed or not_ready) with the log tail.
 */
export async function startTestCluster(opts: StartTestClusterOptions = {}): Promise<TestCluster> {
  const binDir = opts.binDir ?? testClusterBinDir();
  const available = testClusterAvailable(binDir);
  if (!available.ok)
    throw new TestClusterError("binaries_missing", available.reason ?? "test cluster unavailable");
  for (let attempt = 1; ; attempt++) {
    const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-cluster-"));
    try {
      return await startOnce(binDir, dir, opts);
    } catch (err) {
      const portTaken = err instanceof TestClusterError && /address already in use/i.test(err.message);
      if (!opts.keepDir) await rm(dir, { recursive: true, force: true });
      // Another process may grab a port between freePorts() and the bind: retry on fresh ports.
      if (!portTaken || attempt >= 3) throw err;
    }
  }
}
