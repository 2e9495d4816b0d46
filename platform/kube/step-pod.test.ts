import { describe, expect, it } from "vitest";
import type { WorkloadSpec } from "../../core/ports.js";
import { buildStepPod, quantityBytes, STEP_POD_SELECTOR } from "./step-pod.js";

const spec: WorkloadSpec = {
  name: "det-01-prepare-1",
  step: "prepare",
  owner: { name: "det-01", uid: "5c0a2f4e-0000-4000-8000-000000000001" },
  env: { DOCVERIFY_STEP_INPUT: '{"step":"prepare"}', S3_BUCKET: "from-workload" },
  timeoutSeconds: 120,
};

describe("buildStepPod", () => {
  const pod = buildStepPod(spec, "docverify", {
    image: "ghcr.io/example/docverify:1.0.0",
    imagePullPolicy: "Always",
    env: { S3_ENDPOINT: "http://minio:9000", S3_BUCKET: "common" },
    secretEnv: { S3_SECRET_KEY: { secretName: "docverify-s3", key: "secretKey" } },
    resources: { requests: { cpu: "200m" }, limits: { memory: "512Mi" } },
    stepResources: { check: { limits: { memory: "2Gi" } } },
    nodeSelector: { pool: "steps" },
    tolerations: [{ key: "dedicated", operator: "Equal", value: "steps", effect: "NoSchedule" }],
  });
  const c = pod.spec!.containers[0]!;

  it("is named after the workload, labelled for the watch and owned by the Detection", () => {
    expect(pod.metadata).toMatchObject({
      name: "det-01-prepare-1",
      namespace: "docverify",
      labels: {
        "app.kubernetes.io/name": "docverify",
        "app.kubernetes.io/component": "step",
        "docverify.io/detection": "det-01",
        "docverify.io/step": "prepare",
      },
      ownerReferences: [
        {
          apiVersion: "docverify.io/v1alpha1",
          kind: "Detection",
          name: "det-01",
          uid: spec.owner.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(STEP_POD_SELECTOR).toBe("app.kubernetes.io/name=docverify,app.kubernetes.io/component=step");
  });

  it("runs `docverify <step> --detection <owner>` once, within the step's time limit", () => {
    expect(c.command).toEqual(["docverify"]);
    expect(c.args).toEqual(["prepare", "--detection", "det-01"]);
    expect(pod.spec).toMatchObject({ restartPolicy: "Never", activeDeadlineSeconds: 120 });
    expect(c.terminationMessagePolicy).toBe("FallbackToLogsOnError");
  });

  it("is locked down: restricted security context, no token, no service links, /tmp on an emptyDir", () => {
    expect(pod.spec).toMatchObject({
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: "RuntimeDefault" } },
    });
    expect(c.securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(c.volumeMounts).toEqual([{ name: "tmp", mountPath: "/tmp" }]);
    expect(pod.spec!.volumes).toEqual([{ name: "tmp", emptyDir: {} }]);
  });

  it("takes image, placement and resources from the options, with per-step overrides", () => {
    expect(c).toMatchObject({ image: "ghcr.io/example/docverify:1.0.0", imagePullPolicy: "Always" });
    expect(c.resources).toEqual({ requests: { cpu: "200m" }, limits: { memory: "512Mi" } });
    expect(pod.spec).toMatchObject({ nodeSelector: { pool: "steps" }, tolerations: [{ key: "dedicated" }] });
    const check = buildStepPod({ ...spec, step: "check", name: "det-01-check-1" }, "ns", {
      image: "i",
      resources: { limits: { memory: "1Gi" } },
      stepResources: { check: { limits: { memory: "2Gi" } } },
    });
    expect(check.spec!.containers[0]!.resources).toEqual({ limits: { memory: "2Gi" } });
  });

  it("passes common env, secrets by reference and the workload's env (which wins), plus the termination log", () => {
    const env = Object.fromEntries(c.env!.map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env).toEqual({
      S3_ENDPOINT: "http://minio:9000",
      S3_BUCKET: "from-workload",
      S3_SECRET_KEY: { secretKeyRef: { name: "docverify-s3", key: "secretKey" } },
      DOCVERIFY_STEP_INPUT: '{"step":"prepare"}',
      DOCVERIFY_TERMINATION_LOG: "/dev/termination-log",
      DOCVERIFY_RUNTIME: "cluster",
      NODE_OPTIONS: "--max-old-space-size=384",
    });
    expect(c.terminationMessagePath).toBe("/dev/termination-log");
  });

  it("has no ownerReference when the owner's uid is unknown (an ownerReference needs it)", () => {
    const p = buildStepPod({ ...spec, owner: { name: "det-01" } }, "ns", { image: "i" });
    expect(p.metadata!.ownerReferences).toBeUndefined();
  });

  it("limits V8's heap to three quarters of the step's memory limit (NODE_OPTIONS)", () => {
    const nodeOptions = (p: ReturnType<typeof buildStepPod>) =>
      p.spec!.containers[0]!.env!.find((e) => e.name === "NODE_OPTIONS")?.value;
    expect(nodeOptions(pod)).toBe("--max-old-space-size=384"); // prepare: 512Mi
    const check = buildStepPod({ ...spec, name: "det-01-check-1", step: "check" }, "docverify", {
      image: "x",
      resources: { limits: { memory: "512Mi" } },
      stepResources: { check: { limits: { memory: "1536Mi" } } },
      env: { NODE_OPTIONS: "--enable-source-maps" },
    });
    expect(nodeOptions(check)).toBe("--enable-source-maps --max-old-space-size=1152");
    const none = buildStepPod(spec, "docverify", { image: "x", resources: { requests: { cpu: "1" } } });
    expect(nodeOptions(none)).toBeUndefined();
  });

  it("reads Kubernetes memory quantities", () => {
    expect(quantityBytes("1536Mi")).toBe(1536 * 2 ** 20);
    expect(quantityBytes("2Gi")).toBe(2 * 2 ** 30);
    expect(quantityBytes("1.5G")).toBe(1.5e9);
    expect(quantityBytes("1e9")).toBe(1e9);
    expect(quantityBytes("536870912")).toBe(536870912);
    expect(quantityBytes("lots")).toBeUndefined();
  });
});
