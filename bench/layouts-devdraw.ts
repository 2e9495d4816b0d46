import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describePdf, type Made, makeGenuine, makeTampered } from "../fixtures/layouts/make.js";
import {
  DEV_PRODUCERS,
  type GenuineSpec,
  type LayoutsPlan,
  layoutsPlan,
  type TamperSpec,
} from "../fixtures/layouts/plan.js";
import type { Producer } from "../fixtures/layouts/produce.js";
import {
  cacheKey,
  cacheRoot,
  type LayoutFixture,
  type LayoutsSetResult,
  limitPlan,
} from "../fixtures/layouts/set.js";

/**
 * Development draws of the generated layouts (`npm run eval -- --set layouts-devdraw --dev-draw N`): the
 * held-out plan of draw N (fresh seeds, fixtures/layouts/plan.ts) with ONLY the development producers —
 * wkhtmltopdf and TCPDF stay unseen. Draws 1-39 are reserved for held-out measurement and refused here, so a
 * document of a development draw may be opened, printed and debugged like one of layouts-dev.
 *
 * The fixtures are made by the same generator (makeGenuine/makeTampered) into the same cache folders
 * (cacheKey/cacheRoot) as `layouts-heldout --layouts-draw N` would make them. The scheduling below mirrors
 * fixtures/layouts/set.ts (which takes no plan and may not change: its content keys the fixture cache).
 */

/** The first draw that is not reserved for held-out measurement. */
export const FIRST_DEV_DRAW = 40;

/** The held-out plan of draw `draw` narrowed to the development producers; refuses the reserved draws. */
export function devDrawPlan(draw: number): LayoutsPlan {
  if (!Number.isInteger(draw) || draw < FIRST_DEV_DRAW)
    throw new Error(
      `--dev-draw must be a whole number from ${FIRST_DEV_DRAW}, got ${draw}: draws 1-${FIRST_DEV_DRAW - 1} are reserved for held-out measurement (layouts-heldout) and are never opened for development`,
    );
  const plan = layoutsPlan("heldout", draw);
  const genuine = plan.genuine.filter((g) => DEV_PRODUCERS.includes(g.producer));
  const ids = new Set(genuine.map((g) => g.id));
  return { genuine, tampered: plan.tampered.filter((t) => ids.has(t.originalId)) };
}

async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/** Generates (or reuses from the cache) a development draw. */
export async function devDrawSet(o: {
  draw: number;
  limit?: number;
  concurrency?: number;
  progress?: (line: string) => void;
}): Promise<LayoutsSetResult> {
  const started = performance.now();
  const plan = limitPlan(devDrawPlan(o.draw), o.limit);
  const { key, versions, producerKeys } = await cacheKey();
  const dir = path.join(cacheRoot(), key);
  const folder = (p: Producer) => path.join(dir, `${p}-${producerKeys[p]}`);
  for (const p of DEV_PRODUCERS) await mkdir(folder(p), { recursive: true });
  const byId = new Map<string, LayoutFixture>();
  const failed: LayoutsSetResult["failed"] = [];
  let generated = 0;
  let reused = 0;
  let done = 0;
  const total = plan.genuine.length + plan.tampered.length;
  const tag = `layouts-devdraw ${o.draw}`;

  const make = async (id: string, producer: Producer, fn: (out: string, work: string) => Promise<Made>) => {
    const at = folder(producer);
    const meta = path.join(at, `${id}.json`);
    const pdf = path.join(at, `${id}.pdf`);
    done++;
    if (existsSync(meta) && existsSync(pdf)) {
      const f = JSON.parse(await readFile(meta, "utf8")) as LayoutFixture;
      byId.set(id, { ...f, file: pdf, generatedMs: 0 });
      reused++;
      return;
    }
    const work = await mkdtemp(path.join(os.tmpdir(), "docverify-devdraw-"));
    const t0 = performance.now();
    try {
      const out = path.join(work, "out.pdf");
      const record = await fn(out, path.join(work, "w"));
      const fixture: LayoutFixture = {
        ...record,
        ...(await describePdf(out)),
        file: pdf,
        generatedMs: Math.round(performance.now() - t0),
      };
      await rename(out, pdf).catch(async () => writeFile(pdf, await readFile(out)));
      const tmpMeta = path.join(at, `.${id}.${process.pid}.json`);
      await writeFile(tmpMeta, JSON.stringify({ ...fixture, file: path.basename(pdf) }, null, 1));
      await rename(tmpMeta, meta);
      generated++;
      byId.set(id, fixture);
      o.progress?.(`${tag}: ${done}/${total} made ${id} in ${fixture.generatedMs} ms`);
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      failed.push({ id, error: msg });
      o.progress?.(`${tag}: ${done}/${total} FAILED ${id}: ${msg.slice(0, 300)}`);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  };

  const genuineById = new Map(plan.genuine.map((g) => [g.id, g]));
  const n = o.concurrency ?? 2;
  await pool(plan.genuine, n, (g) => make(g.id, g.producer, (out, work) => makeGenuine(g, out, work)));
  await pool(plan.tampered, n, (t: TamperSpec) => {
    const g = genuineById.get(t.originalId) as GenuineSpec;
    return make(t.id, g.producer, (out, work) => {
      const original = byId.get(g.id);
      if (!original) throw new Error(`its original ${g.id} could not be made`);
      return makeTampered(t, g, original, out, work);
    });
  });
  const order = [...plan.genuine.map((g) => g.id), ...plan.tampered.map((t) => t.id)];
  const fixtures = order.flatMap((id) => (byId.has(id) ? [byId.get(id) as LayoutFixture] : []));
  return {
    dir,
    key,
    versions,
    fixtures,
    failed,
    generated,
    reused,
    layouts: new Set(fixtures.filter((f) => f.label === "genuine").map((f) => f.layout)).size,
    ms: Math.round(performance.now() - started),
  };
}

/** `npx tsx bench/layouts-devdraw.ts 40`: generate a development draw into the cache (no scoring). */
if (import.meta.url === `file://${process.argv[1]}`) {
  const draw = Number(process.argv[2] ?? FIRST_DEV_DRAW);
  devDrawSet({ draw, progress: (l) => process.stderr.write(`${l}\n`) }).then(
    (r) =>
      process.stdout.write(
        `draw ${draw}: ${r.fixtures.length} fixtures, ${r.generated} generated, ${r.reused} reused, ${r.failed.length} failed in ${(r.ms / 1000).toFixed(0)} s; ${r.dir}\n`,
      ),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
