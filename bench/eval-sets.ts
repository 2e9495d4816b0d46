import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { DOC_TYPES, type DocType } from "../core/verdict.js";
import { corpusPlan } from "../fixtures/corpus.js";
import { realProducerSet, type SetResult } from "../fixtures/real-producer/set.js";
import { toolAvailability } from "../fixtures/real-producer/tools.js";
import type { Split } from "../fixtures/layouts/plan.js";
import { type LayoutsSetResult, layoutsSet } from "../fixtures/layouts/set.js";
import { layoutToolAvailability } from "../fixtures/layouts/tools.js";
import type { EvalItem } from "./eval-harness.js";
import { devDrawPlan, devDrawSet } from "./layouts-devdraw.js";

export { idsEvalSet } from "./eval-sets-ids.js";

/**
 * The labelled sets `npm run eval` scores, each reported on its own:
 * - synthetic: the repo's seeded corpus (fixtures/corpus.ts), with each tampered item's original scored too;
 * - realworld-dev: the genuine PDFs of ../shared/realworld-dev (manifest.json; checked against its sha256);
 * - real-producer: documents made by real producers and tampered with real tools (fixtures/real-producer/);
 * - debian-manuals: PDF manuals Debian ships (`npm run test:setup` installs their packages);
 * - realworld-dev-scans: the genuine scanned receipts of ../shared/realworld-dev-scans (JPEG, read in place).
 * A set that cannot be loaded here says why (`skipped`) instead of failing the others.
 */

export interface LoadedSet {
  items: EvalItem[];
  skipped?: string;
  /** One line about how the set was obtained (cache, generation time). */
  note?: string;
}

export const REPO_ROOT = path.resolve(import.meta.dirname, "..");
/** `../shared` beside the clone, as CI has it. */
export const SHARED_DIR = path.resolve(REPO_ROOT, "../shared");

/**
 * Synthetic tamper kinds that leave only provenance traces (metadata dates, an editor's name as producer):
 * by the rules of the score (docs/calibration.md, "Levels and corroboration") such evidence is an anomaly and
 * never decides alone, so these kinds are reported apart, like the real-producer source re-export.
 */
export const PROVENANCE_ONLY_KINDS: ReadonlySet<string> = new Set(["metadata_dates", "editor_metadata"]);

export function syntheticSet(o: {
  seed: number;
  genuine: number;
  tampered: number;
  images: boolean;
}): LoadedSet {
  const plan = corpusPlan({
    seed: o.seed,
    genuinePerCell: o.genuine,
    tamperedPerKind: o.tampered,
    images: o.images,
  });
  const items: EvalItem[] = [];
  for (const item of plan) {
    const { original, ...rest } = item;
    if (item.label === "tampered" && original) {
      const originalId = `${item.id}~original`;
      items.push({
        ...rest,
        set: "synthetic",
        originalId,
        ...(PROVENANCE_ONLY_KINDS.has(item.tamper ?? "") ? { exempt: true } : {}),
      });
      items.push({
        ...rest,
        id: originalId,
        set: "synthetic",
        label: "genuine",
        tamper: undefined,
        variant: "original of a tampered item",
        helper: true,
        make: original,
      });
    } else items.push({ ...rest, set: "synthetic" });
  }
  return { items, note: `seed ${o.seed}; each tampered item's original scored as a helper` };
}

interface ManifestEntry {
  file: string;
  source: string;
  label: string;
  declared_doc_type: string;
  region: string;
  sha256: string;
}

const asDocType = (v: string): DocType =>
  (DOC_TYPES as readonly string[]).includes(v) ? (v as DocType) : "other";

/** The genuine real-world PDFs, read from the shared folder (never copied into the repository). */
export async function realworldDevSet(shared = SHARED_DIR): Promise<LoadedSet> {
  const dir = path.join(shared, "realworld-dev");
  const manifest = path.join(dir, "manifest.json");
  if (!existsSync(manifest))
    return { items: [], skipped: `no ${manifest} (CI has ../shared beside the clone)` };
  const { documents } = JSON.parse(await readFile(manifest, "utf8")) as { documents: ManifestEntry[] };
  const items: EvalItem[] = documents.map((d) => {
    const file = path.join(dir, d.file);
    return {
      id: path.basename(d.file, ".pdf"),
      set: "realworld-dev",
      label: d.label === "tampered" ? "tampered" : "genuine",
      docType: asDocType(d.declared_doc_type),
      region: d.region,
      variant: d.source.split(":")[0] ?? "",
      filename: path.basename(d.file),
      contentType: "application/pdf",
      source: d.source,
      make: async () => {
        const bytes = await readFile(file);
        const sha = createHash("sha256").update(bytes).digest("hex");
        if (sha !== d.sha256)
          throw new Error(`${d.file}: sha256 ${sha} differs from the manifest's ${d.sha256}`);
        return new Uint8Array(bytes);
      },
    };
  });
  return { items };
}

/** Generates (or reuses from the cache) the real-producer fixtures. */
export async function realProducerEvalSet(
  subset: "full" | "test",
  progress?: (line: string) => void,
  draw = 1,
): Promise<LoadedSet & { generation?: SetResult }> {
  const tools = toolAvailability();
  if (!tools.ok) return { items: [], skipped: tools.reason };
  const generation = await realProducerSet({ subset, progress, draw });
  const items: EvalItem[] = generation.fixtures.map((f) => ({
    id: f.id,
    set: "real-producer",
    label: f.label,
    tamper: f.tamper?.kind,
    docType: f.docType,
    region: f.region,
    variant: `${f.family}${f.label === "genuine" ? `, TZ ${f.tz}${f.at ? "" : ", real clock"}` : `, ${f.tamper?.target.role} edit, arithmetic ${f.tamper?.arithmetic}`}`,
    filename: path.basename(f.file),
    contentType: "application/pdf",
    family: f.family,
    originalId: f.tamper?.originalId,
    exempt: f.tamper?.exempt,
    arithmetic: f.tamper?.arithmetic,
    source: f.file,
    make: async () => new Uint8Array(await readFile(f.file)),
  }));
  const failed = generation.failed.length
    ? `; ${generation.failed.length} could not be made: ${generation.failed.map((x) => `${x.id} (${x.error})`).join("; ")}`
    : "";
  return {
    items,
    generation,
    note: `${draw > 1 ? `draw ${draw}; ` : ""}cache ${generation.dir}: ${generation.reused} reused, ${generation.generated} generated in ${(generation.ms / 1000).toFixed(1)} s${failed}`,
  };
}

/** PDF manuals shipped by Debian packages (libtasn1-doc, shared-mime-info). */
export const DEBIAN_MANUALS = [
  "/usr/share/doc/libtasn1-doc/libtasn1.pdf",
  "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf",
];

export function debianManualsSet(): LoadedSet {
  const missing = DEBIAN_MANUALS.filter((f) => !existsSync(f));
  if (missing.length === DEBIAN_MANUALS.length)
    return { items: [], skipped: `none of ${DEBIAN_MANUALS.join(", ")}; run \`npm run test:setup\`` };
  const items: EvalItem[] = DEBIAN_MANUALS.filter((f) => existsSync(f)).map((file) => ({
    id: path.basename(file, ".pdf"),
    set: "debian-manuals",
    label: "genuine",
    docType: "other",
    region: "US",
    variant: path.basename(path.dirname(file)),
    filename: path.basename(file),
    contentType: "application/pdf",
    source: file,
    make: async () => new Uint8Array(await readFile(file)),
  }));
  return { items, skipped: missing.length ? `missing ${missing.join(", ")}` : undefined };
}

/**
 * The generated-layout sets (fixtures/layouts/): `layouts-dev` (development seeds on the development
 * producers) and `layouts-heldout` (held-out seeds on every producer, two producers never seen in
 * development). Generated on demand, cached; held-out items carry their group and are reported in
 * aggregate only (bench/eval-layouts.ts).
 */
export async function layoutsEvalSet(
  split: Split,
  o: { draw?: number; limit?: number; subset?: "full" | "test"; progress?: (line: string) => void } = {},
): Promise<LoadedSet & { generation?: LayoutsSetResult }> {
  const tools = layoutToolAvailability();
  if (!tools.ok) return { items: [], skipped: tools.reason };
  const generation = await layoutsSet({
    split,
    draw: o.draw,
    limit: o.limit,
    subset: o.subset,
    progress: o.progress,
  });
  const set = split === "dev" ? "layouts-dev" : "layouts-heldout";
  const items: EvalItem[] = generation.fixtures.map((f) => ({
    id: f.id,
    set,
    label: f.label,
    tamper: f.tamper?.kind,
    docType: f.docType,
    region: f.country,
    variant: `${f.producer}${f.label === "tampered" ? `, ${f.tamper?.target.role} edit, arithmetic ${f.tamper?.arithmetic}` : ""}`,
    filename: path.basename(f.file),
    contentType: "application/pdf",
    family: f.producer,
    originalId: f.tamper?.originalId,
    exempt: f.tamper?.exempt,
    arithmetic: f.tamper?.arithmetic,
    source: f.file,
    group:
      split === "heldout"
        ? f.heldoutProducer
          ? "held-out producers"
          : "held-out layouts on development producers"
        : undefined,
    make: async () => new Uint8Array(await readFile(f.file)),
  }));
  const failed = generation.failed.length
    ? split === "dev"
      ? `; ${generation.failed.length} could not be made: ${generation.failed.map((x) => `${x.id} (${x.error})`).join("; ")}`
      : `; ${generation.failed.length} could not be made`
    : "";
  return {
    items,
    generation,
    note: `${split === "heldout" ? `draw ${o.draw ?? 1}; ` : ""}${generation.layouts} distinct layouts; cache ${generation.dir}: ${generation.reused} reused, ${generation.generated} generated in ${(generation.ms / 1000).toFixed(1)} s${failed}`,
  };
}

/**
 * A development draw (bench/layouts-devdraw.ts): the held-out plan of draw N ≥ 40 with only the development
 * producers, fresh layouts that may be opened and debugged; reported like layouts-dev.
 */
export async function layoutsDevDrawEvalSet(o: {
  draw: number;
  limit?: number;
  progress?: (line: string) => void;
}): Promise<LoadedSet & { generation?: LayoutsSetResult }> {
  devDrawPlan(o.draw); // refuses a reserved draw before any tool is looked for
  const tools = layoutToolAvailability();
  if (!tools.ok) return { items: [], skipped: tools.reason };
  const generation = await devDrawSet(o);
  const items: EvalItem[] = generation.fixtures.map((f) => ({
    id: f.id,
    set: "layouts-devdraw",
    label: f.label,
    tamper: f.tamper?.kind,
    docType: f.docType,
    region: f.country,
    variant: `${f.producer}${f.label === "tampered" ? `, ${f.tamper?.target.role} edit, arithmetic ${f.tamper?.arithmetic}` : ""}`,
    filename: path.basename(f.file),
    contentType: "application/pdf",
    family: f.producer,
    originalId: f.tamper?.originalId,
    exempt: f.tamper?.exempt,
    arithmetic: f.tamper?.arithmetic,
    source: f.file,
    make: async () => new Uint8Array(await readFile(f.file)),
  }));
  const failed = generation.failed.length
    ? `; ${generation.failed.length} could not be made: ${generation.failed.map((x) => `${x.id} (${x.error})`).join("; ")}`
    : "";
  return {
    items,
    generation,
    note: `development draw ${o.draw}; ${generation.layouts} distinct layouts; cache ${generation.dir}: ${generation.reused} reused, ${generation.generated} generated in ${(generation.ms / 1000).toFixed(1)} s${failed}`,
  };
}

/**
 * The real scanned receipts of ../shared/realworld-dev-scans (SROIE 2019, all genuine: any score of 50 or
 * more is a false positive), read in place and checked against the manifest's sha256.
 */
export async function realworldDevScansSet(shared = SHARED_DIR): Promise<LoadedSet> {
  const dir = path.join(shared, "realworld-dev-scans");
  const manifest = path.join(dir, "manifest.json");
  if (!existsSync(manifest))
    return { items: [], skipped: `no ${manifest} (CI has ../shared beside the clone)` };
  const { documents } = JSON.parse(await readFile(manifest, "utf8")) as {
    documents: (ManifestEntry & { origin?: string; media_type?: string })[];
  };
  const items: EvalItem[] = documents.map((d) => {
    const file = path.join(dir, d.file);
    return {
      id: path.basename(d.file).replace(/\.[a-z]+$/i, ""),
      set: "realworld-dev-scans",
      label: "genuine",
      docType: asDocType(d.declared_doc_type),
      region: d.region,
      variant: "real scan",
      filename: path.basename(d.file),
      contentType: d.media_type === "image/png" ? "image/png" : "image/jpeg",
      source: d.origin ?? d.file,
      make: async () => {
        const bytes = await readFile(file);
        const sha = createHash("sha256").update(bytes).digest("hex");
        if (sha !== d.sha256)
          throw new Error(`${d.file}: sha256 ${sha} differs from the manifest's ${d.sha256}`);
        return new Uint8Array(bytes);
      },
    };
  });
  return { items, note: "genuine real scans: a score of 50 or more is a false positive" };
}
