/**
 * `node --import tsx bench/one-capture.ts ID…`: runs development captures (size 8) through the whole
 * pipeline and prints each one's score and its findings with their boxes and places (the corroboration
 * units of agent/score.ts), to see why two findings did or did not corroborate. Development part only.
 */
import { evaluate } from "./eval-harness.js";
import { capturesEvalSet } from "./eval-sets-captures.js";

const ids = process.argv.slice(2);
const { items } = await capturesEvalSet(undefined, 8, "dev");
const picked = items.filter((i) => ids.some((id) => i.id.includes(id)) && i.id.includes("dev-"));
const docs = await evaluate(picked, {});
for (const d of docs) {
  console.log(`${d.id} score ${d.score}`);
  for (const c of d.agentInput?.checks ?? [])
    for (const f of c.findings ?? [])
      if ((f.severity ?? 0) > 0)
        console.log(
          `  ${c.checkId} ${f.code} sev ${f.severity} p${f.page} bbox ${JSON.stringify(f.bbox)} ${JSON.stringify((f.evidence as Record<string, unknown> | undefined)?.pixelBox ?? "")}`,
        );
}
