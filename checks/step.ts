import type { CheckResult } from "../core/check-result.js";
import { type AuthoritativeInfo, type CheckStepResult, keys, type StepInput } from "../core/detection.js";
import { failure } from "../core/failure-codes.js";
import { ObjectNotFoundError } from "../core/ports.js";
import type { StepContext } from "../core/step-context.js";
import { writeStored } from "../core/stored.js";
import { MEMORY_ENTRY, tenantOf } from "../core/tenant-memory.js";
import { admitDocument } from "../document/budget/gate.js";
import { renderPageText } from "../document/document-text.js";
import type { DocumentModel } from "../document/model.js";
import type { OcrEngine } from "../document/ocr.js";
import { type OcrSession, ocrForStep } from "../document/ocr-pass.js";
import {
  buildDocumentModel,
  DocumentEncryptedError,
  DocumentUnreadableError,
  INFO_KEYS,
} from "../document/pdf-model.js";
import { setPdfjsLimits } from "../document/pdfjs.js";
import { releasePixels, sharePixels } from "../document/pixels.js";
import type { Check, CheckContext } from "./check.js";
import { gatherHistory, type HistoryInput } from "./history-matches/gather.js";
import { tenantKeys } from "./history-matches/keys.js";
import { reviewOcrFindings } from "./ocr-review.js";
import { CHECKS } from "./registry.js";
import { type RenderLimits, RENDER_DEFAULTS, writeEvidence } from "./step-evidence.js";
import { loadTrustAnchors } from "./trust-anchors.js";

/**
 * The check step: loads the stored document, parses it once, runs every applicable check with a time
 * bound each (a check that throws or overruns becomes outcome `error`; it never fails the step), gathers
 * the discovered facts and writes the extracted text (`--- page N ---` markers) for the agent.
 * Fails the step only when the document cannot be read at all (`document_unreadable`), needs a password
 * (`document_encrypted`), is over the document budget or takes longer to parse than allowed
 * (`document_too_complex`: document/budget/gate.ts decides before any parser runs), or was never
 * prepared; infrastructure errors (object store down) are thrown so the step is retried.
 */

export interface CheckStepOptions {
  /** Defaults to the registry. */
  checks?: readonly Check[];
  /** Per-check time bound; default a quarter of the step timeout, between 1 and 15 seconds. */
  checkTimeoutMs?: number;
  /** Bound on parsing the document; default half the step timeout. */
  parseTimeoutMs?: number;
  /** OCR engine to use for image pages (default: one started on demand and stopped after the step). */
  ocr?: OcrEngine;
  /** Bound on OCR of all image pages together; default half the step timeout. */
  ocrTimeoutMs?: number;
  /**
   * Bounds of the reviewer's evidence (step-evidence.ts); default RENDER_DEFAULTS with a time bound of
   * min(30 s, a quarter of the step timeout). `false` writes no evidence (benchmarks compare with it).
   */
  evidence?: Partial<RenderLimits> | false;
}

class CheckTimeoutError extends Error {
  override name = "CheckTimeoutError";
}

async function withTimeout<T>(
  ms: number,
  run: (signal: AbortSignal) => Promise<T>,
  what: string,
): Promise<T> {
  const ctl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new CheckTimeoutError(`${what} did not finish within ${ms} ms`);
      ctl.abort(err);
      reject(err);
    }, ms);
  });
  try {
    return await Promise.race([run(ctl.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function runOne(
  check: Check,
  doc: DocumentModel,
  base: Omit<CheckContext, "signal">,
  timeoutMs: number,
): Promise<CheckResult> {
  const started = performance.now();
  try {
    const result = await withTimeout(
      timeoutMs,
      (signal) => check.run(doc, { ...base, signal }),
      `The check ${check.id}`,
    );
    return {
      ...result,
      checkId: check.id,
      durationMs: Math.round(performance.now() - started),
      ...(check.version ? { version: check.version } : {}),
    };
  } catch (err) {
    const timedOut = err instanceof CheckTimeoutError;
    const reason = err instanceof Error ? err.message : String(err);
    return {
      checkId: check.id,
      outcome: "error",
      severity: 0,
      summary: timedOut
        ? `The check ${check.id} did not finish within ${timeoutMs} ms, so it gives no evidence either way.`
        : `The check ${check.id} failed on this document (${reason}), so it gives no evidence either way.`,
      findings: [],
      durationMs: Math.round(performance.now() - started),
      ...(check.version ? { version: check.version } : {}),
    };
  }
}

/** Info entries that count as document metadata (Trapped is a prepress flag, not metadata). */
const METADATA_INFO_KEYS = INFO_KEYS.filter((k) => k !== "Trapped");

/** Facts about the document itself, independent of any check. */
export function documentFacts(doc: DocumentModel): string[] {
  const pdf = doc.pdf;
  if (!pdf) return [];
  const facts: string[] = [];
  if (METADATA_INFO_KEYS.some((k) => (pdf.info[k] ?? "").trim() !== "")) facts.push("metadata_present");
  if (pdf.xmp !== undefined) facts.push("xmp_present");
  // incremental_updates comes from pdf.revisions, whose revision walker tells real edits from a
  // linearized file's first-page xref.
  if (pdf.raw.encrypted) facts.push("encrypted");
  return facts;
}

/** The text file the agent reads: one `--- page N ---` line before each page's text. */
export function renderText(doc: DocumentModel): string {
  return renderPageText(doc);
}

export async function runCheckStep(
  input: StepInput,
  ctx: StepContext,
  opts: CheckStepOptions = {},
): Promise<CheckStepResult> {
  const log = ctx.log.child({ detection: input.detection, step: "check" });
  const document = input.document;
  if (!document) {
    log.error("the check step ran without a prepared document");
    return { step: "check", checks: [], discovered: [], failure: failure("check_failed") };
  }
  const stepMs = ctx.config.stepTimeoutSeconds * 1000;
  const checkTimeoutMs = opts.checkTimeoutMs ?? Math.min(15_000, Math.max(1_000, Math.floor(stepMs / 4)));
  const parseTimeoutMs = opts.parseTimeoutMs ?? Math.max(1_000, Math.floor(stepMs / 2));

  let bytes: Buffer;
  try {
    bytes = await ctx.objects.get(ctx.bucket, document.key);
  } catch (err) {
    if (err instanceof ObjectNotFoundError) {
      log.error({ key: document.key }, "the prepared document is missing from the object store");
      return { step: "check", checks: [], discovered: [], failure: failure("check_failed") };
    }
    throw err;
  }

  // One view of the bytes for the gate and the model: the raw parse the gate makes is the checks' too.
  const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const gateStarted = performance.now();
  const admission = await admitDocument(
    { bytes: view, contentType: document.contentType },
    ctx.config.budget,
  );
  const gateMs = Math.round(performance.now() - gateStarted);
  if (!admission.ok) {
    log.warn(
      { limit: admission.limit, reason: admission.reason, gateMs },
      "the document is refused before parsing",
    );
    return { step: "check", checks: [], discovered: [], failure: failure(admission.code) };
  }
  setPdfjsLimits({ maxImagePixels: ctx.config.budget.maxImagePixels });

  let doc: DocumentModel;
  const parseStarted = performance.now();
  try {
    doc = await withTimeout(
      parseTimeoutMs,
      (signal) =>
        buildDocumentModel(
          {
            bytes: view,
            contentType: document.contentType,
            filename: document.filename,
            declaredContentType: document.declaredContentType ?? null,
            declaredDocType: input.spec.docType,
            region: input.spec.region,
          },
          signal,
        ),
      "Parsing the document",
    );
  } catch (err) {
    if (err instanceof CheckTimeoutError) {
      log.warn({ reason: err.message }, "parsing the document ran out of time");
      return { step: "check", checks: [], discovered: [], failure: failure("document_too_complex") };
    }
    if (err instanceof DocumentEncryptedError) {
      log.warn({ reason: err.message }, "the document needs a password");
      return { step: "check", checks: [], discovered: [], failure: failure("document_encrypted") };
    }
    if (err instanceof DocumentUnreadableError) {
      log.warn({ reason: err.message }, "the document cannot be read");
      return { step: "check", checks: [], discovered: [], failure: failure("document_unreadable") };
    }
    throw err;
  }
  log.info(
    {
      contentType: doc.contentType,
      pages: doc.pdf?.pageCount,
      pagesRead: doc.pdf?.pages.length,
      warnings: doc.warnings.length ? doc.warnings : undefined,
      gateMs,
      operators: admission.report?.operators,
      parseMs: Math.round(performance.now() - parseStarted),
    },
    "document parsed",
  );

  const registry = opts.checks ?? CHECKS;
  const anchors = await loadTrustAnchors(ctx.config.trustAnchorsFile);
  if (anchors.error) log.warn({ reason: anchors.error }, "the trust anchors file cannot be read");
  const early = pixelWork(doc, registry, {
    now: ctx.clock.now(),
    ...(anchors.pem ? { trustAnchorsPem: anchors.pem } : {}),
    ...(anchors.error ? { trustAnchorsError: anchors.error } : {}),
    log,
    checkTimeoutMs,
  });

  // Image documents and image-only PDF pages get their text by OCR before the text checks read it. The
  // checks that read only the pixels (and the pixel part of qr.codes) start as soon as tesseract has the
  // first page (RecognizeOptions.onSent), so they run on the other core while its worker reads and do not
  // hold up the page's preparation on this thread; without OCR they start right after the pass.
  try {
    const ocr = await ocrForStep(doc, {
      engine: opts.ocr,
      timeoutMs: opts.ocrTimeoutMs ?? Math.max(5_000, Math.floor(stepMs / 2)),
      log,
      onSent: early.start,
    });
    try {
      early.start();
      return await checkAndReport(doc, ocr, early, input, ctx, opts, {
        log,
        stepMs,
        checkTimeoutMs,
        anchors,
      });
    } finally {
      await ocr.close();
    }
  } finally {
    await early.settled();
    await releasePixels(doc);
  }
}

/**
 * The work that needs no text: the applicable `pixelsOnly` checks and the `prepare` hooks of the others,
 * started once by `start()` (the OCR's first page handed to tesseract, or the OCR pass over). `result`
 * gives each pixel check's result (its time bound counts from its start); `settled()` waits for all of it.
 */
interface PixelWork {
  start: () => void;
  /** The pixel checks it runs, in registry order. */
  checks: readonly Check[];
  result(check: Check): Promise<CheckResult> | undefined;
  settled(): Promise<void>;
}

function pixelWork(
  doc: DocumentModel,
  registry: readonly Check[],
  o: Omit<CheckContext, "signal"> & { log: StepContext["log"]; checkTimeoutMs: number },
): PixelWork {
  const { log, checkTimeoutMs, ...base } = o;
  // A throwing appliesTo: the pixel check runs anyway so it reports its error (as checkAndReport does for the
  // others); a preparation is only skipped (the check then does the work itself when it runs).
  const applies = (c: Check, onThrow: boolean) => {
    try {
      return c.appliesTo(doc);
    } catch (err) {
      if (onThrow)
        log.warn({ check: c.id, err }, "appliesTo threw; running the check anyway so it reports its error");
      return onThrow;
    }
  };
  const checks = registry.filter((c) => c.pixelsOnly && applies(c, true));
  const preparing = registry.filter((c) => !c.pixelsOnly && c.prepare && applies(c, false));
  const results = new Map<Check, Promise<CheckResult>>();
  const prepared: Promise<void>[] = [];
  let startedAt: number | undefined;
  return {
    checks,
    start() {
      if (startedAt !== undefined) return;
      startedAt = performance.now();
      for (const c of checks) results.set(c, runOne(c, doc, base, checkTimeoutMs));
      for (const c of preparing) {
        prepared.push(
          withTimeout(checkTimeoutMs, (signal) => c.prepare!(doc, signal), `Preparing ${c.id}`).catch((err) =>
            log.warn({ check: c.id, reason: String(err) }, "a check's preparation failed"),
          ),
        );
      }
    },
    result: (c) => results.get(c),
    async settled() {
      await Promise.all([...results.values(), ...prepared]);
    },
  };
}

async function checkAndReport(
  doc: DocumentModel,
  ocr: OcrSession,
  early: PixelWork,
  input: StepInput,
  ctx: StepContext,
  opts: CheckStepOptions,
  s: {
    log: StepContext["log"];
    stepMs: number;
    checkTimeoutMs: number;
    anchors: Awaited<ReturnType<typeof loadTrustAnchors>>;
  },
): Promise<CheckStepResult> {
  const { log, stepMs, checkTimeoutMs, anchors } = s;
  const now = ctx.clock.now();
  const registry = opts.checks ?? CHECKS;
  const started = new Set(early.checks);
  const applicable = registry.filter((c) => {
    if (started.has(c)) return true;
    if (c.pixelsOnly) return false;
    try {
      return c.appliesTo(doc);
    } catch (err) {
      log.warn({ check: c.id, err }, "appliesTo threw; running the check anyway so it reports its error");
      return true;
    }
  });
  const history = await gatherMemory(doc, input, ctx, log);
  const base: Omit<CheckContext, "signal"> = {
    now,
    ...(anchors.pem ? { trustAnchorsPem: anchors.pem } : {}),
    ...(anchors.error ? { trustAnchorsError: anchors.error } : {}),
    ...(history ? { history } : {}),
  };
  let checks = await Promise.all(
    applicable.map((c) => early.result(c) ?? runOne(c, doc, base, checkTimeoutMs)),
  );

  // Findings resting on OCR'd text pass through the one OCR-uncertainty rule (checks/ocr-review.ts).
  if (ocr.pages.length > 0) {
    const reviewStarted = performance.now();
    const review = await reviewOcrFindings(doc, checks, {
      reread: (page, bbox, factor) => ocr.reread(page, bbox, factor),
      rerun: async (ids, model) => {
        sharePixels(doc, model);
        const again = registry.filter((c) => ids.includes(c.id));
        return Promise.all(again.map((c) => runOne(c, model, base, checkTimeoutMs)));
      },
    });
    checks = review.results;
    if (review.rereads || review.unverified || review.dropped.length || review.confirmed) {
      log.info(
        {
          rereads: review.rereads,
          dropped: review.dropped.map((f) => f.code),
          unverified: review.unverified,
          confirmed: review.confirmed,
          ms: Math.round(performance.now() - reviewStarted),
        },
        "OCR'd findings reviewed",
      );
    }
  }
  for (const c of checks) {
    log.info({ check: c.checkId, outcome: c.outcome, severity: c.severity, ms: c.durationMs }, c.summary);
  }

  const discovered = [
    ...new Set([
      ...documentFacts(doc),
      ...(ocr.scannedPages.length > 0 ? ["scanned"] : []),
      ...checks.flatMap((c) => c.discovered ?? []),
    ]),
  ];
  const decisive = checks.find((c) => c.authoritative);
  const authoritative: AuthoritativeInfo | undefined = decisive?.authoritative
    ? {
        checkId: decisive.checkId,
        trust: decisive.authoritative.trust,
        directive: decisive.authoritative.directive,
      }
    : undefined;

  // The detection's memory entry waits beside its results until the detection is remembered (terminal).
  if (history) {
    await writeStored(
      ctx.objects,
      ctx.bucket,
      MEMORY_ENTRY,
      { tenant: history.keys.id, entry: history.fingerprint.entry },
      input.detection,
    );
  }

  const textKey = keys.text(input.detection);
  const text = renderText(doc);
  await ctx.objects.put(ctx.bucket, textKey, text, { contentType: "text/plain; charset=utf-8" });

  let evidence: CheckStepResult["evidence"];
  if (opts.evidence !== false) {
    const manifest = await writeEvidence(doc, checks, {
      detection: input.detection,
      objects: ctx.objects,
      bucket: ctx.bucket,
      log,
      limits: {
        timeoutMs: Math.min(RENDER_DEFAULTS.timeoutMs, Math.max(1_000, Math.floor(stepMs / 4))),
        ...opts.evidence,
      },
    });
    log.info(
      {
        findings: manifest.findingsTotal,
        groups: manifest.groupsTotal,
        images: manifest.render?.images,
        bytes: manifest.render?.bytes,
        ms: manifest.render?.ms,
        notes: manifest.render?.notes.length ? manifest.render.notes : undefined,
      },
      "evidence stored",
    );
    evidence = {
      key: keys.evidence(input.detection),
      findingsTotal: manifest.findingsTotal,
      groupsTotal: manifest.groupsTotal,
      groups: manifest.groups,
      geometry: manifest.pages.flatMap((p) => (p.geometry ? [p.geometry] : [])),
    };
  }
  return {
    step: "check",
    checks,
    discovered,
    ...(authoritative ? { authoritative } : {}),
    textKey,
    ...(evidence ? { evidence } : {}),
    facts: producerFacts(doc),
  };
}

/**
 * The tenant memory's inputs (checks/history-matches/gather.ts): the document's fingerprint and the
 * tenant's earlier entries it may match, read once before the checks run. Undefined when the memory is off.
 */
async function gatherMemory(
  doc: DocumentModel,
  input: StepInput,
  ctx: StepContext,
  log: StepContext["log"],
): Promise<HistoryInput | undefined> {
  if (!ctx.memory || !input.document) return undefined;
  const started = performance.now();
  const keys = tenantKeys(ctx.memory.key, tenantOf(input.spec));
  const history = await gatherHistory(
    doc,
    {
      detection: input.detection,
      sha256: input.document.sha256,
      docType: input.spec.docType,
      at: ctx.clock.now().toISOString(),
    },
    keys,
    ctx.memory.store,
  );
  log.info(
    {
      earlier: history.earlier.length,
      cells: history.fingerprint.cells.length,
      ms: Math.round(performance.now() - started),
    },
    "tenant memory looked up",
  );
  return history;
}

/** The producer and creator the file names (Info first, then XMP), clipped, for a tenant's policy. */
function producerFacts(doc: DocumentModel): { producer?: string; creator?: string } {
  const clip = (s: string | undefined) => {
    const t = s?.replace(/\s+/g, " ").trim();
    return t ? t.slice(0, 200) : undefined;
  };
  const producer = clip(doc.pdf?.info.Producer ?? doc.pdf?.xmp?.["pdf:Producer"]);
  const creator = clip(doc.pdf?.info.Creator ?? doc.pdf?.xmp?.["xmp:CreatorTool"]);
  return { ...(producer ? { producer } : {}), ...(creator ? { creator } : {}) };
}
