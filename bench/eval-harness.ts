import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { classifyDocument } from "../agent/classify.js";
import type { AgentInput } from "../agent/engine.js";
import { runAgentStep } from "../agent/step.js";
import { runPrepareStep } from "../prepare/step.js";
import { runCheckStep } from "../checks/step.js";
import type { CheckResult } from "../core/check-result.js";
import { loadConfig } from "../core/config.js";
import type { DocumentInfo, StepInput } from "../core/detection.js";
import { systemClock } from "../core/ports.js";
import type { StepContext } from "../core/step-context.js";
import { readStored } from "../core/stored.js";
import { MEMORY_ENTRY } from "../core/tenant-memory.js";
import type { Verdict } from "../core/verdict.js";
import type { DocType } from "../core/verdict.js";
import { testPki } from "../fixtures/signed.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createObjectStoreMemory } from "../platform/memory/object-store-memory.js";
import { writeStepResult } from "../core/step-results.js";

/**
 * The quality harness behind `npm run eval`: runs the real prepare, check and agent step functions
 * in-process on a local object store over a labelled set, and computes the figures the calibration is
 * judged by (ROC AUC, precision/recall/F1 and FPR at score 50, detection rate per tamper kind, doc-type
 * accuracy, time per document).
 */

export const THRESHOLD = 50;
const CORPUS_BUCKET = "corpus";

export interface EvalOptions {
  engine?: "rules" | "llm";
  llmUrl?: string;
  llmModel?: string;
  /** Called after each document with a one-line progress note. */
  progress?: (line: string) => void;
  /** Bound on OCR per document (default: the check step's, half the step timeout). */
  ocrTimeoutMs?: number;
  /**
   * Runs the set through one tenant memory (issue 23), in the set's order: each document is remembered once
   * it is scored, as the operator's lifecycle does when a detection is terminal, so later documents see the
   * earlier ones. Off by default (the figures without the memory).
   */
  memory?: boolean;
}

/** The labelled sets the eval reports, each on its own. */
export const EVAL_SETS = [
  "synthetic",
  "realworld-dev",
  "real-producer",
  "debian-manuals",
  "layouts-dev",
  "layouts-heldout",
  "layouts-devdraw", // a development draw: the held-out plan of draw ≥ 40 on the development producers
  "realworld-dev-scans",
  "captures", // scans and photos (bench/eval-sets-captures.ts)
  "realworld-dev-scans-tampered", // real receipts and tampered copies (bench/eval-sets-captures.ts)
  "ids", // identity documents (fixtures/ids/)
] as const;
/** Sets reported only in aggregate: no document of them is ever named in the report, progress or JSON. */
export const AGGREGATE_ONLY_SETS: readonly EvalSet[] = ["layouts-heldout"];
export type EvalSet = (typeof EVAL_SETS)[number];

/** One document to score: a synthetic corpus item, a real file, or a real-producer fixture. */
export interface EvalItem {
  id: string;
  /** Default "synthetic". */
  set?: EvalSet;
  label: "genuine" | "tampered";
  /** Tamper kind of a tampered item. */
  tamper?: string;
  docType: DocType;
  region: string;
  variant: string;
  filename: string;
  contentType: "application/pdf" | "image/jpeg" | "image/png";
  make(): Promise<Uint8Array>;
  /** Producer family (real-producer set), to hold whole families out when calibrating. */
  family?: string;
  /** Id of the item a tampered item was made from. */
  originalId?: string;
  /** A tamper kind a structure-only tool is not expected to catch (reported apart). */
  exempt?: boolean;
  /** Whether the tampered document's arithmetic still agrees. */
  arithmetic?: "kept" | "broken";
  /**
   * An untampered original scored only to decide whether its tampered copy counts for detection; not part
   * of the set's genuine figures.
   */
  helper?: boolean;
  /** Where the file came from (path or repository), for the report. */
  source?: string;
  /** A sub-group the set reports apart (layouts-heldout: held-out layouts vs held-out producers). */
  group?: string;
}

export interface DocOutcome {
  id: string;
  set?: EvalSet;
  label: "genuine" | "tampered";
  tamper?: string;
  docType: string;
  region: string;
  variant: string;
  family?: string;
  originalId?: string;
  /** Score of the original (when it was scored): detection counts only where it is below the threshold. */
  originalScore?: number;
  exempt?: boolean;
  arithmetic?: "kept" | "broken";
  helper?: boolean;
  source?: string;
  group?: string;
  /** Fraud score; for a detection decided by signature.pdf alone: 0 when corroborated, 100 when unattested. */
  score: number | null;
  authoritative?: { trust: string | null; directive: string | null };
  verdict?: Verdict;
  /** Type the rules classifier reads from the extracted text. */
  classifiedType: string;
  failure?: string;
  /** What the agent saw, so the scoring can be re-run with other constants (calibration). */
  agentInput?: AgentInput;
  ms: { prepare: number; check: number; agent: number; total: number };
}

export interface Metrics {
  documents: number;
  genuine: number;
  tampered: number;
  failures: number;
  auc: number;
  /**
   * ROC AUC with the exempt kinds' copies left out (a document re-rendered from an edited source leaves no
   * trace in the file; EVALUATION.md counts it apart): NaN when the set has none, so the figure is shown
   * only beside an AUC it differs from.
   */
  aucNonExempt: number;
  precision: number;
  recall: number;
  f1: number;
  fpr: number;
  /**
   * Detection per tamper kind, over tampered copies whose original scored below the threshold (or whose
   * original is unknown); `excluded` copies of originals that were already flagged.
   */
  perKind: {
    kind: string;
    n: number;
    detected: number;
    rate: number;
    meanScore: number;
    excluded: number;
    exempt: boolean;
    /** Every tampered copy of the kind, whatever its original scored (for reference only). */
    nAll: number;
    detectedAll: number;
  }[];
  docTypeAccuracy: number;
  msPerDocMean: number;
  msPerDocP95: number;
  checkMsMean: number;
}

const ms = (since: number) => Math.round(performance.now() - since);

const detectionId = (n: number) => `det-eval-${process.pid}-${n}`;

/** Runs the three steps on every item. */
export async function evaluate(items: readonly EvalItem[], options: EvalOptions = {}): Promise<DocOutcome[]> {
  const root = await mkdtemp(path.join(os.tmpdir(), "docverify-eval-"));
  try {
    const pki = await testPki();
    const anchors = path.join(root, "trust-anchors.pem");
    await writeFile(anchors, pki.rootPem);
    const env: Record<string, string> = {
      DOCVERIFY_DATA_DIR: root,
      DOCVERIFY_TRUST_ANCHORS: anchors,
      DOCVERIFY_AGENT_ENGINE: options.engine ?? "rules",
    };
    if (options.llmUrl) env.DOCVERIFY_LLM_URL = options.llmUrl;
    if (options.engine === "llm") env.DOCVERIFY_LLM_MODEL = options.llmModel ?? "docverify-eval";
    const config = loadConfig(env);
    const objects = createLocalObjectStore(path.join(root, "objects"));
    await objects.ensureBucket(config.bucket);
    await objects.ensureBucket(CORPUS_BUCKET);
    const ctx: StepContext = {
      objects,
      bucket: config.bucket,
      config,
      log: pino({ level: "silent" }),
      clock: systemClock,
      ...(options.memory
        ? { memory: { store: createObjectStoreMemory(objects, config.bucket), key: randomBytes(32) } }
        : {}),
    };
    const out: DocOutcome[] = [];
    for (const [i, item] of items.entries()) {
      const outcome = await evaluateOne(item, i, ctx, options);
      out.push(outcome);
      if (ctx.memory) {
        // Remembered once terminal (operator/detection-lifecycle.ts): the check step's entry, when it wrote one.
        const read = await readStored(objects, config.bucket, MEMORY_ENTRY, detectionId(i));
        if (read.kind === "ok") await ctx.memory.store.remember(read.value.tenant, read.value.entry);
      }
      options.progress?.(
        `${String(i + 1).padStart(4)}/${items.length} ${item.id.padEnd(44)} ${item.label.padEnd(8)} score ${String(outcome.score ?? "-").padStart(3)} ${outcome.failure ?? ""} ${outcome.ms.total} ms`,
      );
    }
    return out;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * One document through the three steps. The check step starts its own OCR engine for the document and
 * stops it afterwards, exactly as a step process does: tesseract keeps state between pages it reads, so
 * an engine shared across documents made the image documents' text (and scores) depend on what was read
 * before them.
 */
async function evaluateOne(
  item: EvalItem,
  n: number,
  ctx: StepContext,
  options: EvalOptions = {},
): Promise<DocOutcome> {
  const bytes = await item.make();
  const key = `${item.id.replace(/[^A-Za-z0-9._-]+/g, "_")}/${item.filename}`;
  await ctx.objects.put(CORPUS_BUCKET, key, Buffer.from(bytes), { contentType: item.contentType });
  const base = {
    id: item.id,
    set: item.set ?? "synthetic",
    label: item.label,
    tamper: item.tamper,
    docType: item.docType,
    region: item.region,
    variant: item.variant,
    family: item.family,
    originalId: item.originalId,
    exempt: item.exempt,
    arithmetic: item.arithmetic,
    helper: item.helper,
    source: item.source,
    group: item.group,
  };
  const detection = detectionId(n);
  const spec: StepInput["spec"] = {
    source: { object: { bucket: CORPUS_BUCKET, key } },
    docType: item.docType,
    region: item.region,
    submittedBy: "eval",
    sample: false,
    priority: "batch",
  };
  const started = performance.now();
  const times = { prepare: 0, check: 0, agent: 0, total: 0 };
  const failed = (failure: string): DocOutcome => ({
    ...base,
    score: null,
    classifiedType: "unknown",
    failure,
    ms: { ...times, total: ms(started) },
  });

  let t = performance.now();
  const prepared = await runPrepareStep({ detection, step: "prepare", attempt: 1, spec }, ctx);
  times.prepare = ms(t);
  if (prepared.failure || !prepared.document)
    return failed(`prepare: ${prepared.failure?.code ?? "no document"}`);
  const document: DocumentInfo = prepared.document;

  t = performance.now();
  // Quality only: the reviewer's page images (npm run bench measures their cost) are not rendered here.
  const checked = await runCheckStep({ detection, step: "check", attempt: 1, spec, document }, ctx, {
    evidence: false,
    ...(options.ocrTimeoutMs ? { ocrTimeoutMs: options.ocrTimeoutMs } : {}),
  });
  times.check = ms(t);
  await writeStepResult(ctx.objects, ctx.bucket, detection, checked);
  if (checked.failure) return failed(`check: ${checked.failure.code}`);
  const text = checked.textKey ? (await ctx.objects.get(ctx.bucket, checked.textKey)).toString("utf8") : "";
  const classifiedType = classifyDocument(text).docType;
  const agentInput: AgentInput = {
    declaredDocType: item.docType,
    region: item.region,
    text,
    checks: checked.checks as CheckResult[],
    discovered: checked.discovered,
  };

  if (checked.authoritative) {
    const trust = checked.authoritative.trust;
    return {
      ...base,
      score: trust === "corroborated" ? 0 : 100,
      authoritative: { trust, directive: checked.authoritative.directive },
      classifiedType,
      agentInput,
      ms: { ...times, total: ms(started) },
    };
  }

  t = performance.now();
  const agent = await runAgentStep({ detection, step: "agent", attempt: 1, spec, document }, ctx);
  times.agent = ms(t);
  if (agent.failure || !agent.verdict) {
    return { ...failed(`agent: ${agent.error ?? agent.failure?.code}`), classifiedType, agentInput };
  }
  return {
    ...base,
    score: agent.verdict.fraudScore,
    verdict: agent.verdict,
    classifiedType,
    agentInput,
    ms: { ...times, total: ms(started) },
  };
}

/** ROC AUC by the Mann-Whitney statistic (ties count one half). */
export function rocAuc(positive: number[], negative: number[]): number {
  if (positive.length === 0 || negative.length === 0) return Number.NaN;
  let wins = 0;
  for (const p of positive) for (const q of negative) wins += p > q ? 1 : p === q ? 0.5 : 0;
  return wins / (positive.length * negative.length);
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
const p95 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)] as number) : Number.NaN;
};

/** A document that failed counts as flagged (the service would send it to a person) with score 100. */
export const scoreOf = (d: DocOutcome) => d.score ?? 100;

/** Fills originalScore of every tampered outcome whose original was scored too. */
export function linkOriginals(docs: DocOutcome[]): DocOutcome[] {
  const byId = new Map(docs.map((d) => [d.id, d]));
  return docs.map((d) => {
    const o = d.originalId ? byId.get(d.originalId) : undefined;
    return o ? { ...d, originalScore: scoreOf(o) } : d;
  });
}

export function computeMetrics(all: readonly DocOutcome[], threshold = THRESHOLD): Metrics {
  const docs = all.filter((d) => !d.helper);
  const genuine = docs.filter((d) => d.label === "genuine");
  const tampered = docs.filter((d) => d.label === "tampered");
  const typed = docs.filter((d) => d.docType !== "other");
  const eligible = (d: DocOutcome) => d.originalScore === undefined || d.originalScore < threshold;
  const tp = tampered.filter((d) => scoreOf(d) >= threshold).length;
  const fp = genuine.filter((d) => scoreOf(d) >= threshold).length;
  const precision = tp + fp > 0 ? tp / (tp + fp) : Number.NaN;
  const recall = tampered.length ? tp / tampered.length : Number.NaN;
  const kinds = [...new Set(tampered.map((d) => d.tamper as string))];
  return {
    documents: docs.length,
    genuine: genuine.length,
    tampered: tampered.length,
    failures: docs.filter((d) => d.failure).length,
    auc: rocAuc(tampered.map(scoreOf), genuine.map(scoreOf)),
    aucNonExempt: tampered.some((d) => d.exempt)
      ? rocAuc(tampered.filter((d) => !d.exempt).map(scoreOf), genuine.map(scoreOf))
      : Number.NaN,
    precision,
    recall,
    f1: precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : Number.NaN,
    fpr: genuine.length ? fp / genuine.length : Number.NaN,
    perKind: kinds.map((kind) => {
      const all = tampered.filter((d) => d.tamper === kind);
      const of = all.filter(eligible);
      const detected = of.filter((d) => scoreOf(d) >= threshold).length;
      return {
        kind,
        n: of.length,
        detected,
        rate: of.length ? detected / of.length : Number.NaN,
        meanScore: mean(of.map(scoreOf)),
        excluded: all.length - of.length,
        exempt: all.some((d) => d.exempt),
        nAll: all.length,
        detectedAll: all.filter((d) => scoreOf(d) >= threshold).length,
      };
    }),
    // Over documents whose true type is known (a declared `other` says nothing to compare with).
    docTypeAccuracy: typed.length
      ? typed.filter((d) => d.classifiedType === d.docType).length / typed.length
      : Number.NaN,
    msPerDocMean: mean(docs.map((d) => d.ms.total)),
    msPerDocP95: p95(docs.map((d) => d.ms.total)),
    checkMsMean: mean(docs.map((d) => d.ms.check)),
  };
}

const pct = (x: number) => (Number.isNaN(x) ? "n/a" : `${(100 * x).toFixed(1)} %`);
const num = (x: number, digits = 3) => (Number.isNaN(x) ? "n/a" : x.toFixed(digits));

/** The report table: one "name | value" row per figure, then one row per tamper kind. */
export function formatMetrics(m: Metrics, title: string): string {
  const rows: [string, string][] = [
    ["documents (genuine / tampered)", `${m.documents} (${m.genuine} / ${m.tampered})`],
    ["step failures", String(m.failures)],
    ["ROC AUC", num(m.auc)],
    ...(Number.isNaN(m.aucNonExempt)
      ? []
      : [["ROC AUC, exempt kinds left out", num(m.aucNonExempt)] as [string, string]]),
    [`precision at score ${THRESHOLD}`, pct(m.precision)],
    [`recall at score ${THRESHOLD}`, pct(m.recall)],
    [`F1 at score ${THRESHOLD}`, num(m.f1)],
    [`false-positive rate on genuine at ${THRESHOLD}`, pct(m.fpr)],
    ["doc-type accuracy", pct(m.docTypeAccuracy)],
    ["time per document, mean / p95", `${Math.round(m.msPerDocMean)} ms / ${Math.round(m.msPerDocP95)} ms`],
    ["check step per document, mean", `${Math.round(m.checkMsMean)} ms`],
    ...m.perKind.map((k): [string, string] => [
      `${k.exempt ? "exempt, " : ""}detected: ${k.kind}`,
      `${pct(k.rate)} (${k.detected}/${k.n}, mean score ${Number.isNaN(k.meanScore) ? "-" : Math.round(k.meanScore)})${k.excluded ? `; ${k.excluded} on originals ≥ ${THRESHOLD} not counted (all copies: ${k.detectedAll}/${k.nAll})` : ""}`,
    ]),
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  const v = Math.max(...rows.map(([, x]) => x.length));
  const line = `+-${"-".repeat(w)}-+-${"-".repeat(v)}-+`;
  return [title, line, ...rows.map(([k, x]) => `| ${k.padEnd(w)} | ${x.padEnd(v)} |`), line].join("\n");
}

/** Documents that land on the wrong side of the threshold, for the report. */
export function misclassified(docs: readonly DocOutcome[], threshold = THRESHOLD): string[] {
  return docs
    .filter((d) => !d.helper)
    .filter((d) => (d.label === "genuine" ? scoreOf(d) >= threshold : scoreOf(d) < threshold))
    .map((d) => {
      const top = (d.agentInput?.checks ?? [])
        .filter((c) => c.outcome === "flag")
        .map((c) => `${c.checkId}(${c.severity})`)
        .join(" ");
      return `${d.label === "genuine" ? "false positive" : "missed"}: ${d.id} [${d.variant}] score ${d.score ?? "-"}${d.failure ? ` ${d.failure}` : ""} ${top}`;
    });
}
