import { type Dispatcher, request } from "undici";
import { z } from "zod";

/**
 * A small OpenAI-compatible Chat Completions client for structured answers (vLLM, Ollama, Azure OpenAI v1,
 * LiteLLM, OpenAI itself): one POST to `<baseUrl>/chat/completions` with `temperature: 0` and a strict
 * `json_schema` response format derived from a zod schema, then the answer parsed and validated with that
 * schema. Every way the exchange can go wrong becomes an LlmError with a code and one sentence.
 *
 * It never logs, and its error messages never quote the prompt, the model's content or the API key.
 */

export type LlmErrorCode =
  | "timeout"
  | "unreachable"
  | "http_error"
  | "refusal"
  | "malformed_output"
  | "schema_invalid"
  | "empty_choice";

export class LlmError extends Error {
  override name = "LlmError";
  constructor(
    readonly code: LlmErrorCode,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = options?.status;
  }
  /** The HTTP status, for http_error. */
  readonly status: number | undefined;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface LlmClientOptions {
  /** OpenAI-compatible base URL ending before `/chat/completions`, e.g. `http://vllm:8000/v1`. */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string;
  /** Whole exchange (connect, answer, body) in milliseconds. */
  timeoutMs: number;
  /** `max_tokens` of the answer. */
  maxTokens: number;
  /** undici dispatcher (tests, proxies); the global one when absent. */
  dispatcher?: Dispatcher;
}

export interface StructuredRequest<T> {
  messages: ChatMessage[];
  /** Name of the schema in `response_format.json_schema.name` (letters, digits, `_`, `-`). */
  schemaName: string;
  schema: z.ZodType<T>;
}

export interface StructuredAnswer<T> {
  value: T;
  /** The model the server says answered. */
  model?: string;
  finishReason?: string;
  usage?: { promptTokens?: number; completionTokens?: number };
}

export interface LlmClient {
  readonly model: string;
  /** The endpoint's origin (scheme, host, port): safe to log and to quote in errors. */
  readonly origin: string;
  complete<T>(req: StructuredRequest<T>): Promise<StructuredAnswer<T>>;
}

/** Largest response body read; a bigger one is cut off and treated as malformed. */
export const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
const MAX_SERVER_MESSAGE_CHARS = 200;
const MAX_REFUSAL_CHARS = 200;
const MAX_SCHEMA_ISSUES = 3;

/** `<baseUrl>/chat/completions`, keeping a query string (e.g. an `api-version`) in place. */
export function chatCompletionsUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/chat/completions`;
  return url;
}

/** The JSON schema of a zod schema as strict structured output wants it (no `$schema` key). */
export function responseJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: "draft-7" }) as Record<
    string,
    unknown
  >;
  return rest;
}

/** One line, no trailing punctuation, at most `max` characters. */
function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  const cut = line.length > max ? `${line.slice(0, max - 1)}…` : line;
  return cut.replace(/[.!?:;,]+$/, "");
}

/** The server's own error message from an OpenAI-style (or similar) error body. */
export function serverErrorMessage(body: string): string {
  try {
    const json = JSON.parse(body) as unknown;
    if (json && typeof json === "object") {
      const o = json as Record<string, unknown>;
      const err = o.error;
      if (err && typeof err === "object" && typeof (err as { message?: unknown }).message === "string") {
        return clip((err as { message: string }).message, MAX_SERVER_MESSAGE_CHARS);
      }
      for (const candidate of [err, o.message, o.detail]) {
        if (typeof candidate === "string") return clip(candidate, MAX_SERVER_MESSAGE_CHARS);
      }
    }
  } catch {
    // not JSON: use the text itself
  }
  return clip(body, MAX_SERVER_MESSAGE_CHARS);
}

/** The first few zod issues as `path: message; path: message`. */
export function summariseIssues(error: z.ZodError): string {
  const parts = error.issues
    .slice(0, MAX_SCHEMA_ISSUES)
    .map((i) => `${i.path.join(".") || "(root)"}: ${clip(i.message, 120)}`);
  const more = error.issues.length - parts.length;
  return parts.join("; ") + (more > 0 ? ` (and ${more} more)` : "");
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_CLOSED",
]);

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

async function readCapped(body: AsyncIterable<Buffer | string>): Promise<{ text: string; cut: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    size += buf.length;
    if (size > MAX_RESPONSE_BYTES) return { text: "", cut: true };
    chunks.push(buf);
  }
  return { text: Buffer.concat(chunks).toString("utf8"), cut: false };
}

const ChatCompletion = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        message: z
          .object({
            content: z.string().nullish(),
            refusal: z.string().nullish(),
          })
          .nullish(),
      }),
    )
    .nullish(),
  usage: z
    .object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() })
    .nullish(),
});

/** Content some servers wrap in a Markdown code fence despite structured output. */
function unfence(content: string): string {
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(content);
  return m?.[1] ?? content;
}

/** Turns a Chat Completions answer body into the validated value, or throws the LlmError it deserves. */
export function parseCompletion<T>(body: string, schema: z.ZodType<T>): StructuredAnswer<T> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new LlmError(
      "malformed_output",
      `The model endpoint's answer is not valid JSON (${body.length} characters), so it is not a Chat Completions response.`,
    );
  }
  const completion = ChatCompletion.safeParse(json);
  if (!completion.success) {
    throw new LlmError(
      "malformed_output",
      `The model endpoint's answer is not a Chat Completions response (${summariseIssues(completion.error)}).`,
    );
  }
  const choice = completion.data.choices?.[0];
  if (!choice) {
    throw new LlmError(
      "empty_choice",
      "The model endpoint answered without any choice, so there is no answer.",
    );
  }
  const finishReason = choice.finish_reason ?? undefined;
  const refusal = choice.message?.refusal;
  if (typeof refusal === "string" && refusal.trim() !== "") {
    throw new LlmError(
      "refusal",
      `The model refused to analyse the document ("${clip(refusal, MAX_REFUSAL_CHARS)}").`,
    );
  }
  const content = choice.message?.content;
  if (typeof content !== "string" || content.trim() === "") {
    throw new LlmError(
      "empty_choice",
      `The model returned an empty answer (finish_reason ${finishReason ?? "not given"}).`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(unfence(content));
  } catch {
    const hint =
      finishReason === "length" ? "; it was cut off at max_tokens, so raise DOCVERIFY_LLM_MAX_TOKENS" : "";
    throw new LlmError(
      "malformed_output",
      `The model's answer is not valid JSON (${content.length} characters, finish_reason ${finishReason ?? "not given"}${hint}).`,
    );
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new LlmError(
      "schema_invalid",
      `The model's answer does not match the required schema (${summariseIssues(parsed.error)}).`,
    );
  }
  const usage = completion.data.usage;
  return {
    value: parsed.data,
    model: completion.data.model,
    finishReason,
    usage: usage
      ? { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens }
      : undefined,
  };
}

export function createLlmClient(opts: LlmClientOptions): LlmClient {
  const url = chatCompletionsUrl(opts.baseUrl);
  const origin = url.origin;
  const seconds = Math.round((opts.timeoutMs / 1000) * 10) / 10;

  return {
    model: opts.model,
    origin,
    async complete<T>(req: StructuredRequest<T>): Promise<StructuredAnswer<T>> {
      const body = JSON.stringify({
        model: opts.model,
        messages: req.messages,
        temperature: 0,
        max_tokens: opts.maxTokens,
        response_format: {
          type: "json_schema",
          json_schema: { name: req.schemaName, strict: true, schema: responseJsonSchema(req.schema) },
        },
      });
      const headers: Record<string, string> = {
        "content-type": "application/json",
        accept: "application/json",
      };
      if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;

      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, opts.timeoutMs);
      const timeoutError = () =>
        new LlmError(
          "timeout",
          `The model endpoint at ${origin} did not answer within ${seconds} ${seconds === 1 ? "second" : "seconds"} (see DOCVERIFY_LLM_TIMEOUT_SECONDS and DOCVERIFY_STEP_TIMEOUT_SECONDS).`,
        );
      let status: number;
      let text: string;
      try {
        const res = await request(url, {
          method: "POST",
          headers,
          body,
          signal: controller.signal,
          ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
        });
        status = res.statusCode;
        const read = await readCapped(res.body);
        if (read.cut) {
          throw new LlmError(
            "malformed_output",
            `The model endpoint's answer is larger than ${MAX_RESPONSE_BYTES} bytes, so it was not read.`,
          );
        }
        text = read.text;
      } catch (err) {
        if (err instanceof LlmError) throw err;
        if (timedOut) throw timeoutError();
        const code = errorCode(err);
        const why = code && NETWORK_CODES.has(code) ? code : "the connection failed";
        throw new LlmError(
          "unreachable",
          `The model endpoint at ${origin} could not be reached (${why}); check DOCVERIFY_LLM_URL and that the model server is running.`,
          { cause: err },
        );
      } finally {
        clearTimeout(timer);
      }
      if (status < 200 || status > 299) {
        const message = serverErrorMessage(text);
        throw new LlmError(
          "http_error",
          `The model endpoint answered HTTP ${status}${message ? ` (${message})` : ""}.`,
          { status },
        );
      }
      return parseCompletion(text, req.schema);
    },
  };
}
