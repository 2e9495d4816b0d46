import type { K8sObject } from "./helm.js";

/**
 * Pure checks over rendered manifests. Each returns the problems it found as sentences (empty = fine), so a
 * failing test names the object and the field.
 */

// biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects are walked field by field
type Any = any;

const WORKLOAD_KINDS = new Set(["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod"]);

export interface PodTemplate {
  /** `Kind/name` of the object holding the template. */
  owner: string;
  labels: Record<string, string>;
  spec: Any;
}

/** The Pod templates of every workload (and Pods themselves). */
export function podTemplates(objects: K8sObject[]): PodTemplate[] {
  const out: PodTemplate[] = [];
  for (const o of objects) {
    if (!WORKLOAD_KINDS.has(o.kind)) continue;
    const owner = `${o.kind}/${o.metadata.name}`;
    if (o.kind === "Pod") out.push({ owner, labels: o.metadata.labels ?? {}, spec: o.spec });
    else if (o.kind === "CronJob")
      out.push({
        owner,
        labels: o.spec.jobTemplate.spec.template.metadata?.labels ?? {},
        spec: o.spec.jobTemplate.spec.template.spec,
      });
    else out.push({ owner, labels: o.spec.template.metadata?.labels ?? {}, spec: o.spec.template.spec });
  }
  return out;
}

/**
 * The restricted Pod Security profile and the chart's own rules: non-root, seccomp RuntimeDefault, no
 * privilege escalation, every capability dropped, read-only root filesystem, no host namespaces or
 * hostPath, resource limits on every container.
 */
export function podSecurityProblems(t: PodTemplate): string[] {
  const problems: string[] = [];
  const p = (msg: string) => problems.push(`${t.owner}: ${msg}`);
  const pod = t.spec ?? {};
  const psc = pod.securityContext ?? {};
  for (const host of ["hostNetwork", "hostPID", "hostIPC"] as const)
    if (pod[host] === true) p(`${host} is true`);
  for (const v of pod.volumes ?? []) if (v.hostPath) p(`volume ${v.name} is a hostPath`);
  const containers: Any[] = [...(pod.initContainers ?? []), ...(pod.containers ?? [])];
  if (containers.length === 0) p("has no containers");
  for (const c of containers) {
    const sc = c.securityContext ?? {};
    const where = `container ${c.name}`;
    if (!(sc.runAsNonRoot === true || (sc.runAsNonRoot === undefined && psc.runAsNonRoot === true)))
      p(`${where} may run as root (runAsNonRoot is not true)`);
    const uid = sc.runAsUser ?? psc.runAsUser;
    if (uid === 0) p(`${where} runs as user 0`);
    const seccomp = sc.seccompProfile?.type ?? psc.seccompProfile?.type;
    if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost")
      p(`${where} has seccompProfile ${seccomp ?? "unset"}, not RuntimeDefault`);
    if (sc.allowPrivilegeEscalation !== false) p(`${where} does not set allowPrivilegeEscalation: false`);
    if (sc.privileged === true) p(`${where} is privileged`);
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) p(`${where} does not drop ALL capabilities`);
    for (const cap of sc.capabilities?.add ?? [])
      if (cap !== "NET_BIND_SERVICE") p(`${where} adds capability ${cap}`);
    if (sc.readOnlyRootFilesystem !== true) p(`${where} has a writable root filesystem`);
    if (!c.resources?.limits?.memory || !c.resources?.limits?.cpu) p(`${where} has no cpu and memory limits`);
    for (const port of c.ports ?? []) if (port.hostPort) p(`${where} uses hostPort ${port.hostPort}`);
  }
  return problems;
}

export const RECOMMENDED_LABELS = [
  "helm.sh/chart",
  "app.kubernetes.io/name",
  "app.kubernetes.io/instance",
  "app.kubernetes.io/version",
  "app.kubernetes.io/managed-by",
  "app.kubernetes.io/part-of",
  "app.kubernetes.io/component",
] as const;

/** Every object carries the recommended labels; a Pod template carries the selector's labels. */
export function labelProblems(o: K8sObject): string[] {
  const labels = o.metadata.labels ?? {};
  const problems = RECOMMENDED_LABELS.filter((l) => !labels[l]).map(
    (l) => `${o.kind}/${o.metadata.name}: label ${l} is missing`,
  );
  const selector = o.spec?.selector?.matchLabels as Record<string, string> | undefined;
  const template = o.spec?.template?.metadata?.labels as Record<string, string> | undefined;
  if (selector && template && !matches(selector, template))
    problems.push(`${o.kind}/${o.metadata.name}: the Pod template's labels do not match its selector`);
  return problems;
}

/** Whether `labels` carry every key/value of `matchLabels` (an empty selector matches everything). */
export function matches(matchLabels: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(matchLabels).every(([k, v]) => labels[k] === v);
}

/** Whether a label selector (matchLabels and matchExpressions) selects Pods with these labels. */
export function selects(
  selector: { matchLabels?: Record<string, string>; matchExpressions?: Any[] } | undefined,
  labels: Record<string, string>,
): boolean {
  if (!matches(selector?.matchLabels ?? {}, labels)) return false;
  return (selector?.matchExpressions ?? []).every(
    (e: { key: string; operator: string; values?: string[] }) => {
      const has = e.key in labels;
      switch (e.operator) {
        case "Exists":
          return has;
        case "DoesNotExist":
          return !has;
        case "In":
          return has && (e.values ?? []).includes(labels[e.key] as string);
        case "NotIn":
          return !has || !(e.values ?? []).includes(labels[e.key] as string);
        default:
          throw new Error(`unknown selector operator ${e.operator}`);
      }
    },
  );
}

/** The NetworkPolicies whose podSelector selects Pods with these labels. */
export function policiesSelecting(objects: K8sObject[], labels: Record<string, string>): K8sObject[] {
  return objects.filter((o) => o.kind === "NetworkPolicy" && selects(o.spec.podSelector, labels));
}

/** Every (apiGroup, resource, verb[, resourceName]) a Role grants, sorted: the form to compare Roles in. */
export function rbacGrants(role: K8sObject): string[] {
  const out = new Set<string>();
  for (const rule of role.rules ?? []) {
    for (const g of rule.apiGroups ?? [""])
      for (const r of rule.resources ?? [])
        for (const v of rule.verbs ?? []) {
          const names: string[] = rule.resourceNames?.length ? rule.resourceNames : ["*"];
          for (const n of names) out.add(`${g || "core"}/${r} ${v}${n === "*" ? "" : ` (${n})`}`);
        }
  }
  return [...out].sort();
}

/** Names of Secrets and ConfigMaps a Pod template refers to (env, envFrom, volumes, imagePullSecrets). */
export function referencedNames(spec: Any): { secrets: string[]; configMaps: string[] } {
  const secrets = new Set<string>();
  const configMaps = new Set<string>();
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    for (const e of c.env ?? []) {
      if (e.valueFrom?.secretKeyRef && !e.valueFrom.secretKeyRef.optional)
        secrets.add(e.valueFrom.secretKeyRef.name);
      if (e.valueFrom?.configMapKeyRef) configMaps.add(e.valueFrom.configMapKeyRef.name);
    }
    for (const e of c.envFrom ?? []) {
      if (e.secretRef) secrets.add(e.secretRef.name);
      if (e.configMapRef) configMaps.add(e.configMapRef.name);
    }
  }
  for (const v of spec.volumes ?? []) {
    if (v.secret) secrets.add(v.secret.secretName);
    if (v.configMap) configMaps.add(v.configMap.name);
  }
  return { secrets: [...secrets].sort(), configMaps: [...configMaps].sort() };
}

/**
 * values.schema.json: every object with fixed properties has `additionalProperties: false`; a map has a
 * typed `additionalProperties`; only the listed pass-through paths are free-form.
 */
export function schemaProblems(schema: Any, passThrough: Set<string>, at = "(root)"): string[] {
  const problems: string[] = [];
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("object")) {
    if (schema.properties) {
      if (schema.additionalProperties !== false)
        problems.push(`${at}: an object with properties must set additionalProperties: false`);
      for (const [k, v] of Object.entries(schema.properties))
        problems.push(...schemaProblems(v, passThrough, at === "(root)" ? k : `${at}.${k}`));
    } else if (!passThrough.has(at)) {
      if (typeof schema.additionalProperties !== "object" || schema.additionalProperties === null)
        problems.push(`${at}: a map must type its values with an additionalProperties schema`);
    }
  }
  if (schema.items) problems.push(...schemaProblems(schema.items, passThrough, `${at}[]`));
  return problems;
}
