import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument } from "../../fixtures/documents.js";
import { haveQpdf } from "../../fixtures/encrypted.js";
import { rc4 } from "./crypt.js";
import { openRawPdf } from "./document.js";
import { get, textOf } from "./objects.js";

describe("rc4", () => {
  it("matches the published test vectors", () => {
    const hex = (key: string, text: string) =>
      Buffer.from(rc4(Buffer.from(key, "latin1"), Buffer.from(text, "latin1"))).toString("hex");
    expect(hex("Key", "Plaintext")).toBe("bbf316e8d940af0ad3");
    expect(hex("Wiki", "pedia")).toBe("1021bf0420");
    expect(hex("Secret", "Attack at dawn")).toBe("45a01f645fc35b383552544b9bf5");
  });
});

/** What a reader needs from the file: the Info title, the first page's content, the XMP packet. */
function readBack(bytes: Uint8Array) {
  const pdf = openRawPdf(bytes);
  const page = pdf.pages()[0];
  let content = "";
  try {
    content = page ? Buffer.from(pdf.decode(pdf.contents(page)[0]!.stream)).toString("latin1") : "";
  } catch {
    content = ""; // still encrypted: not a zlib stream
  }
  const meta = pdf.resolve(get(pdf.catalog(), "Metadata"));
  let xmp = "";
  try {
    xmp =
      meta && typeof meta === "object" && "kind" in meta && meta.kind === "stream"
        ? Buffer.from(pdf.decode(meta)).toString("utf8")
        : "";
  } catch {
    xmp = "";
  }
  return { pdf, title: textOf(get(pdf.info(), "Title")), content, xmp };
}

describe.skipIf(!haveQpdf())("the standard security handler against qpdf's encryption", () => {
  let dir: string;
  let plain: Uint8Array;
  let expected: ReturnType<typeof readBack>;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "docverify-crypt-"));
    plain = await makeDocument({ seed: 77, docType: "invoice", region: "GB" });
    writeFileSync(path.join(dir, "plain.pdf"), plain);
    expected = readBack(plain);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const qpdf = (args: string[]): Uint8Array => {
    const out = path.join(dir, `out-${args.join("_").replace(/[^\w-]/g, "")}.pdf`);
    execFileSync(
      "qpdf",
      [...args.slice(0, -1), "--", path.join(dir, "plain.pdf"), out].filter((a) => a !== "END"),
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    return new Uint8Array(readFileSync(out));
  };

  it.each([
    ["RC4 40-bit (R2)", ["--allow-weak-crypto", "--encrypt", "", "o", "40", "END"], "RC4 40-bit"],
    [
      "RC4 128-bit (R3)",
      ["--allow-weak-crypto", "--encrypt", "", "o", "128", "--use-aes=n", "END"],
      "RC4 128-bit",
    ],
    ["AES-128 (R4)", ["--encrypt", "", "o", "128", "--use-aes=y", "END"], "AES-128"],
    ["AES-256 (R5)", ["--encrypt", "", "o", "256", "--force-R5", "END"], "AES-256"],
    ["AES-256 (R6)", ["--encrypt", "", "o", "256", "END"], "AES-256"],
    [
      "AES-256 with object streams",
      ["--object-streams=generate", "--encrypt", "", "o", "256", "END"],
      "AES-256",
    ],
    [
      "RC4 with object streams",
      ["--allow-weak-crypto", "--object-streams=generate", "--encrypt", "", "o", "128", "--use-aes=n", "END"],
      "RC4 128-bit",
    ],
    [
      "AES-128, metadata in the clear",
      ["--encrypt", "", "o", "128", "--use-aes=y", "--cleartext-metadata", "END"],
      "AES-128",
    ],
  ])("opens %s with the empty user password and reads strings and streams", (_name, args, method) => {
    const got = readBack(qpdf(args));
    expect(got.pdf.security).toMatchObject({ kind: "open", method });
    expect(got.title).toBe(expected.title);
    expect(got.content).toBe(expected.content);
    expect(got.xmp).toBe(expected.xmp);
    expect(got.content).toMatch(/BT/);
  });

  it.each([
    ["RC4 40-bit", ["--allow-weak-crypto", "--encrypt", "pw", "o", "40", "END"]],
    ["RC4 128-bit", ["--allow-weak-crypto", "--encrypt", "pw", "o", "128", "--use-aes=n", "END"]],
    ["AES-128", ["--encrypt", "pw", "o", "128", "--use-aes=y", "END"]],
    ["AES-256", ["--encrypt", "pw", "o", "256", "END"]],
  ])("keeps a file that needs a user password (%s) locked", (_name, args) => {
    const got = readBack(qpdf(args));
    expect(got.pdf.security).toEqual({ kind: "locked", reason: "it needs a password to open" });
    expect(got.title).not.toBe(expected.title);
  });

  it("leaves an unencrypted file alone", () => {
    expect(openRawPdf(plain).security).toEqual({ kind: "none" });
  });
});

const PYHANKO = path.resolve(import.meta.dirname, "../../../shared/peer-suites/pyhanko");
describe.skipIf(!existsSync(PYHANKO))("pyHanko's encrypted test files (../shared)", () => {
  it("refuses certificate (Adobe.PubSec) encryption and pyHanko's password files, as pdfjs does", () => {
    const read = (f: string) => openRawPdf(new Uint8Array(readFileSync(path.join(PYHANKO, f)))).security;
    expect(read("minimal-pubkey-aes256.pdf")).toMatchObject({ kind: "locked", reason: /Adobe\.PubSec/ });
    for (const f of ["minimal-aes256.pdf", "minimal-rc4.pdf", "minimal-with-field-aes256.pdf"])
      expect(read(f), f).toEqual({ kind: "locked", reason: "it needs a password to open" });
    expect(read("minimal.pdf")).toEqual({ kind: "none" });
  });
});
