/**
 * `npm run bench:history [-- --sizes 1000,100000 --runs 40]`: what the tenant memory (issue 23) adds to the
 * check step, at a given number of remembered documents of one tenant: the time of the real code path
 * (fingerprint, the bounded lookups on the standalone object store, the decision: gatherHistory and
 * history.matches) for real documents, p50/p95 over `runs`, and the memory's size on disk (objects, bytes,
 * per 1,000 documents).
 *
 * The memory is filled with real entries (a genuine Ghostscript statement and 12 other holders' statements of
 * its template, checked and remembered through the adapter) and synthetic ones up to the size, written
 * straight into the local object store's layout (the adapter's put fsyncs every object; filling 100,000
 * through it would take hours and measures nothing the lookup does). Synthetic entries have random LSH bands,
 * file hashes and identifiers, 5 % share the probe's template and claimed issuer (one big bank), the rest
 * spread over 300 templates and issuers: the probes' template groups are as full as a popular issuer's.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { gatherHistory } from "../checks/history-matches/gather.js";
import { historyMatchesCheck } from "../checks/history-matches/history-matches.js";
import { tenantKeys } from "../checks/history-matches/keys.js";
import { type MemoryEntry, memoryKeys } from "../core/tenant-memory.js";
import type { DocumentModel } from "../document/model.js";
import { buildDocumentModel } from "../document/pdf-model.js";
import { buildDocument } from "../fixtures/real-producer/content.js";
import type { RpDoc } from "../fixtures/real-producer/model.js";
import { produce } from "../fixtures/real-producer/produce.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createObjectStoreMemory } from "../platform/memory/object-store-memory.js";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
};
const SIZES = arg("sizes", "1000,100000").split(",").map(Number);
const RUNS = Number(arg("runs", "40"));
const KEY = new TextEncoder().encode("bench-memory-key-0123456789abcdef0123");
const TENANT = "bench-tenant";
const BUCKET = "docverify";

const log = (s: string) => process.stderr.write(`${s}\n`);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

async function renderAll(dir: string): Promise<Map<string, Uint8Array>> {
  const base = buildDocument(7, "bank_statement", "GB");
  const docs: [string, RpDoc][] = [
    ["original", base],
    ["renamed", { ...base, recipient: { ...base.recipient, name: "Jane Other" } }],
    ...Array.from({ length: 12 }, (_, i): [string, RpDoc] => [
      `holder-${i}`,
      {
        ...buildDocument(200 + i, "bank_statement", "GB"),
        issuer: base.issuer,
        typography: base.typography,
        contact: base.contact,
        legal: base.legal,
        issuedOn: base.issuedOn,
      },
    ]),
  ];
  const out = new Map<string, Uint8Array>();
  for (let i = 0; i < docs.length; i += 2) {
    await Promise.all(
      docs.slice(i, i + 2).map(async ([name, doc]) => {
        const file = path.join(dir, `${name}.pdf`);
        await produce(doc, path.join(dir, name), file, {
          family: "ghostscript",
          tz: "UTC",
          at: doc.issuedOn,
        });
        out.set(name, new Uint8Array(await readFile(file)));
      }),
    );
  }
  return out;
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

/** Writes `n` synthetic entries of the tenant straight into the local store's layout. */
async function fill(root: string, tenantId: string, n: number, probe: MemoryEntry): Promise<void> {
  const bucketDir = path.join(root, BUCKET);
  const templates = Array.from({ length: 300 }, rnd);
  const issuers = Array.from({ length: 300 }, rnd);
  const write = async (key: string, body: string) => {
    const file = path.join(bucketDir, ...key.split("/"));
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, body);
  };
  let done = 0;
  const one = async (i: number) => {
    const detection = `syn-${i.toString().padStart(7, "0")}-${randomBytes(3).toString("hex")}`;
    const popular = i % 20 === 0;
    const template = popular ? probe.template : (templates[i % 300] as string);
    const issuer = popular ? (probe.issuer ?? rnd()) : (issuers[(i * 7) % 300] as string);
    const idents = [rnd(), rnd()];
    const keys = [
      `f.${rnd()}`,
      ...Array.from({ length: 16 }, (_, b) => `c${b}.${rnd()}`),
      ...idents.map((h) => `i.${h}`),
      `t.${template}/${issuer}`,
      `it.${issuer}/${template}`,
    ];
    const entry: MemoryEntry = {
      ...probe,
      detection,
      file: rnd(),
      issuer,
      template,
      identifiers: idents.map((hash) => ({ kind: "account", hash, sealed: probe.templateSealed })),
      keys,
    };
    await write(memoryKeys.entry(tenantId, detection), JSON.stringify(entry));
    await write(memoryKeys.owner(detection), tenantId);
    for (const k of keys) await write(`${memoryKeys.index(tenantId, k)}${detection}`, "");
    if (++done % 10_000 === 0) log(`  ${done} synthetic entries written`);
  };
  const CONC = 32;
  let next = 0;
  await Promise.all(
    Array.from({ length: CONC }, async () => {
      while (next < n) await one(next++);
    }),
  );
}

async function sizeOf(dir: string): Promise<{ objects: number; folders: number; bytes: number }> {
  let objects = 0;
  let folders = 0;
  let bytes = 0;
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        folders++;
        await walk(p);
      } else {
        objects++;
        bytes += (await stat(p)).size;
      }
    }
  };
  await walk(dir);
  return { objects, folders, bytes };
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), "bench-history-"));
  try {
    log("rendering the real statements (Ghostscript) …");
    const pdfs = await renderAll(path.join(work, "pdfs"));
    const models = new Map<string, DocumentModel>();
    for (const [name, bytes] of pdfs) models.set(name, await modelOf(bytes));
    const keys = tenantKeys(KEY, TENANT);
    const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

    const rows: string[] = [];
    for (const size of SIZES) {
      const root = path.join(work, `store-${size}`);
      const objects = createLocalObjectStore(root);
      await objects.ensureBucket(BUCKET);
      const memory = createObjectStoreMemory(objects, BUCKET);
      // The real entries, through the adapter.
      let probeEntry: MemoryEntry | undefined;
      let real = 0;
      for (const [name, bytes] of pdfs) {
        if (name === "renamed") continue;
        const model = models.get(name) as DocumentModel;
        const h = await gatherHistory(
          model,
          { detection: `real-${name}`, sha256: sha(bytes), docType: "bank_statement", at: "t" },
          keys,
          memory,
        );
        await memory.remember(keys.id, h.fingerprint.entry);
        probeEntry ??= h.fingerprint.entry;
        real++;
      }
      const started = Date.now();
      log(`filling ${size - real} synthetic entries …`);
      await fill(root, keys.id, size - real, probeEntry as MemoryEntry);
      log(`  filled in ${Math.round((Date.now() - started) / 1000)} s`);

      // The probes: the renamed statement (matches the original) and each holder's statement as a new one.
      const probes = ["renamed", ...[...pdfs.keys()].filter((n) => n.startsWith("holder-"))];
      const times: number[] = [];
      let findings = 0;
      for (let r = 0; r < RUNS; r++) {
        const name = probes[r % probes.length] as string;
        const model = models.get(name) as DocumentModel;
        const t0 = performance.now();
        const history = await gatherHistory(
          model,
          {
            detection: `probe-${r}`,
            sha256: sha(pdfs.get(name) as Uint8Array),
            docType: "bank_statement",
            at: "t",
          },
          keys,
          memory,
        );
        const result = await historyMatchesCheck.run(model, { now: new Date(), history });
        times.push(performance.now() - t0);
        findings += result.findings.length;
      }
      log(`  ${size}: p50 ${pct(times, 50).toFixed(1)} ms, p95 ${pct(times, 95).toFixed(1)} ms; measuring the size …`);
      const s = await sizeOf(path.join(root, BUCKET, "memory"));
      const per1000 = (x: number) => Math.round((x / size) * 1000);
      rows.push(
        [
          size.toLocaleString("en-US"),
          pct(times, 50).toFixed(1),
          pct(times, 95).toFixed(1),
          s.objects.toLocaleString("en-US"),
          s.folders.toLocaleString("en-US"),
          `${(s.bytes / 1e6).toFixed(1)} MB`,
          `${per1000(s.objects).toLocaleString("en-US")} objects, ${(per1000(s.bytes) / 1e6).toFixed(2)} MB`,
          String(Math.round(findings / RUNS)),
        ].join(" | "),
      );
      await rm(root, { recursive: true, force: true });
    }
    process.stdout.write(
      "\nhistory.matches added time (gather + decide, real statements; local object store)\n" +
        "remembered | p50 ms | p95 ms | objects | folders | bytes | per 1,000 documents | findings/probe\n" +
        `${rows.join("\n")}\n`,
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
