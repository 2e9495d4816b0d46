import type { Figure } from "../../document/tables/cells.js";
import type { ReadLine, StructureScore, Table, TableColumn, TableRow } from "../../document/tables/reader.js";
import { LABELS } from "../../document/tables/vocabulary.js";
import { type NumberStyle, parseNumber } from "../../document/values/amounts.js";
import { type Ctx, confidenceOf, money, report, SLACK } from "./findings.js";
import { like } from "./ledger.js";

/**
 * Line items: quantity × unit price = line amount, read from the columns a header names (a discount
 * column subtracted, a tax-rate column allowing the gross amount), or, where no header names them, from
 * the figures of a row in order (a quantity before two amounts, a price per unit such as "24,26 ct/kWh",
 * "3 x" in the label, "420 kWh x 27.50p/kWh" in the label, hours × rate = amount as three figures).
 * A unit price printed rounded is allowed its rounding (20 × 2,77 = 55,46 when the price is 2,773).
 * The products of one table count only when most of them hold: otherwise its columns are no quantity
 * and price.
 */

/** How far a product may be off when its price is printed rounded to `decimals` (in cents) per unit. */
const roundingSlack = (qty: number, decimals: number) =>
  Math.max(SLACK, Math.ceil(Math.abs(qty) * 0.5 * 10 ** (2 - decimals)) + SLACK);

interface Product {
  /** line_item_mismatch, or tax_amount_mismatch for a tax breakdown's rows. */
  code?: "tax_amount_mismatch";
  row: TableRow | undefined;
  line: ReadLine;
  page: number;
  how: string;
  /** Every value the line may print (net, less a discount, gross). */
  expected: number[];
  slack: number;
  printed: Figure;
  inputs: Figure[];
}

const col = (t: Table, role: TableColumn["role"]) => t.columns.find((c) => c.role === role);

/** "420 kWh x 27.50p/kWh" or "30 days x £0.45" in a label: quantity × rate in cents. */
function labelProduct(label: string, ctx: Ctx): { cents: number; how: string } | undefined {
  const m = /(\d[\d.,]*)\s*(?:[A-Za-zäöü]+\s*)?[x×]\s*([£$€]?\s?\d[\d.,]*)\s*(p|ct|cents?|€|EUR)?\b/i.exec(
    label,
  );
  if (!m?.[1] || !m[2]) return undefined;
  const qty = parseNumber(m[1], ctx.style)?.value;
  const rate = parseNumber(m[2].replace(/[£$€\s]/g, ""), ctx.style)?.value;
  if (qty === undefined || rate === undefined) return undefined;
  const unit = (m[3] ?? "").toLowerCase();
  const centsPerUnit = unit === "p" || unit.startsWith("ct") || unit.startsWith("cent") ? rate : rate * 100;
  return { cents: qty * centsPerUnit, how: label.slice(m.index).trim() };
}

const labelQuantity = (label: string, ctx: Ctx) => {
  const q = /^(\d+(?:[.,]\d+)?)\s*[x×]\s+\S/.exec(label);
  return q?.[1] ? parseNumber(q[1], ctx.style)?.value : undefined;
};

/** Products of a table whose header names quantity and unit price. */
function namedProducts(table: Table, style: NumberStyle): Product[] {
  const qty = col(table, "quantity");
  const price = col(table, "unit_price");
  const total = col(table, "line_total") ?? col(table, "amount");
  if (!qty || !price || !total) return [];
  // No figure under the quantity column in any row: the quantities were drawn into the description's cell.
  const drawnIn = !table.rows.some((r) => r.figures[qty.index]);
  const discount = col(table, "discount");
  const taxRate = col(table, "tax_rate");
  const out: Product[] = [];
  for (const row of table.rows) {
    if (row.kind !== "entry" || row.unreadable) continue;
    const q = row.figures[qty.index] ?? (drawnIn ? quantityDrawnIn(row, qty, style) : undefined);
    const p = row.figures[price.index];
    const t = row.figures[total.index];
    if (!q || !p || !t || q.percent || !t.money) continue;
    const base = p.percent ? (q.cents * p.value) / 100 : q.value * p.cents;
    const variants = [base];
    const d = discount ? row.figures[discount.index] : undefined;
    if (d?.percent) variants.push(base * (1 - d.value / 100));
    else if (d) variants.push(base - Math.abs(d.cents));
    const r = taxRate ? row.figures[taxRate.index] : undefined;
    if (r && r.value > 0 && r.value < 100) variants.push(...variants.map((v) => v * (1 + r.value / 100)));
    out.push({
      row,
      line: row.lines[0] as ReadLine,
      page: row.page,
      how: `${q.text} × ${p.text}${d ? ` less ${d.text}` : ""}`,
      expected: variants.map(Math.round),
      slack: p.percent ? SLACK + 1 : roundingSlack(q.value, p.decimals),
      printed: t,
      inputs: [q, p, ...(d ? [d] : [])],
    });
  }
  return out;
}

/**
 * The quantity at the start of a row's description cell ("18 Support hours"), when the cell lies under the
 * quantity column's header: a header cell naming quantity and description together ("Units Description", split
 * by mergedHeaderCell) over cells that print them together, too close for a gap between them.
 */
function quantityDrawnIn(row: TableRow, qty: TableColumn, style: NumberStyle): Figure | undefined {
  for (const c of (row.lines[0] as ReadLine).cells) {
    if (c.figure || c.date || Math.min(c.box[2], qty.right) - Math.max(c.box[0], qty.left) <= 0) continue;
    const m = /^(\d{1,4}(?:[.,]\d{1,3})?)\s+\p{L}/u.exec(c.text.trim());
    const n = m?.[1] ? parseNumber(m[1], style) : undefined;
    if (!n || n.value <= 0) return undefined;
    return {
      cents: Math.round(n.value * 100),
      value: n.value,
      decimals: n.decimals,
      text: m?.[1] as string,
      money: false,
      box: c.box,
      page: row.page,
      confidence: c.confidence,
    };
  }
  return undefined;
}

/**
 * A tax breakdown (rate, taxable base, tax per row: "Taux | Base TVA | Montant TVA", "USt-Satz |
 * Nettobetrag | Steuer"): each tax is its rate of its base.
 */
function taxBreakdown(table: Table, lines = 0): Product[] {
  const base = col(table, "tax_base");
  // The column of tax amounts is the one whose figures are money: a header naming the tax ("BTW", "MwSt.")
  // may stand over the rate column too.
  const tax =
    table.columns.find(
      (c) =>
        c.role === "tax_amount" &&
        table.rows.some((r) => r.figures[c.index]?.money && !r.figures[c.index]?.percent),
    ) ?? col(table, "tax_amount");
  if (!base || !tax) return [];
  // A tax computed on each line, rounded there and added, differs from the rate of the base by up to half a
  // cent a line (docs/decisions.md "Support comes from the side the mismatch accuses").
  const slack = Math.max(SLACK + 1, Math.ceil(lines / 2));
  const out: Product[] = [];
  for (const row of table.rows) {
    if (row.unreadable) continue;
    const b = row.figures[base.index];
    const t = row.figures[tax.index];
    const rate = row.figures.find((f) => f?.percent);
    if (!b?.money || !t?.money || !rate || rate.value <= 0 || rate.value >= 100) continue;
    out.push({
      code: "tax_amount_mismatch",
      row,
      line: row.lines[0] as ReadLine,
      page: row.page,
      how: `${rate.text} of ${b.text}`,
      expected: [Math.round((b.cents * rate.value) / 100)],
      slack,
      printed: t,
      inputs: [b, rate],
    });
  }
  return out;
}

/** Products of a line read from its figures in order (no header names them). */
function orderedProduct(
  line: ReadLine,
  label: string,
  ctx: Ctx,
  row?: TableRow,
): Product | "agrees" | undefined {
  const figs = line.cells.map((c) => c.figure).filter((f): f is Figure => f !== undefined && !f.percent);
  const moneyFigs = figs.filter((f) => f.money && !f.perUnit);
  const last = moneyFigs[moneyFigs.length - 1];
  if (!last) return undefined;
  const base = { row, line, page: line.page, printed: last };
  // A quantity is a plain number before the amounts, never the line's first cell (a position number).
  const firstMoneyCell = line.cells.findIndex((c) => c.figure?.money && !c.figure.perUnit);
  const quantity = line.cells
    .slice(1, Math.max(1, firstMoneyCell))
    .map((c) => c.figure)
    .find((f): f is Figure => f !== undefined && !f.money && !f.percent && f.value > 0 && f.value < 1e6);
  const rate = figs.find((f) => f.perUnit);
  const q = quantity?.value ?? labelQuantity(label, ctx);
  // A percentage on the line is a discount or a tax rate: the amount may be the product less it or with it.
  const percents = line.cells
    .map((c) => c.figure)
    .filter((f): f is Figure => f?.percent === true && f.value > 0 && f.value < 100);
  const withPercents = (base: number) => [
    base,
    ...percents.flatMap((p) => [base * (1 - p.value / 100), base * (1 + p.value / 100)]),
  ];
  if (q !== undefined && rate && moneyFigs.length === 1) {
    return {
      ...base,
      how: `${quantity?.text ?? q} × ${rate.text}`,
      expected: withPercents(q * rate.cents).map(Math.round),
      slack: roundingSlack(q, rate.decimals),
      inputs: [rate, ...(quantity ? [quantity] : [])],
    };
  }
  if (q !== undefined && moneyFigs.length >= 2) {
    const unit = moneyFigs[moneyFigs.length - 2] as Figure;
    return {
      ...base,
      how: `${quantity?.text ?? q} × ${unit.text}`,
      expected: withPercents(q * unit.cents).map(Math.round),
      slack: roundingSlack(q, unit.decimals),
      inputs: [unit, ...(quantity ? [quantity] : [])],
    };
  }
  if (moneyFigs.length === 3 && q === undefined) {
    // Hours × rate = amount printed as three figures: counts when it holds, says nothing otherwise
    // (three figures may as well be three columns of another kind).
    const [a, b, c] = moneyFigs as [Figure, Figure, Figure];
    return Math.abs(Math.round((a.cents * b.cents) / 100) - c.cents) <= roundingSlack(a.cents / 100, 2)
      ? "agrees"
      : undefined;
  }
  if (moneyFigs.length === 1) {
    const p = labelProduct(label, ctx);
    if (!p) return undefined;
    return { ...base, how: p.how, expected: [Math.round(p.cents)], slack: SLACK + 1, inputs: [] };
  }
  return undefined;
}

const FREE_STRUCTURE = (source: number): StructureScore => ({
  source,
  header: 0.4,
  columns: 0.8,
  rows: 1,
  notes: ["no header names the quantity and price columns"],
});

/** Checks every line item; returns the rows read as line items (a subtotal above them sums them). */
export function checkLineItems(ctx: Ctx, ledgerTables: ReadonlySet<number>): Set<ReadLine> {
  const items = new Set<ReadLine>();
  const groups: {
    structure: StructureScore;
    products: Product[];
    agreed: number;
    agreedLines: ReadLine[];
    table?: number;
  }[] = [];
  const named = new Set<number>();
  for (const table of ctx.reading.tables) {
    if (ledgerTables.has(table.id)) continue;
    // The line items of the document's other tables: how many taxes a breakdown's rows may add up.
    const lines = ctx.reading.tables
      .filter((t) => t !== table && !ledgerTables.has(t.id))
      .reduce(
        (a, t) => a + t.rows.filter((r) => r.kind === "entry" && r.figures.some((f) => f?.money)).length,
        0,
      );
    const products = [...namedProducts(table, ctx.style), ...taxBreakdown(table, lines)];
    if (products.length === 0) continue;
    named.add(table.id);
    groups.push({ structure: table.structure, products, agreed: 0, agreedLines: [], table: table.id });
  }
  // Every other line: its figures in order.
  const bySource = new Map<number, (typeof groups)[number]>();
  const tableOf = new Map(ctx.reading.tables.map((t) => [t.id, t]));
  for (const line of ctx.reading.lines) {
    if (line.header || (line.table !== undefined && (named.has(line.table) || ledgerTables.has(line.table))))
      continue;
    const table = line.table !== undefined ? tableOf.get(line.table) : undefined;
    const row = table?.rows.find((r) => r.lines[0] === line);
    if (table && !row) continue;
    if (row && row.kind !== "entry") continue;
    if (line.cells.some((c) => c.unreadable)) continue;
    if (line.cells[0]?.date) continue;
    const label = line.cells
      .filter((c) => !c.figure)
      .map((c) => c.text)
      .join(" ");
    const p = orderedProduct(line, label, ctx, row);
    if (!p) continue;
    const source = ctx.reading.pages.get(line.page)?.source === "plain_text" ? 0.8 : 1;
    const key = table?.id ?? -1;
    let g = bySource.get(key);
    if (!g) {
      g = {
        structure: table?.structure ?? FREE_STRUCTURE(source),
        products: [],
        agreed: 0,
        agreedLines: [],
        ...(table ? { table: table.id } : {}),
      };
      bySource.set(key, g);
      groups.push(g);
    }
    if (p === "agrees") {
      g.agreed++;
      g.agreedLines.push(line);
      items.add(line);
      continue;
    }
    g.products.push(p);
  }
  for (const g of groups) {
    // A line's sign is often its amount's alone (a return or a credit printed "(10.00)" or "10.00-" with a
    // positive quantity): the magnitudes are compared.
    const broken = g.products.filter(
      (p) => !p.expected.some((e) => Math.abs(Math.abs(e) - Math.abs(p.printed.cents)) <= p.slack),
    );
    const held = g.products.length - broken.length + g.agreed;
    // Trust the products only when most of them hold: otherwise the columns were not quantity × price.
    if (held < Math.max(1, broken.length)) continue;
    for (const p of g.products) items.add(p.line);
    ctx.checked += held + broken.length;
    ctx.verified += held;
    // The lines whose products held are read right (their columns, their amount): a total over them, or
    // a broken product of the same table, stands on a reading that verified itself.
    for (const p of g.products) if (!broken.includes(p)) ctx.heldLines.add(p.line);
    for (const l of g.agreedLines) ctx.heldLines.add(l);
    if (g.table !== undefined) ctx.heldProducts.set(g.table, (ctx.heldProducts.get(g.table) ?? 0) + held);
    if (broken.length === 0) breakdownConfirmsTotal(ctx, g.products);
    for (const p of broken) {
      const expected = p.expected[0] as number;
      const name = p.row?.description || p.row?.label || p.line.text.slice(0, 60);
      // A tax of a breakdown by rate stands on its base read right: the bases add up to an amount printed
      // elsewhere on the page (the net total), or the tax is no proof (docs/decisions.md "Support comes from
      // the side the mismatch accuses"). Its rate is printed in its row.
      const baseConfirmed = p.code !== "tax_amount_mismatch" || breakdownBasesConfirmed(ctx, g.products);
      report(ctx, {
        code: p.code ?? "line_item_mismatch",
        page: p.page,
        at: p.printed,
        message: `On page ${p.page}, the row "${name.slice(0, 60)}": ${p.how} is ${money(ctx, expected)}, but the ${p.code ? "tax" : "line amount"} printed is ${p.printed.text}.`,
        printed: p.printed.text,
        expected: like(p.printed, expected, ctx.style),
        evidence: { row: p.line.text.slice(0, 200), computation: p.how },
        proof: 8,
        confidence: confidenceOf(g.structure, held, held + broken.length, [p.printed, ...p.inputs]),
        notes: g.structure.notes,
        // The other products of its table that held (at least one: a table whose products mostly fail
        // is no quantity × price, and is not judged).
        support: baseConfirmed ? held : 0,
        unsupported: "table",
        ...(baseConfirmed
          ? {}
          : {
              doubt:
                "Its base is confirmed by no amount of the page (the bases of the breakdown add up to no total printed), so this is an anomaly, not proof.",
            }),
      });
    }
  }
  return items;
}

/** Whether the bases of a tax breakdown add up to a money figure printed on their page outside the breakdown. */
function breakdownBasesConfirmed(ctx: Ctx, products: readonly Product[]): boolean {
  const taxes = products.filter((p) => p.code === "tax_amount_mismatch");
  const bases = taxes.map((p) => p.inputs[0]).filter((f): f is Figure => f?.money === true);
  if (bases.length === 0) return false;
  const page = taxes[0]?.page;
  const own = new Set(taxes.map((p) => p.line));
  const total = bases.reduce((a, f) => a + Math.abs(f.cents), 0);
  return ctx.reading.lines.some(
    (l) =>
      l.page === page &&
      !own.has(l) &&
      l.cells.some(
        (c) => c.figure?.money && !c.figure.percent && Math.abs(Math.abs(c.figure.cents) - total) <= SLACK,
      ),
  );
}

/**
 * A tax breakdown whose every tax held (net + tax per rate, "BTW 21% | 73,61 | 15,46 | 89,07"): the bases and
 * their taxes add up to the gross, the bases alone to the net. A labelled total printed outside the breakdown
 * (on any page) that is one of them is confirmed by it: one relation checked and held, and the figure a
 * confirmed total (a mismatch of the rows above it is then a mismatch against a total read right).
 */
function breakdownConfirmsTotal(ctx: Ctx, products: readonly Product[]): void {
  const taxes = products.filter((p) => p.code === "tax_amount_mismatch");
  if (taxes.length === 0) return;
  const bases = taxes.map((p) => p.inputs[0]).filter((f): f is Figure => f?.money === true);
  if (bases.length !== taxes.length) return;
  const net = bases.reduce((a, f) => a + Math.abs(f.cents), 0);
  const gross = net + taxes.reduce((a, p) => a + Math.abs(p.printed.cents), 0);
  const own = new Set(taxes.map((p) => p.line));
  const slack = SLACK * taxes.length;
  const found: Figure[] = [];
  for (const l of ctx.reading.lines) {
    if (own.has(l) || l.header) continue;
    const label = l.cells
      .filter((c) => !c.figure)
      .map((c) => c.text)
      .join(" ");
    if (!(LABELS.totalish.test(label) || LABELS.subtotal.test(label) || LABELS.payable.test(label))) continue;
    for (const c of l.cells) {
      const f = c.figure;
      if (!f?.money || f.percent) continue;
      const v = Math.abs(f.cents);
      if (Math.abs(v - gross) <= slack || Math.abs(v - net) <= slack) found.push(f);
    }
  }
  if (found.length === 0) return;
  ctx.checked++;
  ctx.verified++;
  for (const f of found) ctx.confirmed.add(f);
}
