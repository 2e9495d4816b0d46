import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { componentLogger, type ProcessName, processLogger } from "./logging.js";

/** The raw lines a process logger writes. */
function lines(name: ProcessName, write: (log: ReturnType<typeof processLogger>) => void): string[] {
  const out: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split("\n")) if (l) out.push(l);
      cb();
    },
  });
  write(processLogger(name, "info", sink));
  return out;
}

describe("log fields", () => {
  it("name a part with `component` in every process, and the process with `process`", () => {
    for (const name of ["standalone", "operator", "api"] as const) {
      const [text = ""] = lines(name, (log) => componentLogger(log, "reconciler").info("hello"));
      expect(JSON.parse(text)).toMatchObject({
        service: "docverify",
        process: name,
        component: "reconciler",
        msg: "hello",
      });
      // One key, once: pino repeats a key a child sets again, so the process must not use it too.
      expect(text.match(/"component"/g)).toHaveLength(1);
      expect(text).not.toContain('"part"');
    }
  });
});

describe("file names in logs", () => {
  it("bidi overrides and zero-width characters are written as [U+XXXX] markers, in fields and messages", () => {
    const name = "invoice\u202Efdp.exe\u200B";
    const [text = ""] = lines("api", (log) => log.info({ filename: name }, `stored ${name}`));
    expect(text).not.toMatch(/[\u202a-\u202e\u200b-\u200f\u2066-\u2069\ufeff]/);
    expect(JSON.parse(text)).toMatchObject({
      filename: "invoice[U+202E]fdp.exe[U+200B]",
      msg: "stored invoice[U+202E]fdp.exe[U+200B]",
    });
  });
});
