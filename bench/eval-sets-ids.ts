import { type IdPart, idPlan } from "../fixtures/ids/plan.js";
import type { EvalItem } from "./eval-harness.js";
import type { LoadedSet } from "./eval-sets.js";

/**
 * The `ids` eval set: generated identity documents (fixtures/ids/: TD3 passport pages, TD1 cards, US
 * licences with a PDF417) captured as scans and phone photos, genuine and tampered (broken check digit,
 * printed field changed, MRZ field changed with the composite left stale, impossible dates, barcode and print
 * disagreeing). `held-out` (the default) has generation seeds, capture draws and a layout the checks were not
 * developed on; `dev` is the part they were. Each tampered copy names its genuine original, which is in the set.
 */
export function idsEvalSet(
  part: IdPart = "held-out",
  sizes?: { genuinePerKind?: number; tamperedPerKind?: number },
): LoadedSet {
  const items: EvalItem[] = idPlan(part, sizes).map((f) => ({
    id: f.id,
    set: "ids",
    label: f.label,
    ...(f.tamper ? { tamper: f.tamper, originalId: f.originalId } : {}),
    docType: "id_document",
    region: f.kind === "dl" ? "US" : "EU",
    variant: `${f.kind} ${f.capture}${f.pdf ? " (PDF)" : ""}, layout ${f.layout}`,
    filename: `${f.id}.${f.pdf ? "pdf" : "jpg"}`,
    contentType: f.pdf ? "application/pdf" : "image/jpeg",
    family: `${f.kind}-${f.capture}`,
    source: `fixtures/ids (${part})`,
    make: async () => (await f.make()).bytes,
  }));
  return { items, note: `part ${part}; files cached in ~/.cache/docverify/ids` };
}
