/**
 * The chart's warm step workers (stepMode: workers, the default) and their autoscaling hooks: a Deployment
 * per step kind running `docverify step-worker --step <kind>` with the step Pods' restrictions, the step
 * NetworkPolicies holding for the workers of their kind only (prepare alone reaches the internet), Redis
 * reachable by the workers, the KEDA ScaledObjects; and stepMode: pods rendering none of it.
 */
import { describe, expect, it } from "vitest";
import { STEP_NAMES } from "../../core/detection.js";
import { kubeToolsAvailable } from "../cluster/test-cluster.js";
import { CHART_DIR, helmBin, type K8sObject, render, run } from "./helm.js";
import { podSecurityProblems, policiesSelecting, selects } from "./manifest-checks.js";
import { stepPods } from "./step-pods.js";

const tools = kubeToolsAvailable();
const NS = "docverify-chart";

const workersOf = (objects: K8sObject[]) =>
  Object.fromEntries(
    STEP_NAMES.map((step) => [
      step,
      objects.find(
        (o) => o.kind === "Deployment" && o.metadata.labels?.["docverify.io/step-worker"] === step,
      ),
    ]),
  ) as Record<(typeof STEP_NAMES)[number], K8sObject | undefined>;

type Rule = { to?: { ipBlock?: { cidr: string }; podSelector?: { matchLabels?: Record<string, string> } }[] };
const egressOf = (objects: K8sObject[], labels: Record<string, string>): Rule[] =>
  policiesSelecting(objects, labels).flatMap((p) =>
    p.spec.policyTypes.includes("Egress") ? p.spec.egress : [],
  );
const internetIn = (rules: Rule[]) =>
  rules.some((r) => (r.to ?? []).some((t) => t.ipBlock?.cidr === "0.0.0.0/0" || t.ipBlock?.cidr === "::/0"));

describe.skipIf(!tools.ok)(
  tools.ok ? "helm chart: step workers" : `helm chart: step workers: SKIPPED — ${tools.reason}`,
  () => {
    it("runs a restricted, tokenless step-worker Deployment per kind by default, with its memory cap and Redis", async () => {
      const objects = await render({ set: ["evaluation=true"], namespace: NS });
      const config = objects.find((o) => o.kind === "ConfigMap")?.data ?? {};
      expect(config.DOCVERIFY_STEP_MODE).toBe("workers");
      const workers = workersOf(objects);
      const stepSa = stepPods(objects, NS).check.spec?.serviceAccountName;
      for (const step of STEP_NAMES) {
        const d = workers[step];
        expect(d, `a ${step} worker Deployment`).toBeDefined();
        const spec = d!.spec.template.spec;
        expect(spec.containers[0].args).toEqual(["step-worker", "--step", step]);
        expect(spec.automountServiceAccountToken).toBe(false);
        expect(spec.serviceAccountName).toBe(stepSa);
        expect(
          podSecurityProblems({ owner: d!.metadata.name, labels: d!.spec.template.metadata.labels, spec }),
        ).toEqual([]);
        const env = Object.fromEntries(
          (spec.containers[0].env as { name: string; value?: string; valueFrom?: unknown }[]).map((e) => [
            e.name,
            e,
          ]),
        );
        expect(env.REDIS_URL?.valueFrom).toBeDefined();
        expect(env.DOCVERIFY_STEP_MEMORY_MB?.value).toMatch(/^\d+$/);
        expect(env.DOCVERIFY_WORKER_PROCESSES?.value).toMatch(/^\d+$/);
        // The worker's memory limit holds its processes at their cap.
        expect(spec.containers[0].resources.limits.memory).toBeDefined();
        expect(d!.spec.replicas).toBeGreaterThanOrEqual(1);
      }
      expect(objects.filter((o) => o.kind === "ScaledObject")).toEqual([]);
    });

    it("holds prepare's internet egress for the prepare workers only; every worker reaches Redis and takes no ingress", async () => {
      const objects = await render({ set: ["evaluation=true"], namespace: NS });
      const workers = workersOf(objects);
      const redisLabels = objects.find((o) => o.kind === "StatefulSet" && o.metadata.name.endsWith("redis"))!
        .spec.template.metadata.labels as Record<string, string>;
      for (const step of STEP_NAMES) {
        const labels = workers[step]!.spec.template.metadata.labels as Record<string, string>;
        const policies = policiesSelecting(objects, labels);
        expect(policies.some((p) => p.spec.policyTypes.includes("Ingress"))).toBe(true);
        for (const p of policies)
          if (p.spec.policyTypes.includes("Ingress")) expect(p.spec.ingress).toEqual([]);
        const egress = egressOf(objects, labels);
        expect(internetIn(egress), `${step} workers reach the internet`).toBe(step === "prepare");
        // No rule without `to` (that would open every destination on its ports).
        for (const r of egress) expect(r.to, `${step}: a rule without a destination`).toBeDefined();
        expect(
          egress.some((r) => (r.to ?? []).some((t) => t.podSelector && selects(t.podSelector, redisLabels))),
          `${step} workers reach Redis`,
        ).toBe(true);
        // The bundled Redis admits them.
        const redisPolicy = policiesSelecting(objects, redisLabels).find((p) =>
          p.spec.policyTypes.includes("Ingress"),
        )!;
        expect(
          redisPolicy.spec.ingress.some((r: { from: { podSelector?: object }[] }) =>
            r.from.some((f) => f.podSelector && selects(f.podSelector, labels)),
          ),
        ).toBe(true);
      }
      // The operator's step Pods (pods mode) are not given Redis by the workers' policy.
      for (const [step, pod] of Object.entries(stepPods(objects, NS))) {
        const egress = egressOf(objects, pod.metadata?.labels ?? {});
        expect(
          egress.some((r) => (r.to ?? []).some((t) => t.podSelector && selects(t.podSelector, redisLabels))),
          `${step} Pod reaches Redis`,
        ).toBe(false);
      }
    });

    it("with agent.engine llm, only the agent workers get the model's key and its egress", async () => {
      const objects = await render({
        set: [
          "evaluation=true",
          "agent.engine=llm",
          "agent.llm.url=http://l:8000/v1",
          "agent.llm.model=m",
          "agent.llm.egress.cidrs[0]=10.1.2.3/32",
        ],
        namespace: NS,
      });
      const workers = workersOf(objects);
      for (const step of STEP_NAMES) {
        const names = (workers[step]!.spec.template.spec.containers[0].env as { name: string }[]).map(
          (e) => e.name,
        );
        expect(names.includes("DOCVERIFY_LLM_API_KEY"), step).toBe(step === "agent");
        const egress = egressOf(objects, workers[step]!.spec.template.metadata.labels);
        expect(
          egress.some((r) => (r.to ?? []).some((t) => t.ipBlock?.cidr === "10.1.2.3/32")),
          step,
        ).toBe(step === "agent");
      }
    });

    it("stepMode: pods renders no step worker, no workers' policy and no Redis access for steps", async () => {
      const objects = await render({ set: ["evaluation=true", "stepMode=pods"], namespace: NS });
      expect(objects.find((o) => o.kind === "ConfigMap")?.data.DOCVERIFY_STEP_MODE).toBe("pods");
      expect(Object.values(workersOf(objects)).filter(Boolean)).toEqual([]);
      expect(objects.filter((o) => o.metadata.name.endsWith("step-workers"))).toEqual([]);
      const keda = await render({
        set: ["evaluation=true", "stepMode=pods", "stepWorkers.autoscaling.keda.enabled=true"],
        namespace: NS,
      });
      expect(keda.filter((o) => o.kind === "ScaledObject")).toEqual([]);
    });

    it("with KEDA on, scales each kind's Deployment on waiting + prioritized + active jobs of its queue", async () => {
      const objects = await render({
        set: [
          "evaluation=true",
          "stepWorkers.autoscaling.keda.enabled=true",
          "stepWorkers.autoscaling.keda.minReplicas=0",
        ],
        namespace: NS,
      });
      const workers = workersOf(objects);
      const scaled = objects.filter((o) => o.kind === "ScaledObject");
      expect(scaled).toHaveLength(3);
      for (const step of STEP_NAMES) {
        const d = workers[step]!;
        // KEDA owns the replica count: the Deployment leaves it unset, so an upgrade does not reset it.
        expect(d.spec.replicas).toBeUndefined();
        const so = scaled.find((o) => o.spec.scaleTargetRef.name === d.metadata.name);
        expect(so, step).toBeDefined();
        expect(so!.apiVersion).toBe("keda.sh/v1alpha1");
        expect(so!.spec.minReplicaCount).toBe(0);
        const trigger = so!.spec.triggers[0];
        expect(trigger.type).toBe("prometheus");
        expect(trigger.metadata.query).toContain(`step="${step}"`);
        expect(trigger.metadata.query).toContain('state=~"waiting|prioritized|active"');
        expect(trigger.metadata.query).toContain(`namespace="${NS}"`);
        expect(Number(trigger.metadata.threshold)).toBe(
          Number(
            d.spec.template.spec.containers[0].env.find(
              (e: { name: string }) => e.name === "DOCVERIFY_WORKER_PROCESSES",
            ).value,
          ),
        );
      }
    });

    it("refuses a step mode it does not know", async () => {
      const r = await run(helmBin(), [
        "template",
        "x",
        CHART_DIR,
        "--set",
        "evaluation=true",
        "--set",
        "stepMode=vms",
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/stepMode/);
    });
  },
);
