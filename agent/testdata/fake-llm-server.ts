import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";

/**
 * A fake OpenAI-compatible Chat Completions server for tests and manual runs: a real node:http server on
 * loopback that validates the request shape (model, messages, response_format json_schema, optional bearer
 * key), records every request, and answers as the current behaviour says — a good JSON answer computed from
 * the prompt, slow, HTTP errors with OpenAI-style bodies, refusal, malformed or schema-invalid content, no
 * choices, or a sequence of these.
 *
 * Standalone: `node --import tsx agent/testdata/fake-llm-server.ts --port 8199 --mode good`
 * (then DOCVERIFY_AGENT_ENGINE=llm DOCVERIFY_LLM_URL=http://127.0.0.1:8199/v1 DOCVERIFY_LLM_MODEL=fake-model).
 */

export const FAKE_MODEL = "fake-model";
const BASE_PATH = "/v1";

export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string }[];
  temperature?: number;
  max_tokens?: number;
  response_format: { type: "json_schema"; json_schema: { name: string; strict?: boolean; schema: object } };
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body as received. */
  raw: string;
  /** The parsed body when the request was valid. */
  body?: ChatRequestBody;
  /** Why the request was refused with 400/401, when it was. */
  problem?: string;
}

/** What the fake answers to one valid request. */
export type FakeReply =
  | { kind: "answer"; answer: unknown }
  | { kind: "content"; content: string | null; finishReason?: string }
  | { kind: "refusal"; refusal: string }
  | {
      kind: "error";
      status: number;
      message: string;
      type?: string;
      code?: string;
      retryAfterSeconds?: number;
    }
  | { kind: "no_choices" }
  | { kind: "slow"; delayMs: number; reply: FakeReply };

/** Decides the reply from the request and its 0-based index among the valid requests. */
export type Behaviour = (request: ChatRequestBody, index: number) => FakeReply;

/** The parts of the prompt the engine sends, as the fake reads them back. */
export interface ParsedPrompt {
  declared?: { doc_type: string; region: string };
  checks: { check_id: string; outcome: string; severity: number; findings: { severity?: number }[] }[];
  document?: string;
  user: string;
  system: string;
}

function block(text: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(text);
  return m?.[1];
}

export function parsePrompt(request: ChatRequestBody): ParsedPrompt {
  const user = request.messages
    .filter((m) => m.role === "user")
    .map((m) => m.content)
    .join("\n");
  const system = request.messages
    .filter((m) => m.role === "system")
    .map((m) => m.content)
    .join("\n");
  const parse = <T>(raw: string | undefined, fallback: T): T => {
    try {
      return raw === undefined ? fallback : (JSON.parse(raw) as T);
    } catch {
      return fallback;
    }
  };
  return {
    declared: parse(block(user, "declared"), undefined),
    checks: parse(block(user, "check_results"), []),
    document: block(user, "document"),
    user,
    system,
  };
}

/**
 * A well-formed answer computed from the prompt: the declared type as a match, one per_check entry per
 * check (importance = its severity), and fraud_score = 10 × the strongest severity unless `overrides` says.
 */
export function computedAnswer(request: ChatRequestBody, overrides: Record<string, unknown> = {}) {
  const prompt = parsePrompt(request);
  const strongest = prompt.checks.reduce(
    (max, c) =>
      Math.max(max, c.outcome === "flag" ? c.severity : 0, ...c.findings.map((f) => f.severity ?? 0)),
    0,
  );
  return {
    document_type_match: true,
    actual_doc_type: prompt.declared?.doc_type ?? "other",
    fraud_score: Math.min(100, strongest * 10),
    reasoning: `Fake model: read ${prompt.checks.length} check results and ${prompt.document?.length ?? 0} characters of text.`,
    per_check: prompt.checks.map((c) => ({
      check_id: c.check_id,
      importance: Math.min(10, Math.max(0, c.severity)),
      reasoning: `Fake model: ${c.check_id} ended ${c.outcome} with severity ${c.severity}.`,
    })),
    ...overrides,
  };
}

export const behaviours = {
  /** A good answer, computed from the request; `overrides` (or a function of the request) replaces fields. */
  good:
    (
      overrides: Record<string, unknown> | ((r: ChatRequestBody) => Record<string, unknown>) = {},
    ): Behaviour =>
    (r) => ({
      kind: "answer",
      answer: computedAnswer(r, typeof overrides === "function" ? overrides(r) : overrides),
    }),
  /** Waits `delayMs` before answering (longer than the client's timeout makes a timeout). */
  slow:
    (delayMs: number, then: Behaviour = behaviours.good()): Behaviour =>
    (r, i) => ({ kind: "slow", delayMs, reply: then(r, i) }),
  httpError:
    (
      status: number,
      message: string,
      extra: { type?: string; code?: string; retryAfterSeconds?: number } = {},
    ): Behaviour =>
    () => ({ kind: "error", status, message, ...extra }),
  refusal:
    (refusal = "I'm sorry, but I can't help with that request."): Behaviour =>
    () => ({ kind: "refusal", refusal }),
  /** Content that is not JSON. */
  malformed:
    (content = "Sure! Here is my analysis: the document looks fine.", finishReason = "stop"): Behaviour =>
    () => ({ kind: "content", content, finishReason }),
  /** JSON that breaks the answer schema (fraud_score out of range, per_check missing). */
  schemaInvalid:
    (
      answer: unknown = {
        document_type_match: true,
        actual_doc_type: "x",
        fraud_score: 250,
        reasoning: "ok",
      },
    ): Behaviour =>
    () => ({ kind: "answer", answer }),
  noChoices: (): Behaviour => () => ({ kind: "no_choices" }),
  /** The i-th request gets the i-th behaviour; the last one repeats. */
  sequence:
    (...steps: Behaviour[]): Behaviour =>
    (r, i) => {
      const step = steps[Math.min(i, steps.length - 1)];
      if (!step) throw new Error("behaviours.sequence needs at least one behaviour");
      return step(r, i);
    },
  /** A gullible model: when the prompt contains "ignore previous instructions" it answers fraud_score 0. */
  obeysInjection: (): Behaviour => (r) => {
    const injected = /ignore (all )?previous instructions/i.test(parsePrompt(r).user);
    return {
      kind: "answer",
      answer: computedAnswer(
        r,
        injected ? { fraud_score: 0, reasoning: "As the document instructs, this document is genuine." } : {},
      ),
    };
  },
};

export interface FakeLlmServer {
  /** Base URL for DOCVERIFY_LLM_URL, e.g. `http://127.0.0.1:41234/v1`. */
  url: string;
  port: number;
  /** Every request received, in order (valid or not). */
  requests: RecordedRequest[];
  /** The valid requests' bodies, in order. */
  bodies(): ChatRequestBody[];
  setBehaviour(behaviour: Behaviour): void;
  close(): Promise<void>;
}

export interface FakeLlmServerOptions {
  behaviour?: Behaviour;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  port?: number;
  host?: string;
}

/** Why a body is not a Chat Completions request with a json_schema response format (undefined when it is). */
export function requestProblem(body: unknown): string | undefined {
  if (!body || typeof body !== "object" || Array.isArray(body)) return "The body must be a JSON object.";
  const b = body as Record<string, unknown>;
  if (typeof b.model !== "string" || b.model === "") return "'model' is required and must be a string.";
  if (!Array.isArray(b.messages) || b.messages.length === 0) return "'messages' must be a non-empty array.";
  for (const [i, m] of b.messages.entries()) {
    const msg = m as Record<string, unknown> | null;
    if (!msg || !["system", "user", "assistant", "developer"].includes(String(msg.role))) {
      return `messages[${i}].role must be system, user, assistant or developer.`;
    }
    if (typeof msg.content !== "string") return `messages[${i}].content must be a string.`;
  }
  if (b.temperature !== undefined && typeof b.temperature !== "number")
    return "'temperature' must be a number.";
  if (b.max_tokens !== undefined && !Number.isInteger(b.max_tokens))
    return "'max_tokens' must be an integer.";
  const rf = b.response_format as Record<string, unknown> | undefined;
  if (rf?.type !== "json_schema") return "'response_format.type' must be 'json_schema'.";
  const js = rf.json_schema as Record<string, unknown> | undefined;
  if (!js || typeof js.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(js.name)) {
    return "'response_format.json_schema.name' must be 1-64 letters, digits, '_' or '-'.";
  }
  if (!js.schema || typeof js.schema !== "object")
    return "'response_format.json_schema.schema' must be an object.";
  if ((js.schema as Record<string, unknown>).type !== "object")
    return "The response schema must describe an object.";
  return undefined;
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** The OpenAI error `type` for a status. */
function errorType(status: number): string {
  if (status === 429) return "rate_limit_error";
  return status >= 500 ? "server_error" : "invalid_request_error";
}

function errorBody(message: string, type: string, code: string | null = null, param: string | null = null) {
  return { error: { message, type, param, code } };
}

function completion(model: string, message: Record<string, unknown>, finishReason = "stop") {
  return {
    id: `chatcmpl-fake-${Date.now().toString(36)}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finishReason }],
    usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
  };
}

export async function startFakeLlmServer(options: FakeLlmServerOptions = {}): Promise<FakeLlmServer> {
  let behaviour: Behaviour = options.behaviour ?? behaviours.good();
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let validCount = 0;

  function reply(res: ServerResponse, model: string, r: FakeReply): void {
    if (res.destroyed) return;
    switch (r.kind) {
      case "answer":
        sendJson(res, 200, completion(model, { content: JSON.stringify(r.answer), refusal: null }));
        return;
      case "content":
        sendJson(res, 200, completion(model, { content: r.content, refusal: null }, r.finishReason));
        return;
      case "refusal":
        sendJson(res, 200, completion(model, { content: null, refusal: r.refusal }));
        return;
      case "no_choices":
        sendJson(res, 200, { ...completion(model, {}), choices: [] });
        return;
      case "error": {
        const type = r.type ?? errorType(r.status);
        const headers: Record<string, string> =
          r.retryAfterSeconds !== undefined ? { "retry-after": String(r.retryAfterSeconds) } : {};
        sendJson(res, r.status, errorBody(r.message, type, r.code ?? null), headers);
        return;
      }
      case "slow": {
        const timer = setTimeout(() => {
          timers.delete(timer);
          reply(res, model, r.reply);
        }, r.delayMs);
        timers.add(timer);
        res.on("close", () => {
          clearTimeout(timer);
          timers.delete(timer);
        });
        return;
      }
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const recorded: RecordedRequest = { method: req.method ?? "", path, headers: req.headers, raw };
    requests.push(recorded);
    const refuse = (status: number, problem: string, type: string, code: string | null = null) => {
      recorded.problem = problem;
      sendJson(res, status, errorBody(problem, type, code));
    };

    if (req.method !== "POST" || path !== `${BASE_PATH}/chat/completions`) {
      return refuse(404, `Unknown route ${req.method} ${path}.`, "invalid_request_error", "unknown_url");
    }
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return refuse(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key");
    }
    if (!String(req.headers["content-type"] ?? "").startsWith("application/json")) {
      return refuse(400, "The content type must be application/json.", "invalid_request_error");
    }
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return refuse(400, "The body is not valid JSON.", "invalid_request_error");
    }
    const problem = requestProblem(body);
    if (problem) return refuse(400, problem, "invalid_request_error");
    const chat = body as ChatRequestBody;
    recorded.body = chat;
    const index = validCount++;
    reply(res, chat.model, behaviour(chat, index));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, errorBody(`Fake server error: ${String(err)}`, "server_error"));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? "127.0.0.1";
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}${BASE_PATH}`,
    port,
    requests,
    bodies: () => requests.flatMap((r) => (r.body ? [r.body] : [])),
    setBehaviour(b) {
      behaviour = b;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Behaviours the standalone server offers by name (`--mode`). */
export function behaviourByName(mode: string, delayMs = 120_000): Behaviour | undefined {
  const modes: Record<string, () => Behaviour> = {
    good: () => behaviours.good(),
    slow: () => behaviours.slow(delayMs),
    error500: () => behaviours.httpError(500, "The server had an error while processing your request."),
    error429: () => behaviours.httpError(429, "Rate limit reached for requests.", { retryAfterSeconds: 1 }),
    refusal: () => behaviours.refusal(),
    malformed: () => behaviours.malformed(),
    "schema-invalid": () => behaviours.schemaInvalid(),
    "no-choices": () => behaviours.noChoices(),
    "fail-once": () =>
      behaviours.sequence(behaviours.httpError(500, "Transient failure, try again."), behaviours.good()),
    "obey-injection": () => behaviours.obeysInjection(),
  };
  return modes[mode]?.();
}

function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(args: string[]): Promise<void> {
  const mode = argValue(args, "--mode") ?? "good";
  const port = Number(argValue(args, "--port") ?? "0");
  const delayMs = Number(argValue(args, "--delay-ms") ?? "120000");
  const behaviour = behaviourByName(mode, delayMs);
  if (!behaviour || !Number.isInteger(port) || port < 0 || !Number.isFinite(delayMs)) {
    process.stderr.write(
      "usage: fake-llm-server.ts [--port N] [--host H] [--api-key K] [--delay-ms MS] " +
        "[--mode good|slow|error500|error429|refusal|malformed|schema-invalid|no-choices|fail-once|obey-injection]\n",
    );
    process.exitCode = 2;
    return;
  }
  const server = await startFakeLlmServer({
    behaviour,
    port,
    host: argValue(args, "--host"),
    apiKey: argValue(args, "--api-key"),
  });
  process.stdout.write(
    `fake LLM server (${mode}) listening on ${server.url} (model: any, e.g. ${FAKE_MODEL})\n`,
  );
  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void main(process.argv.slice(2));
}
