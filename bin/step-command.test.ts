import { existsSync } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { writeTerminationMessage } from "./step-command.js";

describe("writeTerminationMessage", () => {
  it("replaces the content of the termination-message file the kubelet created", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-termlog-"));
    const file = path.join(dir, "termination-log");
    await writeFile(file, "an older and longer message than the new one");
    writeTerminationMessage(file, '{"ok":true}');
    expect(await readFile(file, "utf8")).toBe('{"ok":true}');
  });

  it("creates nothing when the file does not exist (not in a Pod)", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-termlog-"));
    const file = path.join(dir, "termination-log");
    writeTerminationMessage(file, '{"ok":true}');
    expect(existsSync(file)).toBe(false);
  });
});
