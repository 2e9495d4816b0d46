import type { V1Pod } from "@kubernetes/client-node";
import { stepPodOptionsFromEnv } from "../../bin/cluster-config.js";
import { STEP_NAMES, type StepName } from "../../core/detection.js";
import { buildStepPod } from "../../platform/kube/step-pod.js";
import type { K8sObject } from "./helm.js";

/**
 * The step Pods the operator would create from a rendered chart: the operator Deployment's environment
 * (its ConfigMap plus its own env; a secretKeyRef becomes a placeholder value, as the kubelet would fill
 * it) goes through the operator's own code (stepPodOptionsFromEnv, buildStepPod).
 */
export function operatorEnv(objects: K8sObject[]): Record<string, string> {
  const operator = objects.find(
    (o) => o.kind === "Deployment" && o.metadata.labels?.["app.kubernetes.io/component"] === "operator",
  );
  if (!operator) throw new Error("the chart rendered no operator Deployment");
  const container = operator.spec.template.spec.containers[0];
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === from.configMapRef?.name);
    if (!cm)
      throw new Error(`the operator reads ConfigMap ${from.configMapRef?.name}, which is not rendered`);
    Object.assign(env, cm.data);
  }
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef) env[e.name] = `secret:${e.valueFrom.secretKeyRef.key}`;
    else if (e.valueFrom?.fieldRef) env[e.name] = `field:${e.valueFrom.fieldRef.fieldPath}`;
  }
  return env;
}

export function stepPods(objects: K8sObject[], namespace: string): Record<StepName, V1Pod> {
  const options = stepPodOptionsFromEnv(operatorEnv(objects));
  const pods = {} as Record<StepName, V1Pod>;
  for (const step of STEP_NAMES) {
    pods[step] = buildStepPod(
      {
        name: `det-01jchart000000000000000000-${step}-1`,
        step,
        owner: { name: "det-01jchart000000000000000000" },
        env: { DOCVERIFY_STEP_INPUT: "{}" },
        timeoutSeconds: 120,
      },
      namespace,
      options,
    );
  }
  return pods;
}
