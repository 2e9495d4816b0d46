import { ulid } from "ulid";
import type { AgentStepResult, CheckStepResult, StepInput } from "../core/detection.js";
import { keys } from "../core/detection.js";
import { DEFAULT_POLICY_REF, POLICY_SNAPSHOT } from "../core/detection-policy.js";
import type { DetectionPolicySpec } from "../core/policy.js";
import { failure } from "../core/failure-codes.js";
import { ObjectNotFoundError, type ObjectStore } from "../core/ports.js";
import type { StepContext } from "../core/step-context.js";
import { readStepResult } from "../core/step-results.js";
import { readStored } from "../core/stored.js";
import { Verdict } from "../core/verdict.js";
import { type AgentEngine, AgentError, type AgentInput } from "./engine.js";
import { type EngineSelection, selectEngine } from "./select-engine.js";

/** The agent reads at most this many characters of the extracted text. */
export const MAX_TEXT_CHARS = 200_000;
const MAX_ERROR_CHARS = 400;

/** A new agent run id: `run-` + a lowercase ULID. */
export function newRunId(now: number = Date.now()): string {
  return `run-${ulid(now).toLowerCase()}`;
}

/** One line of an error message, without a stack, ending in a full stop. */
function oneSentence(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  const line = (raw.split("\n")[0] ?? "")
    .trim()
    .slice(0, MAX_ERROR_CHARS)
    .replace(/[.!?:;,]$/, "");
  return line === "" ? "it gave no reason" : line;
}

/**
 * The first `maxChars` characters of a UTF-8 object, reading no more than 4 bytes per character of it
 * (a multi-byte character split across chunks is decoded whole).
 */
export async function readTextHead(
  objects: ObjectStore,
  bucket: string,
  key: string,
  maxChars: number = MAX_TEXT_CHARS,
): Promise<string> {
  const maxBytes = maxChars * 4;
  const stream = await objects.getStream(bucket, key);
  const decoder = new TextDecoder("utf-8");
  let text = "";
  let bytes = 0;
  try {
    for await (const chunk of stream) {
      const buf = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
      const part = buf.subarray(0, Math.max(0, maxBytes - bytes));
      bytes += part.length;
      text += decoder.decode(part, { stream: true });
      if (text.length >= maxChars || bytes >= maxBytes) break;
    }
    text += decoder.decode();
  } finally {
    stream.destroy();
  }
  const head = text.slice(0, maxChars);
  // Never end on half of a surrogate pair.
  return /[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head;
}

/**
 * What an engine is given for a detection: its declared facts, the check step's result, the head of its
 * text and its policy. The one place this is built: the agent step and a re-score under another policy
 * (agent/rescore.ts, the dry run) both use it, so a re-score sees exactly what the step saw.
 */
export function agentInputOf(
  spec: Pick<StepInput["spec"], "docType" | "region">,
  check: CheckStepResult,
  text: string,
  policy: DetectionPolicySpec | undefined,
): AgentInput {
  return {
    declaredDocType: spec.docType,
    region: spec.region,
    text,
    textTruncated: text.length >= MAX_TEXT_CHARS - 1,
    checks: check.checks,
    discovered: check.discovered,
    ...(check.evidence ? { groups: check.evidence.groups } : {}),
    ...(check.evidence?.geometry ? { geometry: check.evidence.geometry } : {}),
    ...(check.facts ? { facts: check.facts } : {}),
    ...(policy ? { policy } : {}),
  };
}

type Loaded<T> = { ok: true; value: T } | { ok: false; error: string };

async function loadCheckResult(input: StepInput, ctx: StepContext): Promise<Loaded<CheckStepResult>> {
  // An unavailable store throws: a crash, so the step is retried.
  const read = await readStepResult(ctx.objects, ctx.bucket, input.detection, "check");
  if (read.kind === "missing") {
    return {
      ok: false,
      error: `The check results of this detection are missing (no ${read.key} in the object store), so there is nothing to analyse; the check step must complete before the agent runs.`,
    };
  }
  if (read.kind === "invalid") {
    return {
      ok: false,
      error:
        read.problem === "not_json"
          ? `The check results in ${read.key} are not valid JSON, so they cannot be analysed.`
          : `The check results in ${read.key} do not have the expected shape (${read.at}: ${read.issue}), so they cannot be analysed.`,
    };
  }
  if (read.value.failure) {
    return {
      ok: false,
      error: `The check step failed with ${read.value.failure.code}, so there are no check results to analyse.`,
    };
  }
  return { ok: true, value: read.value };
}

/**
 * The policy the detection was admitted under (its snapshot, core/detection-policy.ts); undefined for the
 * default rules. A snapshot that is missing or damaged fails the step: scoring under other rules than the
 * ones recorded on the detection would make its score unreproducible.
 */
async function loadPolicy(
  input: StepInput,
  ctx: StepContext,
): Promise<Loaded<DetectionPolicySpec | undefined>> {
  const ref = input.policy;
  if (!ref || ref.name === DEFAULT_POLICY_REF.name) return { ok: true, value: undefined };
  const read = await readStored(ctx.objects, ctx.bucket, POLICY_SNAPSHOT, input.detection);
  if (read.kind === "ok" && read.value.name === ref.name && read.value.version === ref.version)
    return { ok: true, value: read.value };
  return {
    ok: false,
    error: `The snapshot of policy ${ref.name} v${ref.version} this detection was admitted under ${
      read.kind === "missing" ? "is missing" : read.kind === "invalid" ? read.reason : "names another version"
    } (${read.key}), so it cannot be scored under it.`,
  };
}

async function loadText(input: StepInput, ctx: StepContext, textKey: string | undefined): Promise<string> {
  const key = textKey ?? keys.text(input.detection);
  try {
    return await readTextHead(ctx.objects, ctx.bucket, key);
  } catch (err) {
    if (!(err instanceof ObjectNotFoundError)) throw err;
    ctx.log.warn({ detection: input.detection, key }, "no extracted text; analysing the check results alone");
    return "";
  }
}

/**
 * Runs one engine and validates its verdict; a failure is the one-sentence agent_error (an AgentError's
 * message as it is, any other exception summarised).
 */
async function produceVerdict(
  engine: AgentEngine,
  input: AgentInput,
  run: { runId: string; log: StepContext["log"] },
): Promise<{ ok: true; verdict: Verdict } | { ok: false; error: string }> {
  try {
    const produced = Verdict.safeParse(await engine.analyze(input, run));
    if (!produced.success) {
      const issue = produced.error.issues[0];
      return {
        ok: false,
        error: `The ${engine.name} agent engine produced an invalid verdict (${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}).`,
      };
    }
    return { ok: true, verdict: produced.data };
  } catch (err) {
    if (err instanceof AgentError) return { ok: false, error: err.message };
    return { ok: false, error: `The ${engine.name} agent engine failed: ${oneSentence(err)}.` };
  }
}

/**
 * The agent step: reads the check results and the extracted text, runs the configured engine and returns
 * the result for bin/ to store. Failures are values (`agent_failed` with a one-sentence `error`); only an
 * unavailable object store throws (a crash, which the reconciler retries). When the engine fails and a
 * fallback is configured (DOCVERIFY_LLM_FALLBACK=rules), the fallback's verdict is returned with `error`
 * kept, so the detection completes and still shows agent_error. `options.engine` (and `options.fallback`)
 * replace the configured engines (tests).
 */
export async function runAgentStep(
  input: StepInput,
  ctx: StepContext,
  options: { engine?: AgentEngine; fallback?: AgentEngine } = {},
): Promise<AgentStepResult> {
  const runId = newRunId(ctx.clock.now().getTime());
  const log = ctx.log.child({ detection: input.detection, step: "agent", runId });
  const selection: EngineSelection = options.engine
    ? { ok: true, engine: options.engine, fallback: options.fallback }
    : selectEngine(ctx.config);
  const engineName = selection.ok ? selection.engine.name : selection.name;
  const failed = (error: string): AgentStepResult => {
    log.warn({ error }, "agent failed");
    return { step: "agent", runId, engine: engineName, error, failure: failure("agent_failed") };
  };
  if (!selection.ok) return failed(selection.error.message);

  const checkResult = await loadCheckResult(input, ctx);
  if (!checkResult.ok) return failed(checkResult.error);
  const text = await loadText(input, ctx, checkResult.value.textKey);
  const policy = await loadPolicy(input, ctx);
  if (!policy.ok) return failed(policy.error);

  const agentInput = agentInputOf(input.spec, checkResult.value, text, policy.value);
  const run = { runId, log };
  const outcome = await produceVerdict(selection.engine, agentInput, run);
  if (outcome.ok) {
    log.info(
      {
        engine: engineName,
        fraudScore: outcome.verdict.fraudScore,
        documentTypeMatch: outcome.verdict.documentTypeMatch,
      },
      "verdict ready",
    );
    return { step: "agent", runId, engine: engineName, verdict: outcome.verdict };
  }
  const { fallback } = selection;
  if (!fallback) return failed(outcome.error);

  const rescued = await produceVerdict(fallback, agentInput, run);
  if (!rescued.ok)
    return failed(`${outcome.error.replace(/[.!?]$/, "")}; the ${fallback.name} fallback failed too.`);
  const error = `${outcome.error.replace(/[.!?]$/, "")}; the ${fallback.name} engine's verdict was used instead.`;
  log.warn({ error, fallback: fallback.name, fraudScore: rescued.verdict.fraudScore }, "agent fell back");
  return { step: "agent", runId, engine: fallback.name, verdict: rescued.verdict, error };
}
