import { createPrivateKey } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadConfig } from "../../core/config.js";
import { STEP_NAMES } from "../../core/detection.js";
import { kubeToolsAvailable } from "../cluster/test-cluster.js";
import {
  CHART_DIR,
  helmBin,
  type K8sObject,
  parseManifests,
  REPO_ROOT,
  render,
  renderText,
  run,
  scenarioFiles,
  scenarioName,
} from "./helm.js";
import {
  labelProblems,
  matches,
  podSecurityProblems,
  podTemplates,
  policiesSelecting,
  rbacGrants,
  referencedNames,
  schemaProblems,
} from "./manifest-checks.js";
import { stepPods } from "./step-pods.js";
import { keysMissingFromSchema, uncommentedKeys } from "./values-comments.js";

const tools = kubeToolsAvailable();
const NS = "docverify-chart";
const scenarios = scenarioFiles();
const schema = JSON.parse(readFileSync(path.join(CHART_DIR, "values.schema.json"), "utf8"));
const valuesYaml = readFileSync(path.join(CHART_DIR, "values.yaml"), "utf8");

/** Free-form Kubernetes objects the schema passes through unchanged. */
const PASS_THROUGH = new Set([
  "global",
  ...["api", "operator"].flatMap((c) =>
    ["nodeAffinity", "podAffinity", "podAntiAffinity"].map((a) => `${c}.affinity.${a}`),
  ),
]);

const crdFiles = () =>
  readdirSync(path.join(REPO_ROOT, "crds"))
    .filter((f) => f.endsWith(".yaml"))
    .sort();

/** The Kubernetes documents of a YAML stream, without comment-only documents and helm's `# Source` lines. */
const documentText = (text: string) =>
  text
    .replace(/^# Source: .*\n/gm, "")
    .split(/^---\s*$/m)
    .map((d) => d.trim())
    .filter((d) => d && !d.split("\n").every((l) => l.startsWith("#")))
    .join("\n---\n");

async function helmFails(args: string[]): Promise<string> {
  const r = await run(helmBin(), args);
  expect(r.code, `helm ${args.join(" ")} should fail`).not.toBe(0);
  return r.stderr;
}

describe.skipIf(!tools.ok)(tools.ok ? "helm chart" : `helm chart: SKIPPED — ${tools.reason}`, () => {
  describe("chart files", () => {
    it("ships byte-identical copies of every CRD in crds/", () => {
      const copies = readdirSync(path.join(CHART_DIR, "files/crds")).sort();
      expect(copies).toEqual(crdFiles());
      for (const f of crdFiles()) {
        const original = readFileSync(path.join(REPO_ROOT, "crds", f));
        const copy = readFileSync(path.join(CHART_DIR, "files/crds", f));
        expect(
          copy.equals(original),
          `charts/docverify/files/crds/${f} differs from crds/${f}; copy it: cp crds/*.yaml charts/docverify/files/crds/`,
        ).toBe(true);
      }
    });

    it("has appVersion equal to package.json's version", () => {
      const chart = parseYaml(readFileSync(path.join(CHART_DIR, "Chart.yaml"), "utf8"));
      const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
      expect(chart.apiVersion).toBe("v2");
      expect(chart.appVersion).toBe(pkg.version);
    });

    it("comments every key of values.yaml and defines each in the schema", () => {
      expect(uncommentedKeys(valuesYaml, schema)).toEqual([]);
      expect(keysMissingFromSchema(parseYaml(valuesYaml), schema)).toEqual([]);
    });

    it("closes every object of values.schema.json with additionalProperties: false", () => {
      expect(schemaProblems(schema, PASS_THROUGH)).toEqual([]);
    });
  });

  describe("helm lint", () => {
    it("passes with the default values (missing external services are warnings)", async () => {
      const r = await run(helmBin(), ["lint", CHART_DIR]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    });

    it.each(scenarios.map((f) => [scenarioName(f), f]))("passes --strict for ci/%s", async (_n, file) => {
      const r = await run(helmBin(), ["lint", "--strict", CHART_DIR, "--values", file]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    });
  });

  describe("values the chart refuses", () => {
    it("stops an install with no Redis or S3 configured and says what to set", async () => {
      const err = await helmFails(["template", "x", CHART_DIR]);
      expect(err).toContain("s3.endpoint is required");
      expect(err).toContain("evaluation=true");
    });

    it("rejects a misspelt key anywhere (additionalProperties: false)", async () => {
      const base = ["template", "x", CHART_DIR, "--set", "evaluation=true"];
      expect(await helmFails([...base, "--set", "api.replicaz=3"])).toMatch(/replicaz/);
      expect(await helmFails([...base, "--set", "evalution=true"])).toMatch(/evalution/);
      expect(await helmFails([...base, "--set", "steps.stepResources.chek.limits.cpu=1"])).toMatch(/chek/);
      expect(await helmFails([...base, "--set", "networkPolicy.prepare.exceptIpv4[0]=10.0.0.0/8"])).toMatch(
        /exceptIpv4/,
      );
    });

    it("rejects values of the wrong type or outside the allowed set", async () => {
      const base = ["template", "x", CHART_DIR, "--set", "evaluation=true"];
      expect(await helmFails([...base, "--set-string", "api.replicas=two"])).toMatch(/replicas/);
      expect(await helmFails([...base, "--set", "agent.engine=gpt"])).toMatch(/engine/);
      // The operator parses step resources as JSON strings (bin/cluster-config.ts): a bare number would stop it.
      expect(await helmFails([...base, "--set", "steps.resources.limits.cpu=1"])).toMatch(/want string/);
      expect(await helmFails([...base, "--set", "containerSecurityContext.privileged=true"])).toMatch(
        /privileged/,
      );
      expect(await helmFails([...base, "--set", "podSecurityContext.runAsNonRoot=false"])).toMatch(
        /runAsNonRoot/,
      );
    });

    it("refuses the llm engine without a URL, a model, or an egress rule for its endpoint", async () => {
      const base = ["template", "x", CHART_DIR, "--set", "evaluation=true", "--set", "agent.engine=llm"];
      const egress = ["--set", "agent.llm.egress.cidrs[0]=203.0.113.7/32"];
      expect(await helmFails([...base, ...egress])).toContain("agent.llm.url is required");
      const url = ["--set", "agent.llm.url=http://vllm:8000/v1"];
      expect(await helmFails([...base, ...egress, ...url])).toContain("agent.llm.model is required");
      expect(await helmFails([...base, ...url, "--set", "agent.llm.model=m"])).toContain(
        "agent.llm.egress needs",
      );
      const ok = await run(helmBin(), [...base, ...egress, ...url, "--set", "agent.llm.model=m"]);
      expect(ok.code, ok.stderr).toBe(0);
    });
  });

  describe.each(scenarios.map((f) => [scenarioName(f), f]))("ci/%s", (_name, file) => {
    let objects: K8sObject[] = [];
    const get = async () => {
      if (objects.length === 0) objects = await render({ valuesFiles: [file], namespace: NS });
      return objects;
    };
    const values = parseYaml(readFileSync(file, "utf8")) ?? {};

    it("labels every object with the recommended labels (CRDs are the crds/ files as they are)", async () => {
      const problems = (await get())
        .filter((o) => o.kind !== "CustomResourceDefinition")
        .flatMap(labelProblems);
      expect(problems).toEqual([]);
      for (const o of await get()) expect(o.metadata.name.length, o.metadata.name).toBeLessThanOrEqual(63);
    });

    it("runs every Pod restricted: non-root, seccomp, no escalation, no capabilities, read-only root", async () => {
      const templates = podTemplates(await get());
      expect(templates.length).toBeGreaterThanOrEqual(2);
      expect(templates.flatMap(podSecurityProblems)).toEqual([]);
      for (const t of templates) {
        const component = t.labels["app.kubernetes.io/component"];
        // Only the api and the operator call the Kubernetes API.
        expect(t.spec.automountServiceAccountToken, t.owner).toBe(
          component === "api" || component === "operator",
        );
      }
    });

    it("creates step Pods that are restricted, tokenless and see no api/operator secret", async () => {
      const pods = stepPods(await get(), NS);
      for (const step of STEP_NAMES) {
        const pod = pods[step];
        const owner = `step Pod ${step}`;
        expect(podSecurityProblems({ owner, labels: pod.metadata?.labels ?? {}, spec: pod.spec })).toEqual(
          [],
        );
        expect(pod.spec?.automountServiceAccountToken).toBe(false);
        const env = pod.spec?.containers[0]?.env ?? [];
        const names = env.map((e) => e.name);
        for (const secret of [
          "DOCVERIFY_TOKEN_SIGNING_KEY_FILE",
          "DOCVERIFY_ATTESTATION_KEY_FILE",
          "DOCVERIFY_CLIENTS_FILE",
          "REDIS_URL",
          "DOCVERIFY_STEP_POD",
        ])
          expect(names, owner).not.toContain(secret);
        // Storage keys reach the steps by secretKeyRef, never as plain values.
        const s3Secret = env.find((e) => e.name === "S3_SECRET_KEY");
        expect(s3Secret?.valueFrom?.secretKeyRef?.key).toBe("S3_SECRET_KEY");
        expect(names).toContain("S3_ENDPOINT");
      }
      const sa = pods.check.spec?.serviceAccountName;
      const rendered = (await get()).filter((o) => o.kind === "ServiceAccount").map((o) => o.metadata.name);
      expect(rendered).toContain(sa);
    });

    it("isolates every step Pod: check only DNS + storage, prepare adds the public internet, agent the LLM", async () => {
      const all = await get();
      const pods = stepPods(all, NS);
      const egressOf = (labels: Record<string, string>) =>
        policiesSelecting(all, labels).flatMap((p) =>
          p.spec.policyTypes.includes("Egress") ? p.spec.egress : [],
        );
      for (const step of STEP_NAMES) {
        const labels = pods[step].metadata?.labels ?? {};
        const selecting = policiesSelecting(all, labels);
        expect(selecting.length, `policies selecting ${step} Pods`).toBeGreaterThan(0);
        expect(
          selecting.some((p) => p.spec.policyTypes.includes("Ingress") && p.spec.ingress.length === 0),
        ).toBe(true);
      }
      const check = egressOf(pods.check.metadata?.labels ?? {});
      expect(check).toHaveLength(2);
      expect(check[0].ports.map((p: { port: number }) => p.port)).toContain(53);

      const prepare = egressOf(pods.prepare.metadata?.labels ?? {});
      const internet = prepare.flatMap((r: { to?: { ipBlock?: { cidr: string; except?: string[] } }[] }) =>
        (r.to ?? []).flatMap((t) => (t.ipBlock ? [t.ipBlock] : [])),
      );
      const v4 = internet.find((b) => b.cidr === "0.0.0.0/0");
      expect(v4?.except).toEqual(
        expect.arrayContaining([
          "10.0.0.0/8",
          "172.16.0.0/12",
          "192.168.0.0/16",
          "169.254.0.0/16",
          "127.0.0.0/8",
        ]),
      );
      expect(internet.find((b) => b.cidr === "::/0")?.except).toEqual(
        expect.arrayContaining(["fc00::/7", "fe80::/10", "::/96", "64:ff9b::/96", "2001::/32", "2002::/16"]),
      );
      // Only the allowed source ports (default 80 and 443).
      const internetRule = prepare.find((r: { to?: { ipBlock?: unknown }[] }) =>
        (r.to ?? []).some((t) => t.ipBlock),
      );
      expect(internetRule.ports).toEqual([
        { protocol: "TCP", port: 80 },
        { protocol: "TCP", port: 443 },
      ]);

      const agent = egressOf(pods.agent.metadata?.labels ?? {});
      const llm = values.agent?.engine === "llm";
      expect(agent.length).toBe(llm ? 3 : 2);
    });

    it("limits the api and the operator to what they call", async () => {
      const all = await get();
      for (const t of podTemplates(all)) {
        const policies = policiesSelecting(all, t.labels);
        expect(policies.length, `NetworkPolicies selecting ${t.owner}`).toBeGreaterThan(0);
        const types = new Set(policies.flatMap((p) => p.spec.policyTypes));
        expect([...types].sort(), t.owner).toEqual(["Egress", "Ingress"]);
        const component = t.labels["app.kubernetes.io/component"];
        if (component === "api" || component === "operator") {
          // DNS, Kubernetes API, Redis, object store: four egress rules, no more; the operator, the one
          // webhook sender, has a fifth: public addresses on config.allowedSourcePorts.
          const egress = policies.flatMap((p) => p.spec.egress);
          expect(egress, t.owner).toHaveLength(component === "operator" ? 5 : 4);
          if (component === "operator") {
            const webhooks = egress[4];
            expect(webhooks.to[0].ipBlock.except, "private ranges closed").toContain("10.0.0.0/8");
            expect(webhooks.ports.map((p: { port: number }) => p.port).sort()).toEqual([443, 80]);
          }
        } else if (component !== "step") {
          expect(
            policies.flatMap((p) => p.spec.egress ?? []),
            t.owner,
          ).toHaveLength(0);
        }
        // The step workers' egress (the step Pods' plus Redis) is checked in chart-workers.test.ts.
      }
    });

    it("refers only to Secrets and ConfigMaps it renders or that the values name", async () => {
      const all = await get();
      const existing = [
        values.clients?.existingSecret,
        values.tokenSigningKey?.existingSecret,
        values.attestationKey?.existingSecret,
        values.attestationKey?.previousKeysSecret,
        values.credentials?.existingSecret,
        values.redis?.existingSecret,
      ].filter(Boolean);
      const secrets = new Set([
        ...all.filter((o) => o.kind === "Secret").map((o) => o.metadata.name),
        ...existing,
      ]);
      const configMaps = new Set(all.filter((o) => o.kind === "ConfigMap").map((o) => o.metadata.name));
      for (const t of podTemplates(all)) {
        const refs = referencedNames(t.spec);
        for (const s of refs.secrets) expect(secrets.has(s), `${t.owner} refers to Secret ${s}`).toBe(true);
        for (const c of refs.configMaps)
          expect(configMaps.has(c), `${t.owner} refers to ConfigMap ${c}`).toBe(true);
      }
      const stepSecret = stepPods(all, NS).agent.spec?.containers[0]?.env?.find(
        (e) => e.valueFrom?.secretKeyRef,
      );
      expect(secrets.has(stepSecret?.valueFrom?.secretKeyRef?.name ?? "")).toBe(true);
    });

    it("points every Service, PDB and HPA at a rendered workload", async () => {
      const all = await get();
      const templates = podTemplates(all);
      for (const o of all.filter((x) => x.kind === "Service" || x.kind === "PodDisruptionBudget")) {
        const selector = o.kind === "Service" ? o.spec.selector : o.spec.selector.matchLabels;
        expect(
          templates.filter((t) => matches(selector, t.labels)).length,
          `${o.kind}/${o.metadata.name}`,
        ).toBe(1);
      }
      for (const hpa of all.filter((x) => x.kind === "HorizontalPodAutoscaler")) {
        const target = hpa.spec.scaleTargetRef;
        expect(all.some((o) => o.kind === target.kind && o.metadata.name === target.name)).toBe(true);
        const deployment = all.find((o) => o.kind === "Deployment" && o.metadata.name === target.name);
        expect(deployment?.spec.replicas, "replicas are left to the HPA").toBeUndefined();
      }
      for (const ing of all.filter((x) => x.kind === "Ingress")) {
        for (const rule of ing.spec.rules)
          for (const p of rule.http.paths)
            expect(all.some((o) => o.kind === "Service" && o.metadata.name === p.backend.service.name)).toBe(
              true,
            );
      }
    });

    it("runs the operator as two replicas electing a leader on a Lease", async () => {
      const all = await get();
      const operator = all.find(
        (o) => o.kind === "Deployment" && o.metadata.labels?.["app.kubernetes.io/component"] === "operator",
      );
      expect(operator?.spec.replicas).toBe(2);
      expect(operator?.spec.template.spec.containers[0].args).toEqual(["operator"]);
      const config = all.find((o) => o.kind === "ConfigMap");
      expect(config?.data.DOCVERIFY_LEASE_NAME).toMatch(/operator$/);
      const role = all.find((o) => o.kind === "Role" && o.metadata.name === operator?.metadata.name);
      expect(rbacGrants(role as K8sObject)).toEqual(
        expect.arrayContaining(["coordination.k8s.io/leases get", "coordination.k8s.io/leases update"]),
      );
    });
  });

  describe("configuration", () => {
    /** Settings of core/config.ts the chart leaves unset on purpose, and why. */
    const NOT_SET = {
      DOCVERIFY_DATA_DIR: "standalone only (the cluster stores in S3 and Kubernetes)",
      DOCVERIFY_CLIENTS_FILE: "set in the api Deployment (a mounted Secret), not the shared ConfigMap",
      DOCVERIFY_TOKEN_SIGNING_KEY: "given as a file (DOCVERIFY_TOKEN_SIGNING_KEY_FILE)",
      DOCVERIFY_ATTESTATION_PREVIOUS_KEYS:
        "set in the api Deployment only when attestationKey.previousKeysSecret names a Secret",
      DOCVERIFY_WORKERS: "standalone warm workers only",
      DOCVERIFY_POLICIES:
        "standalone policy files; the cluster's policies are DetectionPolicy resources (values.policies)",
      DOCVERIFY_POLICIES_RELOAD_SECONDS: "standalone policy files only",
      DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES:
        "an exception for one internal host (config.extraEnv); the NetworkPolicies' except ranges would block it anyway",
      DOCVERIFY_STEP_MEMORY_MB: "standalone only: a step Pod's cap is its memory limit (steps.resources)",
      DOCVERIFY_TRUST_ANCHORS: "a file path; step Pods cannot mount files yet (see the chart README)",
      DOCVERIFY_LLM_API_KEY: "a Secret (secretKeyRef), not the ConfigMap",
      S3_ACCESS_KEY: "a Secret (secretKeyRef)",
      S3_SECRET_KEY: "a Secret (secretKeyRef)",
      REDIS_URL: "a Secret (secretKeyRef)",
      DOCVERIFY_MEMORY_KEY_FILE:
        "the chart gives DOCVERIFY_MEMORY_KEY from its Secret (secretKeyRef) instead",
    } as const;

    it("sets every variable of core/config.ts the cluster runtime reads", async () => {
      const source = readFileSync(path.join(REPO_ROOT, "core/config.ts"), "utf8");
      const block = source.slice(
        source.indexOf("const EnvSchema"),
        source.indexOf("});", source.indexOf("const EnvSchema")),
      );
      const names = [...block.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1] as string);
      expect(names.length).toBeGreaterThan(30);
      const objects = await render({
        set: [
          "evaluation=true",
          "agent.engine=llm",
          "agent.llm.url=http://l:8000/v1",
          "agent.llm.model=m",
          "agent.llm.egress.cidrs[0]=10.1.2.3/32",
          "s3.publicEndpoint=https://uploads.example.com",
        ],
      });
      const config = objects.find((o) => o.kind === "ConfigMap")?.data ?? {};
      const envNames = podTemplates(objects).flatMap((t) =>
        t.spec.containers.flatMap((c: { env?: { name: string }[] }) => (c.env ?? []).map((e) => e.name)),
      );
      const set = new Set([...Object.keys(config), ...envNames]);
      const unset = names.filter((n) => !set.has(n) && !(n in NOT_SET));
      expect(unset, "add them to the ConfigMap (and values.yaml) or to NOT_SET with a reason").toEqual([]);
    });
  });

  describe("CRDs", () => {
    it("renders each CRD as its crds/ file, plus the keep annotation when crds.keep", async () => {
      for (const f of crdFiles()) {
        const template = `templates/crds/${f.replace(/^docverify\.io_/, "").replace(/\.yaml$/, "")}-customresourcedefinition.yaml`;
        const original = documentText(readFileSync(path.join(REPO_ROOT, "crds", f), "utf8"));
        const plain = await renderText({
          set: ["evaluation=true", "crds.keep=false"],
          showOnly: template,
        });
        expect(documentText(plain), `${template} with crds.keep=false`).toBe(original);

        const kept = parseManifests(await renderText({ set: ["evaluation=true"], showOnly: template }));
        const expected = parseManifests(original);
        expect(kept).toHaveLength(1);
        expect(kept[0]?.metadata.annotations).toEqual({ "helm.sh/resource-policy": "keep" });
        const { annotations: _a, ...meta } = kept[0]?.metadata ?? { name: "" };
        expect({ ...kept[0], metadata: meta }).toEqual(expected[0]);
      }
    });

    it("renders one DetectionPolicy per entry of policies, with its spec", async () => {
      const objects = await render({
        set: [
          "evaluation=true",
          "policies.acme-lending.version=3",
          "policies.acme-lending.checksOff[0]=fonts.consistency",
        ],
      });
      const policies = objects.filter((o) => o.kind === "DetectionPolicy");
      expect(policies).toHaveLength(1);
      expect(policies[0]).toMatchObject({
        apiVersion: "docverify.io/v1alpha1",
        metadata: { name: "acme-lending" },
        spec: { version: 3, checksOff: ["fonts.consistency"] },
      });
      expect(
        (await render({ set: ["evaluation=true"] })).filter((o) => o.kind === "DetectionPolicy"),
      ).toEqual([]);
    });

    it("renders no CRD when crds.enabled=false", async () => {
      const objects = await render({ set: ["evaluation=true", "crds.enabled=false"] });
      expect(objects.filter((o) => o.kind === "CustomResourceDefinition")).toEqual([]);
      expect(objects.length).toBeGreaterThan(10);
    });
  });

  describe("settings that change policies", () => {
    it("opens private ranges for prepare Pods only together with allowPrivateSources", async () => {
      const objects = await render({ set: ["evaluation=true", "config.allowPrivateSources=true"] });
      const prepare = objects.find(
        (o) => o.kind === "NetworkPolicy" && o.metadata.name.endsWith("step-prepare"),
      );
      for (const to of prepare?.spec.egress[0].to ?? []) expect(to.ipBlock.except).toBeUndefined();
      const config = objects.find((o) => o.kind === "ConfigMap");
      expect(config?.data.DOCVERIFY_ALLOW_PRIVATE_SOURCES).toBe("true");
    });

    it("passes config.allowedSourcePorts to the guard and the prepare Pods' NetworkPolicy", async () => {
      const objects = await render({
        set: ["evaluation=true", "config.allowedSourcePorts={80,443,8443,8000-8099}"],
      });
      const config = objects.find((o) => o.kind === "ConfigMap");
      expect(config?.data.DOCVERIFY_ALLOWED_SOURCE_PORTS).toBe("80,443,8443,8000-8099");
      const prepare = objects.find(
        (o) => o.kind === "NetworkPolicy" && o.metadata.name.endsWith("step-prepare"),
      );
      expect(prepare?.spec.egress[0].ports).toEqual([
        { protocol: "TCP", port: 80 },
        { protocol: "TCP", port: 443 },
        { protocol: "TCP", port: 8443 },
        { protocol: "TCP", port: 8000, endPort: 8099 },
      ]);
      const base = ["template", "x", CHART_DIR, "--set", "evaluation=true"];
      expect(await helmFails([...base, "--set", "config.allowedSourcePorts={70000}"])).toMatch(
        /allowedSourcePorts/,
      );
      expect(await helmFails([...base, "--set", "config.allowedSourcePorts={http}"])).toMatch(
        /allowedSourcePorts/,
      );
    });

    it("mounts an attestation key into the api only: a generated Ed25519 key, or the named Secrets", async () => {
      const apiOf = (objects: K8sObject[]) =>
        podTemplates(objects).find((t) => t.spec.containers[0]?.args?.[0] === "api");
      const generated = await render({ set: ["evaluation=true"] });
      const secret = generated.find((o) => o.kind === "Secret" && /attestation-key$/.test(o.metadata.name));
      const pem = Buffer.from(secret?.data?.["attestation-key.pem"] ?? "", "base64").toString("utf8");
      expect(createPrivateKey(pem).asymmetricKeyType).toBe("ed25519");
      const api = apiOf(generated);
      const env = api?.spec.containers[0].env as { name: string; value?: string }[];
      expect(env.find((e) => e.name === "DOCVERIFY_ATTESTATION_KEY_FILE")?.value).toBe(
        "/etc/docverify/attestation/key",
      );
      expect(env.some((e) => e.name === "DOCVERIFY_ATTESTATION_PREVIOUS_KEYS")).toBe(false);
      expect(JSON.stringify(api?.spec.volumes)).toContain(secret?.metadata.name);

      const named = await render({
        set: [
          "evaluation=true",
          "attestationKey.existingSecret=my-key",
          "attestationKey.previousKeysSecret=old-keys",
        ],
      });
      expect(named.some((o) => o.kind === "Secret" && /attestation-key$/.test(o.metadata.name))).toBe(false);
      const namedApi = apiOf(named);
      const namedEnv = namedApi?.spec.containers[0].env as { name: string; value?: string }[];
      expect(namedEnv.find((e) => e.name === "DOCVERIFY_ATTESTATION_PREVIOUS_KEYS")?.value).toBe(
        "/etc/docverify/attestation-previous",
      );
      const volumes = JSON.stringify(namedApi?.spec.volumes);
      expect(volumes).toContain('"secretName":"my-key"');
      expect(volumes).toContain('"key":"attestation-key.jwk.json"');
      expect(volumes).toContain('"secretName":"old-keys"');
    });

    it("passes the token throttling settings and the trusted proxy hops to the api", async () => {
      const objects = await render({
        set: [
          "evaluation=true",
          "config.tokenThrottle.maxFailuresPerAddress=5",
          "config.tokenThrottle.verifyConcurrency=4",
          "config.trustedProxyHops=1",
        ],
      });
      const config = objects.find((o) => o.kind === "ConfigMap")?.data ?? {};
      expect(config).toMatchObject({
        DOCVERIFY_TOKEN_FAILURE_WINDOW_SECONDS: "900",
        DOCVERIFY_TOKEN_MAX_FAILURES_PER_ADDRESS: "5",
        DOCVERIFY_TOKEN_MAX_FAILURES_PER_CLIENT: "20",
        DOCVERIFY_TOKEN_VERIFY_CONCURRENCY: "4",
        DOCVERIFY_TRUSTED_PROXY_HOPS: "1",
      });
    });

    it("passes the document budget to the steps and caps the check step's memory as standalone does", async () => {
      const objects = await render({
        set: [
          "evaluation=true",
          "config.documentBudget.maxPages=50",
          "config.documentBudget.maxOperators=900000",
        ],
      });
      const config = objects.find((o) => o.kind === "ConfigMap")?.data ?? {};
      expect(config).toMatchObject({
        DOCVERIFY_MAX_PAGES: "50",
        DOCVERIFY_MAX_DECODED_MB: "256",
        DOCVERIFY_MAX_OPERATORS: "900000",
        DOCVERIFY_MAX_IMAGE_MEGAPIXELS: "64",
      });
      const stepPod = JSON.parse(config.DOCVERIFY_STEP_POD ?? "{}");
      // The standalone default of DOCVERIFY_STEP_MEMORY_MB (core/config.ts), in the same unit.
      expect(stepPod.stepResources.check.limits.memory).toBe(`${loadConfig({}).stepMemoryMb}Mi`);
    });

    it("keeps every name within 63 characters for a long release name", async () => {
      const release = "a-very-long-release-name-for-a-platform-team-that-likes-long-names";
      const objects = await render({ set: ["evaluation=true"], release: release.slice(0, 53) });
      for (const o of objects) expect(o.metadata.name.length, o.metadata.name).toBeLessThanOrEqual(63);
      const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
      expect(new Set(names).size).toBe(names.length);
    });

    it("renders no NetworkPolicy when networkPolicy.enabled=false", async () => {
      const objects = await render({ set: ["evaluation=true", "networkPolicy.enabled=false"] });
      expect(objects.filter((o) => o.kind === "NetworkPolicy")).toEqual([]);
    });
  });

  describe("RBAC", () => {
    const rbacDir = path.join(REPO_ROOT, "deploy/rbac");
    const plainRoles = () =>
      readdirSync(rbacDir)
        .filter((f) => /\.ya?ml$/.test(f))
        .flatMap((f) => parseManifests(readFileSync(path.join(rbacDir, f), "utf8")))
        .filter((o) => o.kind === "Role" || o.kind === "ClusterRole");
    // deploy/rbac/operator-step-pods.yaml is what a Pod per step attempt adds (stepMode pods).
    const STEP_PODS_ROLE = "docverify-operator-step-pods";
    for (const stepMode of ["workers", "pods"] as const) {
      it(`grants the chart's Roles exactly the rules of deploy/rbac/ (stepMode ${stepMode})`, async () => {
        expect(
          existsSync(rbacDir),
          "deploy/rbac/ holds the Roles the cluster e2e proves; the chart's Roles must equal them",
        ).toBe(true);
        const plain = plainRoles().filter((o) => stepMode === "pods" || o.metadata.name !== STEP_PODS_ROLE);
        expect(
          plain.filter((o) => o.kind === "ClusterRole"),
          "nothing cluster-wide",
        ).toEqual([]);
        const chart = (await render({ set: ["evaluation=true", `stepMode=${stepMode}`] })).filter(
          (o) => o.kind === "Role" || o.kind === "ClusterRole",
        );
        expect(chart.filter((o) => o.kind === "ClusterRole")).toEqual([]);
        for (const component of ["api", "operator"]) {
          const mine = chart.filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === component);
          expect(mine, `one Role for the ${component} in the chart`).toHaveLength(1);
          const theirs = plain.filter(
            (o) =>
              o.metadata.labels?.["app.kubernetes.io/component"] === component ||
              o.metadata.name.endsWith(`-${component}`) ||
              o.metadata.name === component,
          );
          expect(theirs.length, `the ${component}'s Roles in deploy/rbac/`).toBeGreaterThanOrEqual(1);
          expect(rbacGrants(mine[0] as K8sObject).sort(), `the ${component} Role`).toEqual(
            theirs.flatMap((r) => rbacGrants(r as K8sObject)).sort(),
          );
        }
        const podGrants = rbacGrants(
          chart.find((o) => o.metadata.name.endsWith("-operator")) as K8sObject,
        ).filter((g) => g.startsWith("core/pods ") || g.includes("/finalizers "));
        if (stepMode === "workers")
          expect(podGrants, "warm workers: the operator never touches a Pod").toEqual([]);
        else expect(podGrants.length).toBeGreaterThan(0);
      });
    }
  });
});
