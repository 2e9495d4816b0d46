import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { forEachLine, MAX_LINE_CHARS, truncateUtf8 } from "./output-lines.js";

async function linesOf(chunks: (string | Buffer)[]): Promise<string[]> {
  const stream = new PassThrough();
  const lines: string[] = [];
  forEachLine(stream, (l) => lines.push(l));
  const ended = new Promise((r) => stream.on("end", r));
  for (const c of chunks) stream.write(c);
  stream.end();
  await ended;
  return lines;
}

describe("forEachLine", () => {
  it("splits across chunks, drops CR of CRLF and keeps a last line without a newline", async () => {
    expect(await linesOf(["one\ntw", "o\r\n\nthr", "ee"])).toEqual(["one", "two", "", "three"]);
  });

  it("joins a character split between chunks", async () => {
    const bytes = Buffer.from("né\n");
    expect(await linesOf([bytes.subarray(0, 2), bytes.subarray(2)])).toEqual(["né"]);
  });

  it("cuts a line longer than the limit and goes on with the next", async () => {
    const long = "x".repeat(MAX_LINE_CHARS + 10);
    const lines = await linesOf([long.slice(0, 40_000), long.slice(40_000), "\nnext\n"]);
    expect(lines.map((l) => l.length)).toEqual([MAX_LINE_CHARS, 4]);
    expect(lines[1]).toBe("next");
  });
});

describe("truncateUtf8", () => {
  it("keeps short text and cuts long text at a character boundary", () => {
    expect(truncateUtf8("abc", 3)).toBe("abc");
    expect(truncateUtf8("abcd", 3)).toBe("abc");
    expect(truncateUtf8("aéé", 4)).toBe("aé");
    expect(truncateUtf8("a😀", 4)).toBe("a");
    expect(truncateUtf8("a😀", 5)).toBe("a😀");
  });
});
