/**
 * The chart's Prometheus Operator option (metrics.serviceMonitor) and its Chart.yaml metadata. The rendered
 * ServiceMonitors are validated against the Prometheus Operator's own CRD schema (the
 * @kubernetes-models/prometheus-operator validators, generated from it): the test cluster has no Prometheus
 * Operator, so e2e/chart/chart-apply.test.ts leaves ServiceMonitors out of its server-side dry-run.
 * `helm lint --strict` and the generic checks of chart.test.ts run on ci/monitoring-values.yaml (on) and
 * every other scenario (off).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { kubeToolsAvailable } from "../cluster/test-cluster.js";
import { CHART_DIR, helmBin, type K8sObject, render, run } from "./helm.js";
import { matches, podTemplates } from "./manifest-checks.js";

const tools = kubeToolsAvailable();
const MONITORING = path.join(CHART_DIR, "ci/monitoring-values.yaml");

/** Fields of a ServiceMonitor endpoint in the Prometheus Operator's API (a typo would be dropped silently). */
const ENDPOINT_FIELDS = new Set([
  "port",
  "targetPort",
  "path",
  "scheme",
  "params",
  "interval",
  "scrapeTimeout",
  "honorLabels",
  "honorTimestamps",
  "relabelings",
  "metricRelabelings",
  "tlsConfig",
  "bearerTokenSecret",
  "authorization",
  "basicAuth",
  "oauth2",
  "followRedirects",
  "enableHttp2",
  "filterRunning",
  "proxyUrl",
]);
const SPEC_FIELDS = new Set([
  "jobLabel",
  "targetLabels",
  "podTargetLabels",
  "endpoints",
  "selector",
  "namespaceSelector",
  "sampleLimit",
  "targetLimit",
  "labelLimit",
  "labelNameLengthLimit",
  "labelValueLengthLimit",
  "attachMetadata",
]);

const kinds = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);

describe.skipIf(!tools.ok)(
  tools.ok ? "chart: ServiceMonitor" : `chart: ServiceMonitor: SKIPPED — ${tools.reason}`,
  () => {
    it("is off by default: no ServiceMonitor, no operator metrics Service", async () => {
      const objects = await render({ set: ["evaluation=true"] });
      expect(kinds(objects, "ServiceMonitor")).toEqual([]);
      const services = kinds(objects, "Service").map(
        (s) => s.metadata.labels?.["app.kubernetes.io/component"],
      );
      expect(services).not.toContain("operator");
    });

    it("on: one valid ServiceMonitor per component, each selecting its Service's metrics port", async () => {
      const objects = await render({ valuesFiles: [MONITORING], namespace: "docs-ns" });
      const monitors = kinds(objects, "ServiceMonitor");
      expect(monitors.map((m) => m.metadata.labels?.["app.kubernetes.io/component"]).sort()).toEqual([
        "api",
        "operator",
      ]);
      const templates = podTemplates(objects);
      for (const m of monitors) {
        // the Prometheus Operator's schema (types, patterns of durations, required fields)
        expect(() => new ServiceMonitor(m as never).validate(), m.metadata.name).not.toThrow();
        expect(Object.keys(m.spec).filter((k) => !SPEC_FIELDS.has(k))).toEqual([]);
        for (const e of m.spec.endpoints)
          expect(Object.keys(e).filter((k) => !ENDPOINT_FIELDS.has(k))).toEqual([]);
        expect(m.apiVersion).toBe("monitoring.coreos.com/v1");
        expect(m.metadata).toMatchObject({
          namespace: "docs-ns",
          labels: { release: "kube-prometheus-stack" },
        });
        expect(m.spec.namespaceSelector).toEqual({ matchNames: ["docs-ns"] });
        expect(m.spec.endpoints).toEqual([
          {
            port: expect.any(String),
            path: "/metrics",
            scheme: "http",
            interval: "30s",
            scrapeTimeout: "10s",
          },
        ]);
        // exactly one rendered Service is selected, it has the endpoint's port, and that port reaches a
        // container port of the component's Pods
        const selected = kinds(objects, "Service").filter((s) =>
          matches(m.spec.selector.matchLabels, s.metadata.labels ?? {}),
        );
        expect(selected, m.metadata.name).toHaveLength(1);
        const port = selected[0]!.spec.ports.find(
          (p: { name: string }) => p.name === m.spec.endpoints[0].port,
        );
        expect(port, `${m.metadata.name}: Service port ${m.spec.endpoints[0].port}`).toBeDefined();
        const pods = templates.filter((t) => matches(selected[0]!.spec.selector, t.labels));
        expect(pods).toHaveLength(1);
        const containerPorts = pods[0]!.spec.containers.flatMap((c: { ports?: { name: string }[] }) =>
          (c.ports ?? []).map((p) => p.name),
        );
        expect(containerPorts).toContain(port.targetPort);
      }
    });

    it("admits the scraper to the operator's metrics port only through operator.networkPolicy.metricsFrom", async () => {
      const objects = await render({ valuesFiles: [MONITORING] });
      const policy = kinds(objects, "NetworkPolicy").find(
        (p) => p.metadata.labels?.["app.kubernetes.io/component"] === "operator",
      );
      expect(policy?.spec.ingress).toEqual([
        {
          from: [
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
              podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } },
            },
          ],
          ports: [{ protocol: "TCP", port: 8080 }],
        },
      ]);
      // without metricsFrom the install notes say why Prometheus cannot scrape the operator
      const notes = await run(helmBin(), [
        "install",
        "x",
        CHART_DIR,
        "--dry-run=client",
        "--set",
        "evaluation=true",
        "--set",
        "metrics.serviceMonitor.enabled=true",
      ]);
      expect(notes.code, notes.stderr).toBe(0);
      expect(notes.stdout).toContain("operator.networkPolicy.metricsFrom is empty");
    });

    it("puts the ServiceMonitors in another namespace when asked, still selecting the release's Services", async () => {
      const objects = await render({
        set: [
          "evaluation=true",
          "metrics.serviceMonitor.enabled=true",
          "metrics.serviceMonitor.namespace=monitoring",
        ],
        namespace: "apps",
      });
      for (const m of kinds(objects, "ServiceMonitor")) {
        expect(m.metadata.namespace).toBe("monitoring");
        expect(m.spec.namespaceSelector).toEqual({ matchNames: ["apps"] });
        expect(m.spec.endpoints[0].interval).toBeUndefined();
      }
    });

    it("refuses a scrape interval that is not a Prometheus duration", async () => {
      const r = await run(helmBin(), [
        "template",
        "x",
        CHART_DIR,
        "--set",
        "evaluation=true",
        "--set",
        "metrics.serviceMonitor.interval=30 seconds",
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/interval/);
    });
  },
);

describe("Chart.yaml metadata", () => {
  const chart = parseYaml(readFileSync(path.join(CHART_DIR, "Chart.yaml"), "utf8"));
  it("has an icon (inline SVG), home, sources and maintainers", () => {
    expect(chart.icon).toMatch(/^data:image\/svg\+xml;base64,/);
    const svg = Buffer.from(String(chart.icon).split(",")[1]!, "base64").toString("utf8");
    expect(svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(() => new URL(chart.home)).not.toThrow();
    expect(chart.sources.length).toBeGreaterThan(0);
    for (const s of chart.sources) expect(() => new URL(s)).not.toThrow();
    expect(chart.maintainers).toEqual([{ name: expect.any(String), email: expect.stringContaining("@") }]);
  });
});
