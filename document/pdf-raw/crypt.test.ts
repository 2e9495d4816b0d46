import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument } from "../../fixtures/documents.js";
import { haveQpdf } from "../../fixtures/encrypted.js";
import { createCipheriv } from "node:crypto";
import { openSecurity, rc4 } from "./crypt.js";
import { openRawPdf } from "./document.js";
import { isOp, Lexer, Parser } from "./lexer.js";
import { get, isDict, type PdfDict, textOf } from "./objects.js";

describe("rc4", () => {
  it("matches the published test vectors", () => {
    const hex = (key: string, text: string) =>
      Buffer.from(rc4(Buffer.from(key, "latin1"), Buffer.from(text, "latin1"))).toString("hex");
    expect(hex("Key", "Plaintext")).toBe("bbf316e8d940af0ad3");
    expect(hex("Wiki", "pedia")).toBe("1021bf0420");
    expect(hex("Secret", "Attack at dawn")).toBe("45a01f645fc35b383552544b9bf5");
  });
});

/**
 * Two /Encrypt dictionaries qpdf 11 wrote (`--encrypt "" o 256`, random salts), chosen because ISO 32000-2
 * Algorithm 2.B ends exactly on its boundary round for them: the last byte of E equals round - 32, once for
 * the /U validation salt and once for the /UE key salt. `key` is the file key `qpdf --show-encryption-key`
 * printed for each, an oracle independent of our hash.
 */
const R6_BOUNDARY = [
  {
    name: "the /U validation hash",
    dict: "<< /CF << /StdCF << /AuthEvent /DocOpen /CFM /AESV3 /Length 32 >> >> /Filter /Standard /Length 256 /O <d8b4f0c2aa257ed4b1787cff7a4d94553d272e006670ce6e617be6050adaa2a476c0234072a1f835b907a5495cad6093> /OE <8bd20f39a4c3841d0b6ca1ece90b0d024e88dea4d35f5b8719da2efbfa3e70ef> /P -4 /Perms <e60f539c3b335a080e902789de5c359e> /R 6 /StmF /StdCF /StrF /StdCF /U <dd7b53d377beffd28ae3995c1f052b61659051570f6788c3dd40276f7b317fa39689ddf193e3363fb93358904ab3d1f1> /UE <291a275ef18e5a502afdf5e6c97d915796ed686721f284acd6d8273a86c62225> /V 5 >>",
    key: "3a4a7ecc0afe5ef1f74eae031e1c593ecd4cd0cd7dbaeb31c4ab83d7eb9c5743",
  },
  {
    name: "the /UE file-key hash",
    dict: "<< /CF << /StdCF << /AuthEvent /DocOpen /CFM /AESV3 /Length 32 >> >> /Filter /Standard /Length 256 /O <25792a9554b9e831ce118b658d94da13a904c4b6594bfaf91763cb8b3930499a38078b0b84832b1c5b358995ce03f13f> /OE <2e10db04071f6a114e1adc13aca9d7674ff3643f071b791549da5be44fed08a1> /P -4 /Perms <20fbdf98b479d480a4fbe28c9f914df8> /R 6 /StmF /StdCF /StrF /StdCF /U <c9048014e18ce17056e50c5d37488c02f78cc3c1234e9c0ed0e7bd28e22bc7a5073594c3d8583ea2daf4f54e410fb05b> /UE <5389999adfff0f82c197ebee5094994a622cfdabed691be86b955c5ebab26a79> /V 5 >>",
    key: "a3b06c26e85c7021075066b7e60915508b820805f66cba515a378cd6f800b385",
  },
];

describe("AES-256 (R6) key derivation on Algorithm 2.B's boundary round", () => {
  it.each(R6_BOUNDARY)("opens with the empty password and qpdf's file key ($name)", ({ dict, key }) => {
    const v = new Parser(new Lexer(Buffer.from(dict, "latin1"), 0)).value();
    if (isOp(v) || !isDict(v)) throw new Error("the dictionary did not parse");
    const security = openSecurity(v as PdfDict, undefined);
    expect(security).toMatchObject({ kind: "open", method: "AES-256" });
    if (security.kind !== "open") return;
    // A string encrypted with qpdf's key (fixed IV) must decrypt to its text.
    const iv = Buffer.alloc(16, 7);
    const c = createCipheriv("aes-256-cbc", Buffer.from(key, "hex"), iv);
    const sealed = Buffer.concat([iv, c.update("Invoice INV-2025-35413", "latin1"), c.final()]);
    expect(Buffer.from(security.decryptor.string(sealed, 7, 0)).toString("latin1")).toBe(
      "Invoice INV-2025-35413",
    );
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
