import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  chatCompletionsUrl,
  createLlmClient,
  LlmError,
  type LlmErrorCode,
  MAX_RESPONSE_BYTES,
  parseCompletion,
  responseJsonSchema,
  serverErrorMessage,
} from "./llm-client.js";
import { behaviours, type FakeLlmServer, startFakeLlmServer } from "./testdata/fake-llm-server.js";

const Answer = z.object({ score: z.int().min(0).max(100), note: z.string() });
const messages = [
  { role: "system" as const, content: "You rate things." },
  { role: "user" as const, content: "Rate this." },
];

let fake: FakeLlmServer;
beforeEach(async () => {
  fake = await startFakeLlmServer();
});
afterEach(async () => {
  await fake.close();
});

function client(overrides: Partial<Parameters<typeof createLlmClient>[0]> = {}) {
  return createLlmClient({
    baseUrl: fake.url,
    model: "fake-model",
    timeoutMs: 5000,
    maxTokens: 321,
    ...overrides,
  });
}

async function failure(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(LlmError);
    return err as LlmError;
  }
  throw new Error("expected the call to fail");
}

const answer = (value: unknown) => behaviours.sequence(() => ({ kind: "answer", answer: value }));

describe("createLlmClient: the request", () => {
  it("posts a Chat Completions request with a strict json_schema response format and the bearer key", async () => {
    fake.setBehaviour(answer({ score: 42, note: "fine" }));
    const result = await client({ apiKey: "sk-test-123" }).complete({
      messages,
      schemaName: "rating",
      schema: Answer,
    });
    expect(result.value).toEqual({ score: 42, note: "fine" });
    expect(result.model).toBe("fake-model");
    expect(result.finishReason).toBe("stop");
    expect(result.usage).toEqual({ promptTokens: 100, completionTokens: 50 });

    expect(fake.requests).toHaveLength(1);
    const [req] = fake.requests;
    expect(req?.problem).toBeUndefined();
    expect(req?.path).toBe("/v1/chat/completions");
    expect(req?.headers.authorization).toBe("Bearer sk-test-123");
    expect(req?.body).toEqual({
      model: "fake-model",
      messages,
      temperature: 0,
      max_tokens: 321,
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "rating",
          strict: true,
          schema: {
            type: "object",
            properties: {
              score: { type: "integer", minimum: 0, maximum: 100 },
              note: { type: "string" },
            },
            required: ["score", "note"],
            additionalProperties: false,
          },
        },
      },
    });
  });

  it("sends no Authorization header when no key is configured", async () => {
    fake.setBehaviour(answer({ score: 1, note: "x" }));
    await client().complete({ messages, schemaName: "rating", schema: Answer });
    expect(fake.requests[0]?.headers.authorization).toBeUndefined();
  });

  it("is refused by a server that requires a key it was not given, with the server's message", async () => {
    await fake.close();
    fake = await startFakeLlmServer({ apiKey: "sk-right" });
    const err = await failure(
      client({ apiKey: "sk-wrong-secret" }).complete({ messages, schemaName: "r", schema: Answer }),
    );
    expect(err.code).toBe("http_error");
    expect(err.status).toBe(401);
    expect(err.message).toBe("The model endpoint answered HTTP 401 (Incorrect API key provided).");
    expect(err.message).not.toContain("sk-wrong-secret");
  });
});

describe("createLlmClient: failures are typed, one sentence each", () => {
  const cases: [string, Parameters<FakeLlmServer["setBehaviour"]>[0], LlmErrorCode, RegExp][] = [
    [
      "HTTP 500 with an OpenAI-style error body",
      behaviours.httpError(500, "The server had an error while processing your request."),
      "http_error",
      /^The model endpoint answered HTTP 500 \(The server had an error while processing your request\)\.$/,
    ],
    [
      "HTTP 429",
      behaviours.httpError(429, "Rate limit reached for requests.", { retryAfterSeconds: 1 }),
      "http_error",
      /^The model endpoint answered HTTP 429 \(Rate limit reached for requests\)\.$/,
    ],
    [
      "a refusal",
      behaviours.refusal("I can't help with that."),
      "refusal",
      /^The model refused to analyse the document \("I can't help with that"\)\.$/,
    ],
    [
      "content that is not JSON",
      behaviours.malformed("Here you go: score 5"),
      "malformed_output",
      /^The model's answer is not valid JSON \(20 characters, finish_reason stop\)\.$/,
    ],
    [
      "content cut off at max_tokens",
      behaviours.malformed('{"score": 5, "no', "length"),
      "malformed_output",
      /cut off at max_tokens, so raise DOCVERIFY_LLM_MAX_TOKENS\)\.$/,
    ],
    [
      "JSON that breaks the schema",
      behaviours.schemaInvalid({ score: 250 }),
      "schema_invalid",
      /^The model's answer does not match the required schema \(score: .*100.*; note: .*\)\.$/,
    ],
    ["no choices", behaviours.noChoices(), "empty_choice", /^The model endpoint answered without any choice/],
    [
      "an empty content",
      () => ({ kind: "content", content: null, finishReason: "content_filter" }),
      "empty_choice",
      /^The model returned an empty answer \(finish_reason content_filter\)\.$/,
    ],
  ];

  it.each(cases)("%s", async (_name, behaviour, code, message) => {
    fake.setBehaviour(behaviour);
    const err = await failure(client().complete({ messages, schemaName: "rating", schema: Answer }));
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
    expect(err.message.split("\n")).toHaveLength(1);
  });

  it("times out when the server answers later than the timeout", async () => {
    fake.setBehaviour(behaviours.slow(10_000));
    const err = await failure(
      client({ timeoutMs: 200 }).complete({ messages, schemaName: "rating", schema: Answer }),
    );
    expect(err.code).toBe("timeout");
    expect(err.message).toBe(
      `The model endpoint at ${new URL(fake.url).origin} did not answer within 0.2 seconds (see DOCVERIFY_LLM_TIMEOUT_SECONDS and DOCVERIFY_STEP_TIMEOUT_SECONDS).`,
    );
  });

  it("reports an endpoint nobody listens on as unreachable, naming the variable to check", async () => {
    const port = fake.port;
    await fake.close();
    const err = await failure(
      createLlmClient({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        model: "m",
        timeoutMs: 5000,
        maxTokens: 10,
      }).complete({ messages, schemaName: "rating", schema: Answer }),
    );
    fake = await startFakeLlmServer();
    expect(err.code).toBe("unreachable");
    expect(err.message).toBe(
      `The model endpoint at http://127.0.0.1:${port} could not be reached (ECONNREFUSED); check DOCVERIFY_LLM_URL and that the model server is running.`,
    );
  });

  it("refuses an answer larger than the response limit without reading it all", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(Buffer.alloc(MAX_RESPONSE_BYTES + 1024, 0x20));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    try {
      const err = await failure(
        createLlmClient({
          baseUrl: `http://127.0.0.1:${port}/v1`,
          model: "m",
          timeoutMs: 5000,
          maxTokens: 10,
        }).complete({ messages, schemaName: "rating", schema: Answer }),
      );
      expect(err.code).toBe("malformed_output");
      expect(err.message).toMatch(/larger than \d+ bytes/);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe("parseCompletion", () => {
  const body = (content: unknown, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ choices: [{ message: { content }, finish_reason: "stop" }], ...extra });

  it("accepts content wrapped in a Markdown code fence", () => {
    expect(parseCompletion(body('```json\n{"score": 3, "note": "n"}\n```'), Answer).value).toEqual({
      score: 3,
      note: "n",
    });
  });

  it("calls a body that is not JSON, or not a completion, malformed without quoting it", () => {
    const notJson = (() => {
      try {
        parseCompletion("<html>secret document words</html>", Answer);
      } catch (err) {
        return err as LlmError;
      }
    })();
    expect(notJson?.code).toBe("malformed_output");
    expect(notJson?.message).not.toContain("secret");

    expect(() => parseCompletion(JSON.stringify({ choices: "none" }), Answer)).toThrow(
      /not a Chat Completions response \(choices: /,
    );
  });

  it("never quotes the model's non-JSON content in its message", () => {
    try {
      parseCompletion(body("Account 4123 4567 belongs to Jane Doe"), Answer);
      throw new Error("expected a failure");
    } catch (err) {
      expect((err as LlmError).code).toBe("malformed_output");
      expect((err as Error).message).not.toContain("Jane");
    }
  });
});

describe("helpers", () => {
  it("appends /chat/completions to the base URL, keeping a query string", () => {
    expect(chatCompletionsUrl("http://vllm:8000/v1").href).toBe("http://vllm:8000/v1/chat/completions");
    expect(chatCompletionsUrl("http://vllm:8000/v1/").href).toBe("http://vllm:8000/v1/chat/completions");
    expect(chatCompletionsUrl("https://x.openai.azure.com/openai/v1?api-version=preview").href).toBe(
      "https://x.openai.azure.com/openai/v1/chat/completions?api-version=preview",
    );
  });

  it("extracts and truncates the server's error message", () => {
    expect(serverErrorMessage(JSON.stringify({ error: { message: "Model not found." } }))).toBe(
      "Model not found",
    );
    expect(serverErrorMessage(JSON.stringify({ error: "bad gateway" }))).toBe("bad gateway");
    expect(serverErrorMessage(JSON.stringify({ detail: "Not authenticated" }))).toBe("Not authenticated");
    expect(serverErrorMessage("upstream\nconnect error")).toBe("upstream connect error");
    const long = serverErrorMessage(JSON.stringify({ error: { message: "x".repeat(1000) } }));
    expect(long).toHaveLength(200);
    expect(long.endsWith("…")).toBe(true);
  });

  it("derives the response JSON schema without a $schema key", () => {
    const schema = responseJsonSchema(Answer);
    expect(schema).not.toHaveProperty("$schema");
    expect(schema.type).toBe("object");
  });
});
