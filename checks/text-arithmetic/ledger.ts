import type { Figure } from "../../document/tables/cells.js";
import type { ReadLine, Table, TableColumn, TableRow } from "../../document/tables/reader.js";
import { foldLigatures, LABELS } from "../../document/tables/vocabulary.js";
import { formatCents, type NumberStyle } from "../../document/values/amounts.js";
import { type Ctx, confidenceOf, money, report, SLACK } from "./findings.js";

/**
 * Ledgers (bank statements, account histories): a table with a balance column and one or more columns
 * of money moving in and out. Sign conventions, by column: "Debit"/"Paid out" is money out, "Credit"/
 * "Paid in" money in, whatever sign is printed; a single "Amount" column carries its own sign (a minus
 * before or after, parentheses, CR/DR); a column whose sign is never printed and not named is tried both
 * ways. The balance may grow with credits (an account) or with debits (a card or loan statement): both
 * orientations are tried and the one under which more rows reconcile is the reading. A balance printed
 * only on some rows (once a day) takes the rows since the last one together. Opening, brought-forward and
 * carried-forward rows compare with the balance they carry; closing rows and closing balances in a
 * summary box above or below the table with the last balance.
 */

type SignRule = "debit" | "credit" | "signed" | "either";

interface Move {
  figure: Figure;
  rule: SignRule;
}

interface Hypothesis {
  balance: TableColumn;
  moves: { col: TableColumn; rule: SignRule }[];
  orientation: 1 | -1;
}

interface MoveRelation {
  kind: "move";
  row: TableRow;
  prev: number;
  prevRow?: TableRow | undefined;
  moves: Move[];
  balance: Figure;
  options: number[][];
  /** The signed moves that reconcile, when one combination does. */
  hit?: number[];
}

interface CarryRelation {
  kind: "carry" | "closing";
  row: TableRow;
  prev: number;
  balance: Figure;
  holds: boolean;
}

type Relation = MoveRelation | CarryRelation;

export interface Ledger {
  table: Table;
  relations: Relation[];
  held: number;
  checked: number;
  /** Money in and out over all its rows; undefined when a move's sign cannot be known. */
  credits: number | undefined;
  debits: number | undefined;
  lastBalance?: Figure;
  /** Whether the opening balance printed outside the table that seeds its first row is the only one printed. */
  seedUnique: boolean;
  /** The opening balances the table's own rows imply (its first balance, or the first before its row's move). */
  openings: number[];
  entries: number;
  /** Transactions whose balance moved by an amount that was not read: each a relation that could not be checked. */
  unread: number;
  confidence: number;
  hypothesis: Hypothesis;
}

const MOVEMENT_ROLES = new Set(["debit", "credit", "amount", "unknown"]);

function figuresIn(table: Table, col: TableColumn): Figure[] {
  return table.rows.map((r) => r.figures[col.index]).filter((f): f is Figure => f !== undefined);
}

const isSigned = (f: Figure) => f.negative !== undefined || f.credit === true;

/** The ways a table can be a ledger: which column is the balance, and how each other column moves it. */
function hypotheses(table: Table): Hypothesis[] {
  const entries = table.rows.filter((r) => r.kind === "entry");
  const moneyCol = (c: TableColumn) => figuresIn(table, c).some((f) => f.money);
  let balances = table.columns.filter((c) => c.role === "balance" && moneyCol(c));
  if (balances.length === 0) {
    const dated = entries.filter((r) => r.date).length;
    if (table.headers.length > 0 && !table.columns.some((c) => c.role === "unknown")) return [];
    if (dated < 0.5 * entries.length) return [];
    const unknown = table.columns.filter((c) => c.role === "unknown" && moneyCol(c));
    const last = unknown[unknown.length - 1];
    if (!last || figuresIn(table, last).length < 0.6 * entries.length) return [];
    balances = [last];
  }
  const out: Hypothesis[] = [];
  for (const balance of balances.slice(-1)) {
    const moveCols = table.columns.filter(
      (c) => c !== balance && MOVEMENT_ROLES.has(c.role) && moneyCol(c) && c.index < balance.index,
    );
    if (moveCols.length === 0) continue;
    const rule = (c: TableColumn): SignRule =>
      c.role === "debit"
        ? "debit"
        : c.role === "credit"
          ? "credit"
          : figuresIn(table, c).some(isSigned)
            ? "signed"
            : "either";
    const base = moveCols.map((col) => ({ col, rule: rule(col) }));
    const sets = [base];
    const unnamed = base.filter((m) => m.rule === "either");
    if (unnamed.length === 2 && base.length === 2) {
      sets.push(
        [
          { col: base[0]?.col as TableColumn, rule: "debit" },
          { col: base[1]?.col as TableColumn, rule: "credit" },
        ],
        [
          { col: base[0]?.col as TableColumn, rule: "credit" },
          { col: base[1]?.col as TableColumn, rule: "debit" },
        ],
      );
    }
    for (const moves of sets)
      for (const orientation of [1, -1] as const) out.push({ balance, moves, orientation });
  }
  return out;
}

/** Each move's possible signed values (at most 4 unsigned moves: 16 combinations). */
function optionsOf(moves: Move[], orientation: 1 | -1): number[][] | undefined {
  let combos: number[][] = [[]];
  let either = 0;
  for (const m of moves) {
    const v = Math.abs(m.figure.cents);
    let values: number[];
    switch (m.rule) {
      case "debit":
        values = [-v];
        break;
      case "credit":
        values = [v];
        break;
      case "signed":
        values = [m.figure.credit ? v : m.figure.cents];
        break;
      case "either":
        values = [v, -v];
        either++;
        break;
    }
    combos = combos.flatMap((c) => values.map((x) => [...c, orientation * x]));
  }
  return either > 4 ? undefined : combos;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** The figures of a row that move the balance, each with its sign rule. */
function movesOf(row: TableRow, h: Hypothesis): Move[] {
  const moves: Move[] = h.moves
    .map((m) => ({ figure: row.figures[m.col.index] as Figure, rule: m.rule }))
    .filter((m) => m.figure !== undefined);
  // A figure under no column (a header word not recognised) still moves the balance, either way.
  if (moves.length === 0 && row.kind === "entry")
    return row.strays.filter((f) => f.money).map((figure) => ({ figure, rule: "either" as const }));
  return moves;
}

/** The money figures of an entry row under no column that are not already among its moves (at most 2). */
function strayMoves(row: TableRow, moves: readonly Move[]): Move[] {
  if (row.kind !== "entry") return [];
  const used = new Set(moves.map((m) => m.figure));
  return row.strays
    .filter((f) => f.money && !used.has(f))
    .slice(0, 2)
    .map((figure) => ({ figure, rule: "either" as const }));
}

/**
 * The ledger's relations under a hypothesis, row by row. `seed` is an opening balance printed outside
 * the table (a summary box): the first row is checked against it when the table prints none.
 */
function walk(table: Table, h: Hypothesis, seed?: Figure, unread: TableRow[] = []): Relation[] {
  const relations: Relation[] = [];
  let prev: { cents: number; row?: TableRow } | undefined = seed ? { cents: seed.cents } : undefined;
  let pending: Move[] = [];
  let since = 0;
  // An opening balance after the transactions is no balance brought forward: a summary box under the
  // table (opening, totals in and out, closing) that the reader took for more rows ends the ledger.
  let moved = false;
  let ended = false;
  table.rows.forEach((row, i) => {
    const bal = row.figures[h.balance.index];
    const moves = movesOf(row, h);
    if (ended || row.kind === "total") return;
    if (row.kind === "opening" && moved && !LABELS.carry.test(row.label) && !broughtForward(table, i)) {
      ended = true;
      return;
    }
    if (row.kind === "entry" && moves.length > 0) moved = true;
    const firstOnPage = table.rows[i - 1]?.page !== row.page;
    const carryLike =
      row.kind === "opening" ||
      (row.kind === "carry" && firstOnPage) ||
      (row.kind === "entry" && moves.length === 0 && bal !== undefined && !row.date && since === 0);
    if (carryLike) {
      if (!bal) return;
      if (prev !== undefined && (since > 0 || row.kind !== "opening") && pending.length === 0)
        relations.push({
          kind: "carry",
          row,
          prev: prev.cents,
          balance: bal,
          holds: Math.abs(bal.cents - prev.cents) <= SLACK,
        });
      prev = { cents: bal.cents, row };
      since = 0;
      pending = [];
      return;
    }
    if (row.kind === "closing" || row.kind === "carry") {
      if (bal && prev !== undefined && pending.length === 0 && since > 0)
        relations.push({
          kind: row.kind === "carry" ? "carry" : "closing",
          row,
          prev: prev.cents,
          balance: bal,
          holds: Math.abs(bal.cents - prev.cents) <= SLACK,
        });
      return;
    }
    if (!bal) {
      pending.push(...moves);
      return;
    }
    const all = [...pending, ...moves];
    pending = [];
    // A transaction whose balance moved but whose amount was not read (a sign mark the reader does not know,
    // a figure split apart): the chain goes on from its balance, but the move it made is unknown.
    if (
      prev !== undefined &&
      all.length === 0 &&
      row.kind === "entry" &&
      Math.abs(bal.cents - prev.cents) > SLACK
    )
      unread.push(row);
    if (prev === undefined || all.length === 0) {
      prev = { cents: bal.cents, row };
      since++;
      return;
    }
    const delta = bal.cents - prev.cents;
    let options = optionsOf(all, h.orientation);
    let hit = options?.find((o) => Math.abs(sum(o) - delta) <= SLACK);
    // A figure under a column the header did not name (a "Fees" or "Charges" column the vocabulary does
    // not know) may move the balance too: tried, either way, when the named moves do not reconcile.
    const extra = strayMoves(row, all);
    if (options && !hit && extra.length > 0) {
      const withExtra = optionsOf([...all, ...extra], h.orientation);
      const extraHit = withExtra?.find((o) => Math.abs(sum(o) - delta) <= SLACK);
      if (withExtra && extraHit) {
        all.push(...extra);
        options = withExtra;
        hit = extraHit;
      }
    }
    if (options) {
      relations.push({
        kind: "move",
        row,
        prev: prev.cents,
        prevRow: prev.row,
        moves: all,
        balance: bal,
        options,
        ...(hit ? { hit } : {}),
      });
    }
    prev = { cents: bal.cents, row };
    since++;
  });
  return relations;
}

/**
 * An opening balance at the top of a page with transactions under it is a balance brought forward, whatever
 * its words ("Saldovortrag", "Solde reporté"), not the start of a summary box.
 */
export function broughtForward(table: Table, i: number): boolean {
  const row = table.rows[i];
  const before = table.rows[i - 1];
  return row !== undefined && before?.page !== row.page && table.rows[i + 1]?.kind === "entry";
}

const holds = (r: Relation) => (r.kind === "move" ? r.hit !== undefined : r.holds);

/**
 * The table as printed, and, when it has no total rows and no balances carried between pages, its rows in
 * reverse: statements that list the newest transaction first (the opening balance at the foot) reconcile
 * read upwards.
 */
function inEitherOrder(table: Table): Table[] {
  if (table.rows.some((r) => r.kind === "total" || r.kind === "carry")) return [table];
  return [table, { ...table, rows: [...table.rows].reverse() }];
}

/** Every table that reads as a ledger, under its best hypothesis. */
export function readLedgers(ctx: Ctx): Ledger[] {
  const out: Ledger[] = [];
  const summary = labelledFigures(ctx);
  for (const read of ctx.reading.tables) {
    const seeds = summary.filter(
      (l) => LABELS.opening.test(l.label) && l.line.table !== read.id && !l.line.cells[0]?.date,
    );
    // The statement's opening balance is the first ledger's: a later table (the rest of the transactions read
    // apart, another account) starts from a balance of its own.
    const seed = out.length === 0 ? seeds[0]?.figure : undefined;
    let best:
      | { h: Hypothesis; relations: Relation[]; held: number; table: Table; unread: TableRow[] }
      | undefined;
    for (const table of inEitherOrder(read)) {
      const opensItself = table.rows.find((r) => r.kind !== "total")?.kind === "opening";
      for (const h of hypotheses(table)) {
        const unread: TableRow[] = [];
        const relations = walk(table, h, opensItself ? undefined : seed, unread);
        const held = relations.filter(holds).length;
        // A hypothesis naming fewer unknown signs wins a tie (it explains the same rows with less freedom),
        // and the order printed wins a tie with its reverse.
        if (!best || held > best.held) best = { h, relations, held, table, unread };
      }
    }
    if (!best) continue;
    const table = best.table;
    const moves = best.relations.filter((r): r is MoveRelation => r.kind === "move");
    const brokenMoves = moves.filter((r) => !r.hit).length;
    const heldMoves = moves.length - brokenMoves;
    // Trust the ledger only when it mostly reconciles: otherwise the columns were misread (or it is none).
    if (moves.length < 2 || heldMoves < 2 || heldMoves < brokenMoves + best.unread.length) continue;
    // Money in and out: each move as its relation read it, or by its column's rule; unknown when a
    // move outside every relation has no sign to go by.
    let credits: number | undefined = 0;
    let debits: number | undefined = 0;
    const covered = new Set<Figure>();
    for (const r of moves) {
      r.hit?.forEach((v, k) => {
        const f = r.moves[k]?.figure;
        if (f) covered.add(f);
        if (best.h.orientation * v > 0) credits = (credits ?? 0) + Math.abs(v);
        else debits = (debits ?? 0) + Math.abs(v);
      });
    }
    for (const row of table.rows) {
      if (row.kind !== "entry") continue;
      for (const m of movesOf(row, best.h)) {
        if (covered.has(m.figure) || credits === undefined || debits === undefined) continue;
        const v =
          m.rule === "debit"
            ? -1
            : m.rule === "credit"
              ? 1
              : m.rule === "signed"
                ? Math.sign(m.figure.credit ? 1 : m.figure.cents)
                : 0;
        if (v === 0) {
          credits = undefined;
          debits = undefined;
        } else if (v > 0) credits += Math.abs(m.figure.cents);
        else debits += Math.abs(m.figure.cents);
      }
    }
    // Rows that moved the balance by an amount not read: the money in and out over the rows is not known.
    if (best.unread.length > 0) {
      credits = undefined;
      debits = undefined;
    }
    const withBalance = table.rows.filter((r) => r.figures[best.h.balance.index] && r.kind === "entry");
    const openings: number[] = [];
    const first = best.relations[0];
    // A balance printed outside the table (a summary's opening) is the table's own only when its first
    // row follows from it.
    if (first && (first.kind !== "move" || first.prevRow !== undefined || holds(first)))
      openings.push(first.prev);
    const firstRow = withBalance[0];
    const firstBalance = firstRow?.figures[best.h.balance.index];
    if (firstRow && firstBalance && firstRow === table.rows.find((r) => r.kind === "entry"))
      for (const o of optionsOf(movesOf(firstRow, best.h), best.h.orientation) ?? [])
        openings.push(firstBalance.cents - sum(o));
    out.push({
      seedUnique: seeds.length === 1,
      openings,
      table,
      relations: best.relations,
      held: best.held,
      checked: best.relations.length,
      credits,
      debits,
      ...(withBalance.length
        ? { lastBalance: withBalance[withBalance.length - 1]?.figures[best.h.balance.index] }
        : {}),
      entries: table.rows.filter((r) => r.kind === "entry").length,
      unread: best.unread.length,
      confidence: 0,
      hypothesis: best.h,
    });
  }
  return out;
}

/**
 * A value printed the way a figure of the document prints it ("£2,050.00", "1.308,00 €", "9 034,68 €",
 * "(50.00)"): its currency mark, separators and sign convention.
 */
export function like(f: Figure | undefined, cents: number, style: NumberStyle): string {
  if (!f) return formatCents(cents, style);
  const decimal = style === "comma_decimal" ? "," : ".";
  const group = /\d([.,'\u2019\u00a0\u202f ])\d{3}(?!\d)/.exec(
    f.text.replace(new RegExp(`\\${decimal}\\d+\\D*$`), ""),
  )?.[1];
  const abs = Math.abs(Math.round(cents));
  const whole = String(Math.floor(abs / 100)).replace(
    /\B(?=(\d{3})+(?!\d))/g,
    group ?? (style === "comma_decimal" ? "." : ","),
  );
  const body = `${whole}${decimal}${String(abs % 100).padStart(2, "0")}`;
  const replaced = f.text.replace(/\d[\d.,'\u2019\u00a0\u202f ]*\d|\d/, body);
  const negative = cents < 0;
  const printedNegative = f.cents < 0;
  if (negative === printedNegative) return replaced;
  const plain = replaced.replace(/^\(|\)$|-$|^[-−]|\s?(?:DR|CR|Dr|Cr)$/g, "");
  return negative ? `-${plain}` : plain;
}

function rowName(row: TableRow): string {
  const label = row.description || row.label;
  return `${row.date ? `the row dated ${row.date}` : "the row"}${label ? ` "${label.slice(0, 60)}"` : ""}`;
}

/** The closing balances printed outside the ledgers' tables (a summary box above or below them). */
export function closingsOutside(ctx: Ctx, ledgers: readonly Ledger[]): number[] {
  const tables = new Set(ledgers.map((l) => l.table.id));
  return labelledFigures(ctx)
    .filter(
      (l) =>
        LABELS.closing.test(l.label) &&
        !LABELS.carry.test(l.label) &&
        !l.line.cells[0]?.date &&
        (l.line.table === undefined || !tables.has(l.line.table)),
    )
    .map((l) => l.figure.cents);
}

/** Checks each ledger's relations and reports what does not add up. */
export function checkLedgers(ctx: Ctx, ledgers: Ledger[]): void {
  const closings = closingsOutside(ctx, ledgers);
  for (const ledger of ledgers) {
    const { table } = ledger;
    const h = ledger.hypothesis;
    const rels = ledger.relations;
    const consumed = new Set<Relation>();
    // Broken relations, with a changed balance read as one finding (it breaks its row and the next).
    let broken = 0;
    for (let i = 0; i < rels.length; i++) {
      const r = rels[i] as Relation;
      if (holds(r)) continue;
      broken++;
      const n = rels[i + 1];
      if (r.kind === "move" && n?.kind === "move" && !n.hit && n.prev === r.balance.cents) {
        const through = r.options.flatMap((a) => n.options.map((b) => sum(a) + sum(b)));
        if (through.some((t) => Math.abs(r.prev + t - n.balance.cents) <= SLACK)) consumed.add(n);
      }
      if (consumed.has(r)) broken--;
    }
    const checked = rels.length - consumed.size;
    const held = rels.filter(holds).length;
    // Whether the chain recovers after the broken relation i: the next relation holds from the value
    // printed, or one changed balance explains both sides (the next row, the closing or carried balance, or
    // the row after a carried balance follows from the expected value).
    // After the last relation: a closing balance printed outside the table, or a row of the table after it
    // that prints a balance and moves nothing (a closing row the vocabulary did not name), says which side
    // of a broken last row changed: its balance ("expected" printed there) or its amount ("printed").
    const lastWitness = (i: number): "printed" | "expected" | undefined => {
      const r = rels[i] as Relation;
      if (r.kind !== "move" || rels[i + 1]) return undefined;
      const after = table.rows.slice(table.rows.indexOf(r.row) + 1).find((x) => x.figures[h.balance.index]);
      const repeated =
        after && movesOf(after, h).length === 0 ? after.figures[h.balance.index]?.cents : undefined;
      const witnesses = [...closings, ...(repeated !== undefined ? [repeated] : [])];
      if (witnesses.some((c) => Math.abs(c - r.balance.cents) <= SLACK)) return "printed";
      if (witnesses.some((c) => r.options.some((o) => Math.abs(r.prev + sum(o) - c) <= SLACK)))
        return "expected";
      return undefined;
    };
    const recovers = (i: number): boolean => {
      const r = rels[i] as Relation;
      const n = rels[i + 1];
      // The last row: a closing balance printed outside the table shows which side changed (the balance
      // printed, or the one the row's move gives).
      if (!n) return lastWitness(i) !== undefined;
      if (holds(n) || consumed.has(n)) return true;
      if (r.kind === "move" && n.kind !== "move" && n.prev === r.balance.cents)
        return r.options.some((o) => Math.abs(r.prev + sum(o) - n.balance.cents) <= SLACK);
      if (r.kind !== "move" && n.kind === "move" && n.prev === r.balance.cents)
        return n.options.some((o) => Math.abs(r.prev + sum(o) - n.balance.cents) <= SLACK);
      return false;
    };
    // A break is proof only on a ledger that verified itself around it: the balances chain over other rows
    // (at least two relations hold), the break is local (the chain recovers after it, or, for a closing or
    // carried balance, the chain holds right up to it), and its previous balance is the table's own or the
    // one opening balance the document prints (several: which account's is not known).
    // A row whose balance alone is out of line, the next row following from the balance expected (one
    // figure breaks the chain and un-breaks it): a balance read wrong (a sign or a trailing CR/DR missed, a
    // figure of a neighbouring cell) reads exactly so, and no amount moved. A reading doubt, not proof.
    const supportOf = (i: number): number => {
      const r = rels[i] as Relation;
      if (held < 2) return 0;
      if (r.kind === "move" && consumed.has(rels[i + 1] as Relation)) return 0;
      if (r.kind === "move") return (r.prevRow !== undefined || ledger.seedUnique) && recovers(i) ? held : 0;
      const before = rels[i - 1];
      return (before !== undefined && holds(before)) || recovers(i) ? held : 0;
    };
    // A row whose move was not read is a relation the chain could not confirm.
    ledger.confidence = confidenceOf(table.structure, held, checked + ledger.unread);
    ctx.checked += checked;
    ctx.verified += held;
    ctx.statementRows += ledger.entries;
    for (let i = 0; i < rels.length; i++) {
      const r = rels[i] as Relation;
      if (holds(r) || consumed.has(r)) continue;
      const conf = confidenceOf(table.structure, held, checked + ledger.unread, [
        r.balance,
        ...(r.kind === "move" ? r.moves.map((m) => m.figure) : []),
      ]);
      if (r.kind !== "move") {
        const carried = r.kind === "carry" || LABELS.carry.test(r.row.label);
        report(ctx, {
          code: carried ? "balance_carried_mismatch" : "closing_balance_mismatch",
          page: r.row.page,
          at: r.balance,
          message: carried
            ? `On page ${r.row.page}, the balance brought forward is ${r.balance.text}, but the balance it carries was ${money(ctx, r.prev)}.`
            : `On page ${r.row.page}, the closing balance is ${r.balance.text}, but the last transaction leaves ${money(ctx, r.prev)} (a difference of ${money(ctx, r.balance.cents - r.prev)}).`,
          printed: r.balance.text,
          expected: like(r.balance, r.prev, ctx.style),
          evidence: {
            row: r.row.lines[0]?.text.slice(0, 200),
            difference: money(ctx, r.balance.cents - r.prev),
          },
          proof: 9,
          confidence: conf,
          notes: table.structure.notes,
          support: supportOf(i),
          unsupported: "ledger",
        });
        continue;
      }
      const delta = r.balance.cents - r.prev;
      const best = r.options.reduce((a, b) => (Math.abs(sum(b) - delta) < Math.abs(sum(a) - delta) ? b : a));
      const expectedBalance = r.prev + sum(best);
      const amountText = r.moves.map((m) => m.figure.text).join(" / ");
      const next = rels[i + 1];
      const balanceChanged = consumed.has(next as Relation);
      // The balance agrees with the rows after it: the row's amount is the figure out of line.
      const nextAgrees =
        !balanceChanged &&
        r.moves.length === 1 &&
        ((next !== undefined && holds(next) && (next.kind === "move" || next.kind === "closing")) ||
          lastWitness(i) === "printed");
      // The move that would fit, printed in its column's convention: a debit or credit column prints
      // amounts without sign (a move the other way does not fit it: said in words), a signed one with it.
      const rule = r.moves[0]?.rule;
      const towards = delta * ledger.hypothesis.orientation;
      const fitting =
        rule === "signed" || rule === "either"
          ? like(r.moves[0]?.figure, rule === "signed" ? towards : Math.abs(delta), ctx.style)
          : (rule === "debit") === towards < 0
            ? like(r.moves[0]?.figure, Math.abs(delta), ctx.style)
            : `${formatCents(Math.abs(delta), ctx.style)} the other way`;
      const moveFigure = r.moves[0]?.figure;
      const direction = sum(best) < 0 ? "minus" : "plus";
      const base = `On page ${r.row.page}, ${rowName(r.row)} shows a balance of ${r.balance.text}, but the previous balance ${money(ctx, r.prev)} ${direction} ${amountText} gives ${money(ctx, expectedBalance)} (a difference of ${money(ctx, r.balance.cents - expectedBalance)}).`;
      const evidence = {
        row: r.row.lines[0]?.text.slice(0, 200),
        previousBalance: money(ctx, r.prev),
        amount: amountText,
        printedBalance: r.balance.text,
        expectedBalance: money(ctx, expectedBalance),
      };
      if (nextAgrees && moveFigure) {
        // One figure of the row explains the break as a reading (docs/decisions.md "Support comes from the
        // side the mismatch accuses"): the balance did not move at all (a pending or memo line, printed but
        // not booked), or moved by another figure of the row (a fee in a column of its own). An edited
        // amount leaves neither (its balance moved by the amount it replaced).
        const off = Math.abs(r.balance.cents - expectedBalance);
        const near = (a: number, b: number) => Math.abs(a - b) <= SLACK;
        const others = r.row.figures.filter(
          (f): f is Figure => f?.money === true && f !== r.balance && f !== moveFigure && !f.percent,
        );
        const explained = near(r.balance.cents, r.prev) || others.some((f) => near(off, Math.abs(f.cents)));
        report(ctx, {
          code: "running_balance_mismatch",
          page: r.row.page,
          at: moveFigure,
          message: `${base} The balances before and after it agree with each other, so the amount ${moveFigure.text} is the figure out of line (${fitting} would fit).`,
          printed: moveFigure.text,
          expected: fitting,
          evidence: { ...evidence, changed: "amount" },
          proof: 9,
          confidence: conf,
          notes: table.structure.notes,
          support: explained ? 0 : supportOf(i),
          unsupported: "ledger",
          ...(explained
            ? {
                doubt:
                  "The balance did not move, or moved by another figure of the row: how a line printed but not booked, or a fee in a column of its own, reads too, so this is an anomaly, not proof.",
              }
            : {}),
        });
        continue;
      }
      report(ctx, {
        code: "running_balance_mismatch",
        page: r.row.page,
        at: r.balance,
        message: balanceChanged
          ? `${base} The next row follows from the expected balance, so the balance printed is the figure out of line.`
          : base,
        printed: r.balance.text,
        expected: like(r.balance, expectedBalance, ctx.style),
        evidence: { ...evidence, changed: balanceChanged ? "balance" : "balance or amount" },
        proof: 9,
        confidence: conf,
        notes: table.structure.notes,
        support: supportOf(i),
        unsupported: "ledger",
        ...(balanceChanged
          ? {
              doubt:
                "One balance out of line with the rows before and after it, every amount in line, is how a balance misread (its sign, a figure of the next cell) reads too, so this is an anomaly, not proof.",
            }
          : {}),
      });
    }
    checkLedgerTotals(ctx, ledger, broken + ledger.unread);
  }
}

/** A total row of the ledger (money in and out per column) against the sums of its columns. */
function checkLedgerTotals(ctx: Ctx, ledger: Ledger, broken: number): void {
  if (broken > 0) return;
  const { table } = ledger;
  const cols = ledger.hypothesis.moves.filter((m) => m.rule === "debit" || m.rule === "credit");
  let sinceTotal = new Map<number, number>();
  const fromStart = new Map<number, number>();
  for (const row of table.rows) {
    if (row.kind === "entry") {
      for (const m of cols) {
        const f = row.figures[m.col.index];
        if (!f) continue;
        sinceTotal.set(m.col.index, (sinceTotal.get(m.col.index) ?? 0) + Math.abs(f.cents));
        fromStart.set(m.col.index, (fromStart.get(m.col.index) ?? 0) + Math.abs(f.cents));
      }
      continue;
    }
    if (row.kind !== "total" && row.kind !== "closing" && row.kind !== "carry") continue;
    for (const m of cols) {
      const f = row.figures[m.col.index];
      if (!f) continue;
      const a = sinceTotal.get(m.col.index) ?? 0;
      const b = fromStart.get(m.col.index) ?? 0;
      ctx.checked++;
      if ([a, b].some((s) => Math.abs(Math.abs(f.cents) - s) <= SLACK)) {
        ctx.verified++;
        continue;
      }
      report(ctx, {
        code: "statement_totals_mismatch",
        page: row.page,
        at: f,
        message: `On page ${row.page}, the total of the ${m.rule === "debit" ? "money out" : "money in"} column is ${f.text}, but the transactions listed above it add up to ${money(ctx, a)}.`,
        printed: f.text,
        expected: like(f, a, ctx.style),
        evidence: { label: row.label, sumOfRows: money(ctx, a) },
        proof: 8,
        confidence: ledger.confidence,
        notes: table.structure.notes,
        // Checked only on a ledger whose every balance chains: its moves were read right.
        support: ledger.held,
        unsupported: "ledger",
      });
    }
    if (row.kind === "total") sinceTotal = new Map();
  }
}

// ---------------------------------------------------------------------------------------------
// Summary boxes (above or below the table)
// ---------------------------------------------------------------------------------------------

interface Labelled {
  line: ReadLine;
  label: string;
  figure: Figure;
}

/**
 * The opening or closing balance of a statement summary, among the lines whose label names one. A balance
 * handed from page to page ("balance carried forward" at the foot of page 1) is no summary figure while a
 * line that is not a carry names one; the summary's figures are one box, so with a total in or out read, the
 * balance nearest it on its page is the summary's. Without one, the first opening and the last closing
 * balance of the document.
 */
function summaryFigure(
  found: readonly Labelled[],
  anchor: Labelled | undefined,
  end: "first" | "last",
): Labelled | undefined {
  const own = found.filter((r) => !LABELS.carry.test(r.label));
  // A balance handed between pages ("Brought forward", "Carried forward") stands for the statement's opening
  // only at the start of the first page it is printed on, for its closing only on the last: one printed on
  // another page carries a page's balance, not the period's (docs/decisions.md "A summary box reads its own
  // figures").
  const pages = found.map((r) => r.line.page);
  const carryAtEnd = found.filter(
    (r) => r.line.page === (end === "first" ? Math.min(...pages) : Math.max(...pages)),
  );
  const pool = own.length > 0 ? own : carryAtEnd;
  if (anchor) {
    // A box is a few lines: a balance of the page set further from its totals (a balance carried at the page's
    // foot under a label the vocabulary does not know) is none of its figures.
    const reach = 8 * Math.max(anchor.line.size, 1);
    const near = pool
      .filter(
        (r) => r.line.page === anchor.line.page && Math.abs(r.line.baseline - anchor.line.baseline) <= reach,
      )
      .sort(
        (a, b) =>
          Math.abs(a.line.baseline - anchor.line.baseline) - Math.abs(b.line.baseline - anchor.line.baseline),
      );
    if (near[0]) return near[0];
    // A summary box reads its own figures: a carried balance printed on another page than the box is no
    // figure of it, nor is a balance of the box's page set far from it.
    if (own.length === 0 || pool.some((r) => r.line.page === anchor.line.page)) return undefined;
  }
  return end === "first" || own.length > 0 ? pool[0] : pool[pool.length - 1];
}

/** Lines of one money figure and a label (outside ledger tables' entries), for summary boxes. */
export function labelledFigures(ctx: Ctx): Labelled[] {
  const out: Labelled[] = [];
  for (const line of ctx.reading.lines) {
    if (line.header) continue;
    const figs = line.cells.filter((c) => c.figure?.money);
    if (figs.length !== 1) continue;
    const label = foldLigatures(
      line.cells
        .filter((c) => !c.figure?.money && !c.signMark)
        .map((c) => c.rest ?? c.text)
        .join(" "),
    ).trim();
    if (!label) continue;
    out.push({ line, label, figure: figs[0]?.figure as Figure });
  }
  return out;
}

/**
 * The other figures of a statement's summary box: the lines between its first and last figure (opening,
 * totals in and out, closing) on its page, outside the ledger's rows — fees, interest, charges printed apart
 * from the totals ("Total paid out / Fees / Interest / Closing balance"). At most four; none when the box's
 * figures are on different pages.
 */
function summaryExtras(
  rows: readonly Labelled[],
  box: readonly (Labelled | undefined)[],
  ledger: Ledger | undefined,
): Labelled[] {
  const own = box.filter((r): r is Labelled => r !== undefined);
  const page = own[0]?.line.page;
  if (own.length < 2 || own.some((r) => r.line.page !== page)) return [];
  const top = Math.max(...own.map((r) => r.line.baseline));
  const bottom = Math.min(...own.map((r) => r.line.baseline));
  const extras = rows.filter(
    (r) =>
      r.line.page === page &&
      !own.includes(r) &&
      r.line.baseline < top &&
      r.line.baseline > bottom &&
      (ledger === undefined || r.line.table !== ledger.table.id) &&
      !r.line.cells[0]?.date,
  );
  return extras.length <= 4 ? extras : [];
}

/**
 * Whether a difference is some of the summary box's other figures, each added or taken off (a fee, the
 * interest printed apart from the totals): the box's own convention, not an edit.
 */
function explainedBy(diff: number, extras: readonly Labelled[]): boolean {
  if (extras.length === 0 || Math.abs(diff) <= SLACK) return false;
  let sums = [0];
  for (const x of extras) {
    const v = Math.abs(x.figure.cents);
    sums = sums.flatMap((s) => [s, s + v, s - v]);
  }
  return sums.some((s) => s !== 0 && Math.abs(s - diff) <= SLACK);
}

/**
 * Money in and out over the dated transactions of each table without a balance column: a money out and a
 * money in column, or one signed amount column (its negative figures out). What a summary box's totals count
 * when no ledger's balances chain.
 */
function columnTotals(tables: readonly Table[]): { credits: number; debits: number }[] {
  const out: { credits: number; debits: number }[] = [];
  for (const t of tables) {
    if (t.columns.some((c) => c.role === "balance")) continue;
    const moneyCols = t.columns.filter((c) => t.rows.some((r) => r.figures[c.index]?.money));
    const credit = moneyCols.find((c) => c.role === "credit");
    const debit = moneyCols.find((c) => c.role === "debit");
    const single = moneyCols.length === 1 ? moneyCols[0] : undefined;
    if (!(credit && debit) && !single) continue;
    let credits = 0;
    let debits = 0;
    let n = 0;
    for (const r of t.rows) {
      if (r.kind !== "entry" || !r.date) continue;
      const pairs: [Figure | undefined, boolean][] =
        credit && debit
          ? [
              [r.figures[credit.index], true],
              [r.figures[debit.index], false],
            ]
          : [[r.figures[(single as TableColumn).index], true]];
      for (const [f, isIn] of pairs) {
        if (!f?.money) continue;
        n++;
        // In one signed column only a printed sign says out; an unsigned figure there is in.
        if (isIn && !(single && f.cents < 0)) credits += Math.abs(f.cents);
        else debits += Math.abs(f.cents);
      }
    }
    if (n >= 2) out.push({ credits, debits });
  }
  return out;
}

/** Opening + money in − money out = closing, the totals against the rows, the closing against the last balance. */
export function checkStatementSummary(ctx: Ctx, ledgers: Ledger[]): void {
  const rows = labelledFigures(ctx);
  const candidates = (re: RegExp) => rows.filter((r) => re.test(r.label) && !r.line.cells[0]?.date);
  const totalIn = candidates(LABELS.totalIn)[0];
  const totalOut = candidates(LABELS.totalOut)[0];
  const anchor = totalIn ?? totalOut;
  const opening = summaryFigure(candidates(LABELS.opening), anchor, "first");
  const closing = summaryFigure(candidates(LABELS.closing), anchor, "last");
  const ledger = ledgers[0];
  const held = ctx.verified;
  // Without a ledger whose balances chain (a statement with no balance column), the box is the table's when
  // both its totals are the sums of the table's transactions in and out: then its closing is where those
  // transactions leave its opening, and a closing that is not is read as surely as the table.
  const sums = (row: Labelled | undefined, total: number) =>
    row !== undefined && Math.abs(Math.abs(row.figure.cents) - total) <= SLACK;
  const columnTied =
    (!ledger || ledger.held < 2) &&
    columnTotals(ctx.reading.tables).some((t) => sums(totalIn, t.credits) && sums(totalOut, t.debits));
  const structure = {
    source: ctx.reading.pages.get(closing?.line.page ?? 1)?.source === "plain_text" ? 0.8 : 1,
    header: columnTied ? 1 : 0.7,
    columns: 1,
    rows: 1,
    notes: [columnTied ? "a summary whose totals are its table's sums" : "a summary read from its labels"],
  };
  const extras = summaryExtras(rows, [opening, closing, totalIn, totalOut], ledger);
  // The figures of the box that tie to the ledger (a table whose balances chain): its opening, closing and
  // totals in and out read from the same account. A box none of whose other figures ties to the ledger is
  // not known to be this ledger's (another account, a pocket), and its mismatches are anomalies.
  const several = candidates(LABELS.totalIn).length > 1 || candidates(LABELS.totalOut).length > 1;
  const tied = (row: Labelled | undefined, what: "opening" | "closing" | "total"): boolean => {
    if (!row || !ledger || several || ledger.held < 2) return false;
    const v = row.figure.cents;
    const close = (x: number | undefined) => x !== undefined && Math.abs(Math.abs(v) - Math.abs(x)) <= SLACK;
    if (what === "opening") return ledger.openings.some((o) => Math.abs(v - o) <= SLACK);
    if (what === "closing")
      return ledger.lastBalance !== undefined && Math.abs(v - ledger.lastBalance.cents) <= SLACK;
    return !ledger.relations.some((r) => !holds(r)) && (close(ledger.credits) || close(ledger.debits));
  };
  const ties = (except: Labelled | undefined) =>
    (
      [
        [opening, "opening"],
        [closing, "closing"],
        [totalIn, "total"],
        [totalOut, "total"],
      ] as const
    ).filter(([row, what]) => row !== except && tied(row, what)).length;
  if (opening && closing && totalIn && totalOut) {
    const o = opening.figure.cents;
    const c = closing.figure.cents;
    const i = Math.abs(totalIn.figure.cents);
    const out = Math.abs(totalOut.figure.cents);
    const expected = o + i - out;
    ctx.checked++;
    if (Math.abs(expected - c) <= SLACK) ctx.verified++;
    // A balance owed (a card or loan statement): its credits (payments) lower it, its debits raise it.
    else if (Math.abs(o - i + out - c) <= SLACK) ctx.verified++;
    else if (explainedBy(c - expected, extras) || explainedBy(c - (o - i + out), extras)) ctx.verified++;
    else
      report(ctx, {
        code: "statement_summary_mismatch",
        page: closing.line.page,
        at: closing.figure,
        message: `On page ${closing.line.page}, the opening balance ${opening.figure.text} plus ${totalIn.figure.text} in minus ${totalOut.figure.text} out gives ${money(ctx, expected)}, but the closing balance printed is ${closing.figure.text}.`,
        printed: closing.figure.text,
        expected: like(closing.figure, expected, ctx.style),
        evidence: {
          opening: opening.figure.text,
          moneyIn: totalIn.figure.text,
          moneyOut: totalOut.figure.text,
        },
        proof: 9,
        confidence: confidenceOf(structure, held, ctx.checked - 1, [
          opening.figure,
          closing.figure,
          totalIn.figure,
          totalOut.figure,
        ]),
        notes: structure.notes,
        support: ties(undefined) + (columnTied ? 2 : 0),
        unsupported: "summary (none of its figures ties to a ledger whose balances chain)",
      });
  }
  // Several summary boxes (one per account or pocket of the statement): which rows each one sums is not
  // read, so none is compared with the ledger (each ledger's own balances still are).
  // (An opening balance is printed in a box and again as the ledger's first row: the totals in and out
  // tell the boxes apart.)
  if (!ledger || candidates(LABELS.totalIn).length > 1 || candidates(LABELS.totalOut).length > 1) return;
  const ledgerBroken = ledger.relations.some((r) => !holds(r));
  const lastBalance = ledger.lastBalance;
  const lastRel = [...ledger.relations].reverse().find((r) => r.kind === "move");
  const lastChains =
    ledger.held >= 2 && lastRel !== undefined && holds(lastRel) && lastRel.balance === lastBalance;
  const boxOthers = (except: Labelled) =>
    [opening, closing, totalIn, totalOut].filter((r) => r !== undefined && r !== except).length;
  const inTable = (l: Labelled) => l.line.table === ledger.table.id;
  // Transactions read as several ledger tables (one statement's rows split where the reader lost the table,
  // or several accounts): the box's closing is the last table's, its totals those of all of them, or of the
  // first alone; which rows it counts is not known, and a mismatch is a note.
  // Dated rows with money outside every ledger (a part of the statement whose balances were not read) do the
  // same: the ledger may be a part of the statement only.
  const ledgerIds = new Set(ledgers.map((l) => l.table.id));
  const outside = ctx.reading.tables
    .filter((t) => !ledgerIds.has(t.id))
    .some((t) => t.rows.some((r) => r.kind === "entry" && r.date && r.figures.some((f) => f?.money)));
  const split =
    ledgers.length > 1
      ? `The transactions were read as ${ledgers.length} tables, and which of their rows the summary counts is not known`
      : outside
        ? "Dated transactions were read outside the ledger whose balances chain, and which rows the summary counts is not known"
        : undefined;
  // The box's totals are the ledger's sums only when the ledger runs from the box's opening balance to its
  // closing one: a ledger that starts or ends elsewhere (a part of the statement, another account) sums other
  // rows than the box does.
  const spans = tied(opening, "opening") && tied(closing, "closing");
  const lastOfAll = ledgers[ledgers.length - 1]?.lastBalance;
  if (closing && lastBalance && !inTable(closing) && !ledger.relations.some((r) => r.kind === "closing")) {
    ctx.checked++;
    if (
      Math.abs(closing.figure.cents - lastBalance.cents) <= SLACK ||
      (lastOfAll !== undefined && Math.abs(closing.figure.cents - lastOfAll.cents) <= SLACK)
    )
      ctx.verified++;
    else
      report(ctx, {
        code: "closing_balance_mismatch",
        page: closing.line.page,
        at: closing.figure,
        message: `On page ${closing.line.page}, the closing balance is ${closing.figure.text}, but the last transaction leaves ${lastBalance.text}.`,
        printed: closing.figure.text,
        expected: like(closing.figure, lastBalance.cents, ctx.style),
        evidence: { lastBalance: lastBalance.text },
        proof: 9,
        confidence: ledger.confidence,
        notes: ledger.table.structure.notes,
        // The ledger's last balance chained from the rows above it, and the box is this ledger's (one of
        // its other figures ties to it, or it prints none).
        support: lastChains && (boxOthers(closing) === 0 || ties(closing) > 0) ? ledger.held : 0,
        unsupported:
          "ledger and summary (the last balance does not chain, or the box is not tied to the ledger)",
        ...(split ? { uncertain: split } : {}),
      });
  }
  if (ledgerBroken) return;
  // A card statement's "Total credits" are its payments, which lower the balance owed: the ledger read them
  // as money out. Both totals swapped is that convention, not two edits.
  const near = (row: Labelled | undefined, total: number | undefined) =>
    row !== undefined && total !== undefined && Math.abs(Math.abs(row.figure.cents) - total) <= SLACK;
  const swapped =
    near(totalIn, ledger.debits) &&
    near(totalOut, ledger.credits) &&
    !(near(totalIn, ledger.credits) && near(totalOut, ledger.debits));
  const allOf = (k: "credits" | "debits") =>
    ledgers.every((l) => l[k] !== undefined) ? sum(ledgers.map((l) => l[k] ?? 0)) : undefined;
  const all = { credits: allOf("credits"), debits: allOf("debits") };
  for (const [row, total, whole, what] of [
    [totalIn, swapped ? ledger.debits : ledger.credits, swapped ? all.debits : all.credits, "money in"],
    [totalOut, swapped ? ledger.credits : ledger.debits, swapped ? all.credits : all.debits, "money out"],
  ] as const) {
    if (!row || inTable(row) || total === undefined) continue;
    ctx.checked++;
    if (
      Math.abs(Math.abs(row.figure.cents) - total) <= SLACK ||
      (whole !== undefined && Math.abs(Math.abs(row.figure.cents) - whole) <= SLACK) ||
      explainedBy(Math.abs(row.figure.cents) - total, extras)
    ) {
      ctx.verified++;
      continue;
    }
    report(ctx, {
      code: "statement_totals_mismatch",
      page: row.line.page,
      at: row.figure,
      message: `On page ${row.line.page}, the total ${what} is ${row.figure.text}, but the ${ledger.entries} transactions listed add up to ${money(ctx, total)}.`,
      printed: row.figure.text,
      expected: like(row.figure, total, ctx.style),
      evidence: { sumOfRows: money(ctx, total), rows: ledger.entries },
      proof: 8,
      confidence: ledger.confidence,
      notes: ledger.table.structure.notes,
      // The ledger chains (checked only then); the box is its own when another of its figures ties to it.
      support: ties(row),
      unsupported: "summary (none of its other figures ties to the ledger)",
      ...(split
        ? { uncertain: split }
        : spans
          ? {}
          : {
              uncertain:
                "The ledger read does not run from the summary's opening balance to its closing balance, and which rows the summary counts is not known",
            }),
    });
  }
}
