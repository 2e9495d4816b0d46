import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STEP_NAMES } from "../../core/detection.js";
import {
  kubeToolsAvailable,
  startTestCluster,
  type TestCluster,
  testClusterAvailable,
} from "../cluster/test-cluster.js";
import {
  CHART_DIR,
  helmBin,
  helmEnv,
  type K8sObject,
  kubectlBin,
  parseManifests,
  REPO_ROOT,
  renderText,
  run,
  scenarioFiles,
  scenarioName,
} from "./helm.js";
import { stepPods } from "./step-pods.js";

/**
 * The rendered chart against a real kube-apiserver (e2e/cluster): a server-side dry-run apply of every
 * object of every scenario validates them against the Kubernetes schemas and admission (PodSecurity
 * `restricted` enforced on the namespaces); a real `helm install` / `upgrade` / `uninstall` proves the
 * generated Secrets are kept across upgrades and the CRDs survive an uninstall.
 */

const cluster = testClusterAvailable();
const tools = kubeToolsAvailable();
const ready = cluster.ok && tools.ok;
const reason = cluster.ok ? tools.reason : cluster.reason;

const CRD_NAMES = ["detections.docverify.io", "detectionjobs.docverify.io", "detectionpolicies.docverify.io"];

describe.skipIf(!ready)(
  ready ? "helm chart on a kube-apiserver" : `helm chart on a kube-apiserver: SKIPPED — ${reason}`,
  () => {
    let tc: TestCluster;
    let kubeconfig: string;
    let tmp: string;
    let env: Record<string, string>;

    const kubectl = (args: string[], input?: string) =>
      run(kubectlBin(), ["--kubeconfig", kubeconfig, ...args], { input });
    const helm = (args: string[]) => run(helmBin(), ["--kubeconfig", kubeconfig, ...args], { env });

    /** A namespace where PodSecurity `restricted` is enforced (and warned about). */
    async function restrictedNamespace(name: string): Promise<void> {
      const ns = {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name,
          labels: {
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "latest",
            "pod-security.kubernetes.io/warn": "restricted",
            "pod-security.kubernetes.io/warn-version": "latest",
          },
        },
      };
      const r = await kubectl(["apply", "-f", "-"], JSON.stringify(ns));
      expect(r.code, r.stderr).toBe(0);
    }

    async function secretData(ns: string, name: string): Promise<Record<string, string>> {
      const r = await kubectl(["get", "secret", name, "-n", ns, "-o", "json"]);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout).data;
    }

    beforeAll(async () => {
      tc = await startTestCluster();
      kubeconfig = await tc.kubeconfigPath("admin");
      tmp = await mkdtemp(path.join(os.tmpdir(), "docverify-chart-"));
      env = helmEnv(tmp);
      // The CRDs for real first, as a platform team would before the dry-runs.
      const crds = await kubectl(["apply", "-f", path.join(REPO_ROOT, "crds")]);
      expect(crds.code, crds.stderr).toBe(0);
      const established = await kubectl([
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        ...CRD_NAMES.map((n) => `crd/${n}`),
      ]);
      expect(established.code, established.stderr).toBe(0);
    });

    afterAll(async () => {
      await tc?.stop();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    });

    it.each(scenarioFiles().map((f) => [scenarioName(f), f]))(
      "accepts every object of ci/%s in a server-side dry-run, with no PodSecurity warning",
      async (name, file) => {
        const ns = `chart-${name}`;
        await restrictedNamespace(ns);
        const rendered = await renderText({ valuesFiles: [file], namespace: ns });
        // The test cluster has no Prometheus Operator and no KEDA: their ServiceMonitors and ScaledObjects
        // are checked in chart-monitoring.test.ts and chart-workers.test.ts instead.
        const documents = rendered
          .split(/^---\s*$/m)
          .filter((d) => !/^kind: (ServiceMonitor|ScaledObject)$/m.test(d))
          .join("---\n");
        const objects = parseManifests(documents);
        const manifest = path.join(tmp, `${name}.yaml`);
        await writeFile(manifest, documents);
        const r = await kubectl(["apply", "--dry-run=server", "-f", manifest, "-o", "name"]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr, "kubectl warnings (PodSecurity, deprecated APIs)").not.toMatch(/warning/i);
        // One line per object: nothing was skipped.
        expect(r.stdout.trim().split("\n")).toHaveLength(objects.length);
      },
    );

    it("installs, upgrades and uninstalls with helm; keeps generated secrets and the CRDs", async () => {
      const ns = "chart-helm";
      await restrictedNamespace(ns);
      const values = path.join(CHART_DIR, "ci/evaluation-values.yaml");
      const install = await helm([
        "install",
        "docverify",
        CHART_DIR,
        "-n",
        ns,
        "-f",
        values,
        "--take-ownership",
      ]);
      expect(install.code, install.stderr).toBe(0);
      expect(install.stdout).toContain("kubectl -n chart-helm get detections");

      const names = [
        "docverify-token-signing-key",
        "docverify-clients",
        "docverify-credentials",
        "docverify-redis-url",
      ];
      const before = Object.fromEntries(
        await Promise.all(names.map(async (n) => [n, await secretData(ns, n)])),
      );
      expect(Buffer.from(before["docverify-token-signing-key"]["signing-key"], "base64").length).toBe(64);
      const clients = JSON.parse(
        Buffer.from(before["docverify-clients"]["clients.json"], "base64").toString(),
      );
      expect(clients.clients[0]).toMatchObject({ client_id: "admin", scopes: ["DocumentVerification:*"] });
      const redisUrl = Buffer.from(before["docverify-redis-url"].REDIS_URL, "base64").toString();
      const redisPassword = Buffer.from(before["docverify-redis-url"].REDIS_PASSWORD, "base64").toString();
      expect(redisUrl).toBe(`redis://:${redisPassword}@docverify-redis:6379/0`);

      // The step Pods the operator would create pass PodSecurity `restricted` and the ServiceAccount admission.
      const objects = parseManifests((await helm(["get", "manifest", "docverify", "-n", ns])).stdout);
      const pods = stepPods(objects as K8sObject[], ns);
      for (const step of STEP_NAMES) {
        const r = await kubectl(
          ["create", "--dry-run=server", "-n", ns, "-f", "-", "-o", "name"],
          JSON.stringify(pods[step]),
        );
        expect(r.code, `${step} Pod: ${r.stderr}`).toBe(0);
        expect(r.stderr).not.toMatch(/warning/i);
      }

      // The chart's identities can do their work in their namespace and nothing else.
      const can = async (who: string, verb: string, resource: string, namespace = ns) =>
        (
          await kubectl([
            "auth",
            "can-i",
            verb,
            resource,
            "-n",
            namespace,
            `--as=system:serviceaccount:${ns}:${who}`,
          ])
        ).stdout.trim();
      // The chart's default step mode is warm workers: the operator has no Pod permission at all.
      expect(await can("docverify-operator", "create", "pods")).toBe("no");
      expect(await can("docverify-operator", "watch", "detections.docverify.io")).toBe("yes");
      expect(await can("docverify-operator", "update", "leases.coordination.k8s.io")).toBe("yes");
      expect(await can("docverify-operator", "create", "pods", "default")).toBe("no");
      expect(await can("docverify-operator", "get", "secrets")).toBe("no");
      expect(await can("docverify-api", "create", "detections.docverify.io")).toBe("yes");
      expect(await can("docverify-api", "create", "pods")).toBe("no");
      expect(await can("docverify-step", "get", "detections.docverify.io")).toBe("no");

      const upgrade = await helm([
        "upgrade",
        "docverify",
        CHART_DIR,
        "-n",
        ns,
        "-f",
        values,
        "--set",
        "api.replicas=3",
      ]);
      expect(upgrade.code, upgrade.stderr).toBe(0);
      for (const n of names) expect(await secretData(ns, n), `${n} after the upgrade`).toEqual(before[n]);
      const api = await kubectl([
        "get",
        "deployment",
        "docverify-api",
        "-n",
        ns,
        "-o",
        "jsonpath={.spec.replicas}",
      ]);
      expect(api.stdout).toBe("3");

      const uninstall = await helm(["uninstall", "docverify", "-n", ns]);
      expect(uninstall.code, uninstall.stderr).toBe(0);
      const gone = await kubectl(["get", "deployment", "docverify-api", "-n", ns]);
      expect(gone.code).not.toBe(0);
      for (const crd of CRD_NAMES) {
        const kept = await kubectl(["get", "crd", crd, "-o", "name"]);
        expect(kept.code, `${crd} is kept (crds.keep): ${kept.stderr}`).toBe(0);
      }
    });
  },
);
