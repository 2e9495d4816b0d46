import { setTimeout as sleep } from "node:timers/promises";
import pino, { type Logger } from "pino";
import type { Verdict } from "../core/verdict.js";
import { type AgentEngine, AgentError, type AgentInput, type AnalyzeContext } from "./engine.js";
import { LlmError, type LlmClient, type StructuredAnswer } from "./llm-client.js";
import { ANSWER_SCHEMA_NAME, buildPrompt, LlmAnswer } from "./llm-prompt.js";
import { combineVerdict, HYBRID, type HybridConstants } from "./llm-verdict.js";
import { analyzeWithRules } from "./rules-engine.js";
import { SCORING, type ScoringConstants } from "./score.js";

/**
 * The `llm` analysis engine: asks an OpenAI-compatible model (agent/llm-client.ts) for its reading of the
 * document and combines it with the rules engine's verdict (agent/llm-verdict.ts: 0.5 × rules + 0.5 × model,
 * floored at the rules score when the rules decided — proof or corroborated evidence — and kept below 50 when
 * they did not, so the model can neither argue a decision away nor decide alone).
 *
 * A failed model call (timeout, unreachable, HTTP error, refusal, malformed or schema-invalid output, empty
 * choice) is retried once; when the second attempt fails too, analyze throws an AgentError (`model_failed`)
 * whose message is the one-sentence agent_error. Falling back to the rules verdict is the step's decision
 * (DOCVERIFY_LLM_FALLBACK), not the engine's. Log lines carry the run id, never the text or the API key.
 */

export const LLM_ATTEMPTS = 2;

export interface LlmEngineOptions {
  client: LlmClient;
  /** Characters of the extracted text sent at most (DOCVERIFY_LLM_MAX_INPUT_CHARS). */
  maxInputChars: number;
  /** Pause before the retry (default 1000 ms). */
  retryDelayMs?: number;
  hybrid?: HybridConstants;
  scoring?: ScoringConstants;
}

const silent = pino({ level: "silent" });

/** "The model …" → "the model …" (leaves acronyms such as "HTTP" alone). */
function lowerFirst(sentence: string): string {
  return /^[A-Z][a-z]/.test(sentence) ? sentence.charAt(0).toLowerCase() + sentence.slice(1) : sentence;
}

function runLogger(run: AnalyzeContext | undefined, client: LlmClient): Logger {
  const parent = run?.log ?? silent;
  const bindings = parent.bindings();
  return parent.child({
    engine: "llm",
    model: client.model,
    endpoint: client.origin,
    ...(run && bindings.runId === undefined ? { runId: run.runId } : {}),
  });
}

export function createLlmEngine(opts: LlmEngineOptions): AgentEngine {
  const { client } = opts;
  const retryDelayMs = opts.retryDelayMs ?? 1000;
  const scoring = opts.scoring ?? SCORING;
  const hybrid = opts.hybrid ?? HYBRID;

  async function ask(
    messages: ReturnType<typeof buildPrompt>["messages"],
    log: Logger,
  ): Promise<StructuredAnswer<LlmAnswer>> {
    for (let attempt = 1; ; attempt++) {
      const started = Date.now();
      try {
        const answer = await client.complete({ messages, schemaName: ANSWER_SCHEMA_NAME, schema: LlmAnswer });
        log.info(
          {
            attempt,
            durationMs: Date.now() - started,
            finishReason: answer.finishReason,
            usage: answer.usage,
            modelScore: answer.value.fraud_score,
          },
          "model answered",
        );
        return answer;
      } catch (err) {
        if (!(err instanceof LlmError)) throw err;
        log.warn(
          {
            attempt,
            durationMs: Date.now() - started,
            code: err.code,
            status: err.status,
            error: err.message,
          },
          attempt < LLM_ATTEMPTS ? "model call failed; retrying once" : "model call failed",
        );
        if (attempt >= LLM_ATTEMPTS) {
          throw new AgentError(
            "model_failed",
            `The language model ${client.model} failed on both attempts; the last: ${lowerFirst(err.message)}`,
            { cause: err },
          );
        }
        if (retryDelayMs > 0) await sleep(retryDelayMs);
      }
    }
  }

  return {
    name: "llm",
    async analyze(input: AgentInput, run?: AnalyzeContext): Promise<Verdict> {
      const log = runLogger(run, client);
      const rules = analyzeWithRules(input, scoring);
      const prompt = buildPrompt(input, opts.maxInputChars);
      log.info(
        {
          checks: input.checks.length,
          textChars: prompt.text.totalChars,
          textCharsSent: prompt.text.shownChars,
          textTruncated: prompt.text.truncated,
          promptChars: prompt.messages.reduce((n, m) => n + m.content.length, 0),
          rulesScore: rules.verdict.fraudScore,
        },
        "asking the model",
      );
      const answer = await ask(prompt.messages, log);
      const verdict = combineVerdict(input, rules, answer.value, {
        hybrid,
        scoring,
        model: answer.model ?? client.model,
      });
      log.info(
        {
          fraudScore: verdict.fraudScore,
          rulesScore: rules.verdict.fraudScore,
          modelScore: answer.value.fraud_score,
        },
        "hybrid verdict ready",
      );
      return verdict;
    },
  };
}
