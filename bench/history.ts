/**
 * `npm run bench:history [-- --sizes 1000,100000 --runs 240]` (or BENCH_HISTORY_SIZES / BENCH_HISTORY_RUNS):
 * what the tenant memory (issue 23) adds to the check step, at a given number of remembered documents of one
 * tenant: the time of the real code path (fingerprint, the bounded lookups through the real adapter on the
 * standalone object store, the decision: gatherHistory and history.matches), p50/p95 over `runs` lookups of
 * new documents, and the memory's size on disk (objects, folders, bytes, per 1,000 documents).
 *
 * The memory holds three kinds of entries:
 * - real ones: a genuine Ghostscript statement and 12 other holders' statements of its template, rendered,
 *   checked and remembered through the adapter;
 * - derived ones (5 %, the probes' template and claimed issuer: one big bank): the real fingerprint of a
 *   holder's statement whose text runs are re-generated (other digits in every run that has digits: amounts,
 *   dates, account numbers; another holder's name), so their LSH bands, identifiers and groups are what
 *   genuine statements of that template give, without rendering 100,000 PDFs;
 * - synthetic ones (95 %): random LSH bands, file hashes and identifiers, spread over 300 other templates and
 *   issuers (other banks' documents share no band with the probes).
 * The derived and synthetic entries are written straight into the local object store's layout (a tar stream
 * unpacked by `tar -x`; the adapter's put fsyncs every object, and filling 100,000 through it took more than
 * 35 minutes). The filled store is kept under ~/.cache/docverify/history-bench/<key>/ (the key hashes the
 * sources that decide its content) and reused; BENCH_HISTORY_NO_CACHE=1 fills a temporary one.
 *
 * The probes are new documents (never remembered): the renamed statement (matches the original), fresh
 * holders' statements of the template (rendered), fresh derived statements (template only), and remembered
 * derived statements with one amount changed (match: same_document_other_values).
 */

import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fingerprint } from "../checks/history-matches/fingerprint.js";
import { gatherHistory } from "../checks/history-matches/gather.js";
import { historyMatchesCheck } from "../checks/history-matches/history-matches.js";
import { type TenantKeys, tenantKeys } from "../checks/history-matches/keys.js";
import { type MemoryEntry, memoryKeys } from "../core/tenant-memory.js";
import type { DocumentModel } from "../document/model.js";
import type { TextRun } from "../document/page-layout.js";
import { buildDocumentModel } from "../document/pdf-model.js";
import { buildDocument } from "../fixtures/real-producer/content.js";
import type { RpDoc } from "../fixtures/real-producer/model.js";
import { produce } from "../fixtures/real-producer/produce.js";
import { sameTemplateStatement } from "../fixtures/same-template.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createObjectStoreMemory } from "../platform/memory/object-store-memory.js";

const arg = (name: string, env: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : (process.env[env] ?? dflt);
};
const SIZES = arg("sizes", "BENCH_HISTORY_SIZES", "1000,100000").split(",").map(Number);
const RUNS = Number(arg("runs", "BENCH_HISTORY_RUNS", "240"));
const NO_CACHE = process.env.BENCH_HISTORY_NO_CACHE === "1";
/** Measures a cached store whose fill was stopped (its size is the entries it holds), instead of refilling. */
const PARTIAL = process.env.BENCH_HISTORY_PARTIAL === "1";
const KEY = new TextEncoder().encode("bench-memory-key-0123456789abcdef0123");
const TENANT = "bench-tenant";
const BUCKET = "docverify";
/**
 * Bump when the fill below or the adapter's layout changes what is written (the cache key also hashes the
 * sources that decide the entries and their paths; 4: group members' markers sharded).
 */
const FILL_VERSION = "4";
/** One remembered document in this many is a derived statement of the probes' template. */
const DERIVED_EVERY = 20;
const REMEMBERED_HOLDERS = 12;
const FRESH_HOLDERS = 6;

const log = (s: string) => process.stderr.write(`${s}\n`);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

async function renderAll(dir: string): Promise<Map<string, Uint8Array>> {
  const base = buildDocument(7, "bank_statement", "GB");
  const holder = (seed: number): RpDoc => sameTemplateStatement(base, seed);
  const docs: [string, RpDoc][] = [
    ["original", base],
    ["renamed", { ...base, recipient: { ...base.recipient, name: "Jane Other" } }],
    ...Array.from({ length: REMEMBERED_HOLDERS }, (_, i): [string, RpDoc] => [
      `holder-${i}`,
      holder(200 + i),
    ]),
    ...Array.from({ length: FRESH_HOLDERS }, (_, i): [string, RpDoc] => [`fresh-${i}`, holder(300 + i)]),
  ];
  const rendered = new Map<string, Uint8Array>();
  for (let i = 0; i < docs.length; i += 2) {
    await Promise.all(
      docs.slice(i, i + 2).map(async ([name, doc]) => {
        const file = path.join(dir, `${name}.pdf`);
        await produce(doc, path.join(dir, name), file, {
          family: "ghostscript",
          tz: "UTC",
          at: doc.issuedOn,
        });
        rendered.set(name, new Uint8Array(await readFile(file)));
      }),
    );
  }
  // In the plan's order, not the renders' finishing order: a cached fill and a later run's probes must pick
  // the same holder for a derived statement.
  return new Map(docs.map(([name]) => [name, rendered.get(name) as Uint8Array]));
}

const modelOf = (bytes: Uint8Array) =>
  buildDocumentModel({
    bytes,
    contentType: "application/pdf",
    filename: "statement.pdf",
    declaredContentType: null,
    declaredDocType: "bank_statement",
    region: "GB",
  });

const rnd = () => randomBytes(16).toString("base64url").slice(0, 22);
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** A small seeded generator (mulberry32): the same seed gives the same derived statement. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const FIRST = ["Oliver", "Amira", "Jonas", "Priya", "Tomasz", "Grace", "Kwame", "Elena", "Hugo", "Mei"];
const LAST = [
  "Bennett",
  "Okafor",
  "Lindqvist",
  "Sharma",
  "Nowak",
  "Hughes",
  "Mensah",
  "Rossi",
  "Moreau",
  "Chen",
];

/**
 * Another statement of the same template, from a rendered one: every text run with digits gets other digits
 * (amounts, dates, account numbers, sort codes), the holder's name another name; `change` alters one more
 * amount (the same statement with one value edited). The fingerprint reads only the runs and page text.
 */
function derived(
  model: DocumentModel,
  holder: string | undefined,
  seed: number,
  change = false,
): DocumentModel {
  const r = prng(seed);
  const name = `${FIRST[Math.floor(r() * FIRST.length)]} ${LAST[Math.floor(r() * LAST.length)]}`;
  const pdf = model.pdf;
  if (!pdf) return model;
  let edited = !change;
  const pages = pdf.pages.map((p) => {
    if (!p.layout) return p;
    const runs = p.layout.runs.map((run): TextRun => {
      let text = run.text.replace(/\d/g, () => String(Math.floor(r() * 10)));
      if (holder && run.text.trim() === holder) text = name;
      if (!edited && /^\s*[£$€]?\d[\d,]*\.\d\d\s*$/.test(text)) {
        text = text.replace(/\d(?=\.)/, (d) => String((Number(d) + 1) % 10));
        edited = true;
      }
      return { ...run, text };
    });
    return { ...p, text: runs.map((x) => x.text).join(" "), layout: { ...p.layout, runs } };
  });
  return { ...model, pdf: { ...pdf, pages } };
}

/** A ustar header and body for one regular file (GNU tar creates the folders on the way). */
function tarFile(name: string, body: Buffer): Buffer {
  const h = Buffer.alloc(512);
  let prefix = "";
  let file = name;
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf("/", 155);
    prefix = name.slice(0, cut);
    file = name.slice(cut + 1);
  }
  h.write(file, 0, 100);
  h.write("0000644\0", 100);
  h.write("0000000\0", 108);
  h.write("0000000\0", 116);
  h.write(`${body.length.toString(8).padStart(11, "0")}\0`, 124);
  h.write(
    `${Math.floor(Date.now() / 1000)
      .toString(8)
      .padStart(11, "0")}\0`,
    136,
  );
  h.write("        ", 148);
  h.write("0", 156);
  h.write("ustar\0", 257);
  h.write("00", 263);
  h.write(prefix, 345, 155);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  const pad = (512 - (body.length % 512)) % 512;
  return Buffer.concat([h, body, Buffer.alloc(pad)]);
}

interface Fill {
  holders: { model: DocumentModel; holder?: string }[];
  keys: TenantKeys;
  probe: MemoryEntry;
}

/**
 * Writes `n` entries of the tenant straight into the local store's layout (through `tar -x`): every
 * DERIVED_EVERY-th a derived statement of the probes' template (its real fingerprint), the rest synthetic.
 */
async function fill(root: string, n: number, f: Fill): Promise<void> {
  const tenantId = f.keys.id;
  const templates = Array.from({ length: 300 }, rnd);
  const issuers = Array.from({ length: 300 }, rnd);
  const tar = spawn("tar", ["-x", "-f", "-", "-C", root, "--no-same-owner", "--no-same-permissions", "-m"], {
    stdio: ["pipe", "inherit", "inherit"],
  });
  const closed = new Promise<void>((resolve, reject) =>
    tar.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`tar -x exited ${code}`)))),
  );
  const empty = Buffer.alloc(0);
  for (let i = 0; i < n; i++) {
    let entry: MemoryEntry;
    if (i % DERIVED_EVERY === 0) {
      const h = f.holders[(i / DERIVED_EVERY) % f.holders.length] as Fill["holders"][number];
      entry = fingerprint(
        derived(h.model, h.holder, i),
        { detection: `der-${i}`, sha256: rnd(), docType: "bank_statement", at: "t" },
        f.keys,
      ).entry;
    } else {
      const detection = `syn-${i.toString().padStart(7, "0")}-${randomBytes(3).toString("hex")}`;
      const template = templates[i % 300] as string;
      const issuer = issuers[(i * 7) % 300] as string;
      const idents = [rnd(), rnd()];
      entry = {
        ...f.probe,
        detection,
        file: rnd(),
        issuer,
        template,
        identifiers: idents.map((hash) => ({ kind: "account", hash, sealed: f.probe.templateSealed })),
        keys: [
          `f.${rnd()}`,
          ...Array.from({ length: 16 }, (_, b) => `c${b}.${rnd()}`),
          ...idents.map((h) => `i.${h}`),
          `t.${template}/${issuer}`,
          `it.${issuer}/${template}`,
        ],
      };
    }
    const parts = [
      tarFile(`${BUCKET}/${memoryKeys.entry(tenantId, entry.detection)}`, Buffer.from(JSON.stringify(entry))),
      tarFile(`${BUCKET}/${memoryKeys.owner(entry.detection)}`, Buffer.from(tenantId)),
      ...entry.keys.map((k) =>
        tarFile(`${BUCKET}/${memoryKeys.marker(tenantId, k, entry.detection)}`, empty),
      ),
    ];
    if (!tar.stdin.write(Buffer.concat(parts))) await new Promise((r) => tar.stdin.once("drain", r));
    if ((i + 1) % 10_000 === 0) log(`  ${i + 1} entries written`);
  }
  tar.stdin.end(Buffer.alloc(1024));
  await closed;
}

/** Objects, folders and bytes under `dir` (find(1): millions of files). */
async function sizeOf(dir: string): Promise<{ objects: number; folders: number; bytes: number }> {
  const out = { objects: 0, folders: 0, bytes: 0 };
  const find = spawn("find", [dir, "-printf", "%y %s\n"], { stdio: ["ignore", "pipe", "inherit"] });
  let rest = "";
  find.stdout.setEncoding("utf8");
  for await (const chunk of find.stdout) {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop() ?? "";
    for (const l of lines) {
      if (l.startsWith("d")) out.folders++;
      else if (l.startsWith("f")) {
        out.objects++;
        out.bytes += Number(l.slice(2));
      }
    }
  }
  return out;
}

/** The cache folder: keyed by the fill's version and the sources that decide what it writes. */
async function cacheDir(): Promise<string> {
  const h = createHash("sha256").update(FILL_VERSION);
  for (const f of [
    "checks/history-matches/fingerprint.ts",
    "checks/history-matches/keys.ts",
    "core/tenant-memory.ts",
    "document/text-lines.ts",
    "platform/local/object-store.ts",
    "fixtures/real-producer/content.ts",
  ])
    h.update(await readFile(path.join(import.meta.dirname, "..", f)));
  return path.join(os.homedir(), ".cache", "docverify", "history-bench", h.digest("hex").slice(0, 16));
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), "bench-history-"));
  const cache = NO_CACHE ? path.join(work, "cache") : await cacheDir();
  try {
    log("rendering the real statements (Ghostscript) …");
    const pdfs = await renderAll(path.join(work, "pdfs"));
    const models = new Map<string, DocumentModel>();
    for (const [name, bytes] of pdfs) models.set(name, await modelOf(bytes));
    const keys = tenantKeys(KEY, TENANT);
    const holders = [...models.entries()]
      .filter(([n]) => n.startsWith("holder-"))
      .map(([, model]) => {
        const holder = fingerprint(
          model,
          { detection: "x", sha256: "x", docType: "d", at: "t" },
          keys,
        ).holder;
        return { model, ...(holder ? { holder: holder.text } : {}) };
      });

    const rows: string[] = [];
    for (const wanted of SIZES) {
      let size = wanted;
      const root = path.join(cache, `store-${wanted}`);
      const doneFile = path.join(root, "filled.json");
      const objects = createLocalObjectStore(root);
      const memory = createObjectStoreMemory(objects, BUCKET);
      // The real entries, through the adapter (also when the store is cached: the probe entry is needed).
      let probeEntry: MemoryEntry | undefined;
      const reals: [string, Uint8Array][] = [...pdfs].filter(
        ([n]) => n === "original" || n.startsWith("holder-"),
      );
      let filled: { objects: number; folders: number; bytes: number; seconds: number } | undefined;
      if (existsSync(doneFile)) filled = JSON.parse(await readFile(doneFile, "utf8"));
      else if (PARTIAL && existsSync(root)) {
        log(`${wanted}: measuring the stopped fill in ${root} …`);
        size = (await readdir(path.join(root, BUCKET, "memory", keys.id, "e"))).length;
        filled = { ...(await sizeOf(path.join(root, BUCKET, "memory"))), seconds: -1 };
        log(`  it holds ${size} entries`);
      } else await rm(root, { recursive: true, force: true });
      await mkdir(root, { recursive: true });
      await objects.ensureBucket(BUCKET);
      for (const [name, bytes] of reals) {
        const input = { detection: `real-${name}`, sha256: sha(bytes), docType: "bank_statement", at: "t" };
        const fp = fingerprint(models.get(name) as DocumentModel, input, keys);
        if (!filled) await memory.remember(keys.id, fp.entry);
        probeEntry ??= fp.entry;
      }
      if (!filled) {
        const started = Date.now();
        log(`filling ${size - reals.length} entries into ${root} …`);
        await fill(root, size - reals.length, { holders, keys, probe: probeEntry as MemoryEntry });
        const seconds = Math.round((Date.now() - started) / 1000);
        log(`  filled in ${seconds} s; measuring the size …`);
        filled = { ...(await sizeOf(path.join(root, BUCKET, "memory"))), seconds };
        await writeFile(doneFile, JSON.stringify(filled));
      } else log(`${size}: reusing the filled store in ${root}`);

      // The probes: new documents, never remembered.
      const nDerived = Math.ceil((size - reals.length) / DERIVED_EVERY);
      const probeOf = (r: number): { kind: string; model: DocumentModel; sha256: string } => {
        switch (r % 4) {
          case 0:
            return {
              kind: "renamed",
              model: models.get("renamed") as DocumentModel,
              sha256: sha(pdfs.get("renamed") as Uint8Array),
            };
          case 1: {
            const name = `fresh-${r % FRESH_HOLDERS}`;
            return {
              kind: "fresh",
              model: models.get(name) as DocumentModel,
              sha256: sha(pdfs.get(name) as Uint8Array),
            };
          }
          case 2: {
            const h = holders[r % holders.length] as Fill["holders"][number];
            return {
              kind: "fresh-derived",
              model: derived(h.model, h.holder, 50_000_000 + r),
              sha256: rnd(),
            };
          }
          default: {
            const i = DERIVED_EVERY * ((r * 7919) % nDerived);
            const h = holders[(i / DERIVED_EVERY) % holders.length] as Fill["holders"][number];
            return { kind: "edited", model: derived(h.model, h.holder, i, true), sha256: rnd() };
          }
        }
      };
      const lookup = async (r: number) => {
        const p = probeOf(r);
        const t0 = performance.now();
        const history = await gatherHistory(
          p.model,
          { detection: `probe-${r}`, sha256: p.sha256, docType: "bank_statement", at: "t" },
          keys,
          memory,
        );
        const result = await historyMatchesCheck.run(p.model, { now: new Date(), history });
        return { ms: performance.now() - t0, kind: p.kind, earlier: history.earlier.length, result };
      };
      for (let r = 0; r < 8; r++) await lookup(1_000_000 + r); // warm-up (JIT), not counted
      const times: number[] = [];
      const matched = new Map<string, [number, number]>();
      let findings = 0;
      for (let r = 0; r < RUNS; r++) {
        const m = await lookup(r);
        times.push(m.ms);
        findings += m.result.findings.length;
        const seen = m.result.findings.some((f) =>
          ["same_document_other_values", "duplicate_submission"].includes(f.code),
        );
        const [a, b] = matched.get(m.kind) ?? [0, 0];
        matched.set(m.kind, [a + (seen ? 1 : 0), b + 1]);
      }
      log(`  ${size}: p50 ${pct(times, 50).toFixed(1)} ms, p95 ${pct(times, 95).toFixed(1)} ms`);
      const s = filled as NonNullable<typeof filled>;
      const per1000 = (x: number) => Math.round((x / size) * 1000);
      rows.push(
        [
          `${size.toLocaleString("en-US")}${size !== wanted ? ` (stopped fill of ${wanted.toLocaleString("en-US")})` : ""}`,
          pct(times, 50).toFixed(1),
          pct(times, 95).toFixed(1),
          String(times.length),
          s.objects.toLocaleString("en-US"),
          s.folders.toLocaleString("en-US"),
          `${(s.bytes / 1e6).toFixed(1)} MB`,
          `${per1000(s.objects).toLocaleString("en-US")} objects, ${(per1000(s.bytes) / 1e6).toFixed(2)} MB`,
          s.seconds >= 0 ? `${s.seconds} s` : "stopped",
          [...matched].map(([k, [a, b]]) => `${k} ${a}/${b}`).join(", "),
          (findings / RUNS).toFixed(1),
        ].join(" | "),
      );
    }
    process.stdout.write(
      "\nhistory.matches added time (fingerprint + gather + decide, new documents; local object store)\n" +
        `load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(" ")}; cache ${NO_CACHE ? "off" : cache}\n` +
        "remembered | p50 ms | p95 ms | lookups | objects | folders | bytes | per 1,000 documents | fill | matched (same document) by probe kind | findings/probe\n" +
        `${rows.join("\n")}\n`,
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
