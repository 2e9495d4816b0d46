import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClusterAccess, apiRequest } from "./api-request.js";
import { type NodePlayer, startNodePlayer } from "./node-player.js";
import {
  TEST_CLUSTER_USERS,
  type TestCluster,
  kubeToolsAvailable,
  startTestCluster,
  testClusterAvailable,
  testClusterBinDir,
  waitForPermission,
} from "./test-cluster.js";

const available = testClusterAvailable();
const tools = kubeToolsAvailable();
const run = promisify(execFile);

interface PodLike {
  metadata?: { name?: string; uid?: string };
  status?: {
    phase?: string;
    reason?: string;
    startTime?: string;
    containerStatuses?: {
      state?: {
        running?: { startedAt?: string };
        terminated?: {
          exitCode?: number;
          reason?: string;
          message?: string;
          startedAt?: string;
          finishedAt?: string;
        };
      };
    }[];
  };
}

let uniq = 0;
const nsName = (what: string) => `t-${what}-${process.pid}-${++uniq}`;

async function createNamespace(admin: ClusterAccess, name: string): Promise<void> {
  const res = await apiRequest(admin, "POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name },
  });
  expect(res.status).toBe(201);
}

function pod(
  name: string,
  command: string[],
  extra: Record<string, unknown> = {},
  env?: { name: string; value: string }[],
) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      restartPolicy: "Never",
      containers: [{ name: "step", image: "docverify:test", command, ...(env ? { env } : {}) }],
      ...extra,
    },
  };
}

async function waitForPod(
  admin: ClusterAccess,
  ns: string,
  name: string,
  done: (p: PodLike) => boolean,
  timeoutMs = 30_000,
): Promise<PodLike> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await apiRequest<PodLike>(admin, "GET", `/api/v1/namespaces/${ns}/pods/${name}`);
    if (res.status === 200 && done(res.body)) return res.body;
    if (Date.now() > deadline) {
      throw new Error(`pod ${ns}/${name} did not reach the expected state: ${JSON.stringify(res.body)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const terminal = (p: PodLike) => p.status?.phase === "Succeeded" || p.status?.phase === "Failed";
const terminated = (p: PodLike) => p.status?.containerStatuses?.[0]?.state?.terminated;

describe.skipIf(!available.ok)(
  available.ok ? "test cluster (real kube-apiserver + etcd)" : `test cluster: SKIPPED — ${available.reason}`,
  () => {
    let cluster: TestCluster;
    let admin: ClusterAccess;

    beforeAll(async () => {
      cluster = await startTestCluster();
      admin = cluster.access("admin");
      console.log(`test cluster ready in ${cluster.readyAfterMs} ms at ${cluster.url}`);
    });
    afterAll(async () => {
      await cluster?.stop();
    });

    describe("apiserver", () => {
      it("answers /readyz and /version over TLS trusted through caPem", async () => {
        expect((await apiRequest(admin, "GET", "/readyz")).status).toBe(200);
        const version = await apiRequest<{ gitVersion?: string }>(admin, "GET", "/version");
        expect(version.status).toBe(200);
        expect(version.body.gitVersion).toMatch(/^v1\.35\./);
      });

      it("rejects an unknown token with 401 and knows each test identity by name", async () => {
        const bad = await apiRequest({ ...admin, token: "not-a-token" }, "GET", "/api/v1/namespaces");
        expect(bad.status).toBe(401);
        for (const id of ["admin", "api", "operator", "harness"] as const) {
          const review = await apiRequest<{
            status?: { userInfo?: { username?: string; groups?: string[] } };
          }>(cluster.access(id), "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
            apiVersion: "authentication.k8s.io/v1",
            kind: "SelfSubjectReview",
          });
          expect(review.status).toBe(201);
          expect(review.body.status?.userInfo?.username).toBe(TEST_CLUSTER_USERS[id]);
          expect(review.body.status?.userInfo?.groups?.includes("system:masters")).toBe(id === "admin");
        }
      });

      it("issues ServiceAccount tokens through the TokenRequest API", async () => {
        const ns = nsName("sa");
        await createNamespace(admin, ns);
        const sa = await apiRequest(admin, "POST", `/api/v1/namespaces/${ns}/serviceaccounts`, {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: "docverify-operator" },
        });
        expect(sa.status).toBe(201);
        const token = await cluster.serviceAccountToken(ns, "docverify-operator", 600);
        const review = await apiRequest<{ status?: { userInfo?: { username?: string } } }>(
          { ...admin, token },
          "POST",
          "/apis/authentication.k8s.io/v1/selfsubjectreviews",
          { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
        );
        expect(review.body.status?.userInfo?.username).toBe(`system:serviceaccount:${ns}:docverify-operator`);
      });
    });

    describe("RBAC", () => {
      it("denies an identity without a binding (403) and allows it once a Role and RoleBinding exist", async () => {
        const ns = nsName("rbac");
        await createNamespace(admin, ns);
        const api = cluster.access("api");
        const denied = await apiRequest<{ reason?: string }>(
          api,
          "GET",
          `/api/v1/namespaces/${ns}/configmaps`,
        );
        expect(denied.status).toBe(403);
        expect(denied.body.reason).toBe("Forbidden");

        const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
        const role = await apiRequest(admin, "POST", `${rbac}/roles`, {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: "read-configmaps" },
          rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }],
        });
        expect(role.status).toBe(201);
        const binding = await apiRequest(admin, "POST", `${rbac}/rolebindings`, {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "api-reads-configmaps" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "read-configmaps" },
          subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: TEST_CLUSTER_USERS.api }],
        });
        expect(binding.status).toBe(201);
        await waitForPermission(api, { verb: "list", resource: "configmaps", namespace: ns });

        expect((await apiRequest(api, "GET", `/api/v1/namespaces/${ns}/configmaps`)).status).toBe(200);
        // Exactly what was granted: not another verb, not another namespace, not another identity.
        const create = await apiRequest(api, "POST", `/api/v1/namespaces/${ns}/configmaps`, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "x" },
        });
        expect(create.status).toBe(403);
        expect((await apiRequest(api, "GET", "/api/v1/namespaces/default/configmaps")).status).toBe(403);
        const operator = cluster.access("operator");
        expect((await apiRequest(operator, "GET", `/api/v1/namespaces/${ns}/configmaps`)).status).toBe(403);
      });
    });

    describe("custom resources", () => {
      it("applies a CRD, then validates, creates and status-patches a custom object", async () => {
        const group = `t${process.pid}.test.docverify.io`;
        const crd = await apiRequest(
          admin,
          "POST",
          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
          {
            apiVersion: "apiextensions.k8s.io/v1",
            kind: "CustomResourceDefinition",
            metadata: { name: `widgets.${group}` },
            spec: {
              group,
              scope: "Namespaced",
              names: { plural: "widgets", singular: "widget", kind: "Widget", shortNames: ["wdg"] },
              versions: [
                {
                  name: "v1alpha1",
                  served: true,
                  storage: true,
                  subresources: { status: {} },
                  schema: {
                    openAPIV3Schema: {
                      type: "object",
                      properties: {
                        spec: {
                          type: "object",
                          required: ["size"],
                          properties: { size: { type: "integer", minimum: 1, maximum: 10 } },
                        },
                        status: { type: "object", properties: { phase: { type: "string" } } },
                      },
                    },
                  },
                },
              ],
            },
          },
        );
        expect(crd.status).toBe(201);
        const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`;
        const deadline = Date.now() + 30_000;
        for (;;) {
          const got = await apiRequest<{ status?: { conditions?: { type: string; status: string }[] } }>(
            admin,
            "GET",
            crdPath,
          );
          if (got.body.status?.conditions?.some((c) => c.type === "Established" && c.status === "True"))
            break;
          if (Date.now() > deadline) throw new Error(`CRD not established: ${JSON.stringify(got.body)}`);
          await new Promise((r) => setTimeout(r, 100));
        }

        const ns = nsName("crd");
        await createNamespace(admin, ns);
        const base = `/apis/${group}/v1alpha1/namespaces/${ns}/widgets`;
        const widget = (name: string, size: unknown) => ({
          apiVersion: `${group}/v1alpha1`,
          kind: "Widget",
          metadata: { name },
          spec: { size },
        });
        // CRD served paths can take a moment after Established; retry only on 404.
        let created = await apiRequest<{ metadata?: { resourceVersion?: string } }>(
          admin,
          "POST",
          base,
          widget("w1", 3),
        );
        for (let i = 0; created.status === 404 && i < 50; i++) {
          await new Promise((r) => setTimeout(r, 100));
          created = await apiRequest(admin, "POST", base, widget("w1", 3));
        }
        expect(created.status).toBe(201);

        const invalid = await apiRequest<{ reason?: string; message?: string }>(
          admin,
          "POST",
          base,
          widget("w2", 99),
        );
        expect(invalid.status).toBe(422);
        expect(invalid.body.message).toContain("spec.size");

        const status = await apiRequest<{ status?: { phase?: string }; spec?: { size?: number } }>(
          admin,
          "PATCH",
          `${base}/w1/status`,
          { status: { phase: "Ready" }, spec: { size: 7 } },
          { contentType: "application/merge-patch+json" },
        );
        expect(status.status).toBe(200);
        expect(status.body.status?.phase).toBe("Ready");
        expect(status.body.spec?.size).toBe(3); // the status subresource ignores spec changes

        const stale = await apiRequest(admin, "PUT", `${base}/w1`, {
          ...widget("w1", 4),
          metadata: { name: "w1", resourceVersion: created.body.metadata?.resourceVersion },
        });
        expect(stale.status).toBe(409);
      });
    });

    describe("node player", () => {
      let ns: string;
      let player: NodePlayer;
      const notes: string[] = [];

      beforeAll(async () => {
        ns = nsName("node");
        await createNamespace(admin, ns);
        // Without kube-controller-manager nothing creates the `default` ServiceAccount: Pods are refused.
        const early = await apiRequest<{ message?: string }>(
          admin,
          "POST",
          `/api/v1/namespaces/${ns}/pods`,
          pod("too-early", [process.execPath, "-e", ""]),
        );
        expect(early.status).toBe(403);
        expect(early.body.message).toMatch(/service ?account/i);

        player = await startNodePlayer(cluster.access("harness"), {
          namespace: ns,
          env: { DOCVERIFY_FROM_PLAYER: "player", DOCVERIFY_OVERRIDDEN: "player" },
          command: [process.execPath, "-e", "console.log(JSON.stringify(process.argv.slice(1)))"],
          log: (line) => notes.push(line),
        });
      });
      afterAll(async () => {
        await player?.stop();
      });

      async function createPod(body: ReturnType<typeof pod>): Promise<void> {
        const res = await apiRequest(admin, "POST", `/api/v1/namespaces/${ns}/pods`, body);
        expect(res.status, JSON.stringify(res.body)).toBe(201);
      }

      it("runs a Pod's command to Succeeded with the last stdout line as termination message", async () => {
        await createPod(
          pod("hello", [
            process.execPath,
            "-e",
            "console.log('hello'); console.log(JSON.stringify({ok:true}))",
          ]),
        );
        const done = await waitForPod(admin, ns, "hello", terminal);
        expect(done.status?.phase).toBe("Succeeded");
        const t = terminated(done);
        expect(t).toMatchObject({ exitCode: 0, reason: "Completed", message: '{"ok":true}' });
        expect(Date.parse(t?.finishedAt ?? "")).toBeGreaterThanOrEqual(Date.parse(t?.startedAt ?? ""));
        expect(done.status?.startTime).toBeTruthy();
      });

      it("reports a failing command as Failed with its exit code", async () => {
        await createPod(
          pod("fails", [process.execPath, "-e", "console.log('partial'); console.log(''); process.exit(3)"]),
        );
        const done = await waitForPod(admin, ns, "fails", terminal);
        expect(done.status?.phase).toBe("Failed");
        expect(terminated(done)).toMatchObject({ exitCode: 3, reason: "Error", message: "partial" });
      });

      it("writes Running with the container's startedAt while the process runs", async () => {
        await createPod(pod("runs", [process.execPath, "-e", "setTimeout(() => {}, 60_000)"]));
        const running = await waitForPod(admin, ns, "runs", (p) => p.status?.phase === "Running");
        expect(running.status?.containerStatuses?.[0]?.state?.running?.startedAt).toBeTruthy();
        expect(player.running()).toContain("runs");
      });

      it("kills the process when its Pod is deleted", async () => {
        await createPod(pod("deleted", [process.execPath, "-e", "setTimeout(() => {}, 60_000)"]));
        await waitForPod(admin, ns, "deleted", (p) => p.status?.phase === "Running");
        const del = await apiRequest(admin, "DELETE", `/api/v1/namespaces/${ns}/pods/deleted`);
        expect(del.status).toBe(200);
        const deadline = Date.now() + 15_000;
        while (player.running().includes("deleted")) {
          if (Date.now() > deadline) throw new Error("the process of the deleted pod is still running");
          await new Promise((r) => setTimeout(r, 50));
        }
        expect((await apiRequest(admin, "GET", `/api/v1/namespaces/${ns}/pods/deleted`)).status).toBe(404);
      });

      it("enforces activeDeadlineSeconds: the process is killed and the Pod fails with DeadlineExceeded", async () => {
        await createPod(
          pod("slow", [process.execPath, "-e", "console.log('started'); setTimeout(() => {}, 60_000)"], {
            activeDeadlineSeconds: 1,
          }),
        );
        const done = await waitForPod(admin, ns, "slow", terminal);
        expect(done.status?.phase).toBe("Failed");
        expect(done.status?.reason).toBe("DeadlineExceeded");
        expect(terminated(done)).toMatchObject({
          exitCode: 137,
          reason: "DeadlineExceeded",
          message: "started",
        });
      });

      it("merges the Pod's env over the player's and maps a `docverify` command to the local one", async () => {
        await createPod(
          pod(
            "env",
            [
              process.execPath,
              "-e",
              "console.log(JSON.stringify([process.env.DOCVERIFY_FROM_PLAYER, process.env.DOCVERIFY_OVERRIDDEN, process.env.HOSTNAME]))",
            ],
            {},
            [{ name: "DOCVERIFY_OVERRIDDEN", value: "pod" }],
          ),
        );
        const envDone = await waitForPod(admin, ns, "env", terminal);
        expect(terminated(envDone)?.message).toBe(JSON.stringify(["player", "pod", "env"]));

        await createPod(pod("mapped", ["docverify", "prepare", "--detection", "d1"]));
        const mapped = await waitForPod(admin, ns, "mapped", terminal);
        expect(mapped.status?.phase).toBe("Succeeded");
        expect(terminated(mapped)?.message).toBe(JSON.stringify(["prepare", "--detection", "d1"]));
      });

      it("fails a Pod whose command cannot start, with a message saying why", async () => {
        await createPod(pod("missing", ["/nonexistent/docverify-binary"]));
        const done = await waitForPod(admin, ns, "missing", terminal);
        expect(done.status?.phase).toBe("Failed");
        expect(terminated(done)).toMatchObject({ exitCode: 128, reason: "StartError" });
        expect(terminated(done)?.message).toContain("ENOENT");
      });
    });

    describe.skipIf(!tools.ok)(tools.ok ? "kubectl" : `kubectl: SKIPPED — ${tools.reason}`, () => {
      it("talks to the cluster through a generated kubeconfig and sees RBAC per identity", async () => {
        const kubectl = path.join(testClusterBinDir(), "kubectl");
        const adminCfg = await cluster.kubeconfigPath("admin");
        const ns = await run(kubectl, ["--kubeconfig", adminCfg, "get", "namespaces", "-o", "name"]);
        expect(ns.stdout.split("\n")).toContain("namespace/kube-system");
        const apiCfg = await cluster.kubeconfigPath("api", "default");
        const canI = await run(kubectl, ["--kubeconfig", apiCfg, "auth", "can-i", "list", "pods"]).catch(
          (err: { stdout?: string }) => ({ stdout: err.stdout ?? "" }),
        );
        expect(canI.stdout.trim()).toBe("no");
      });
    });
  },
);
