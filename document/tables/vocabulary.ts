/**
 * The words tables are read by, in English, German, French, Dutch, Spanish and Italian: what a column
 * header says a column holds (its role), and what a row's label says the row is (an opening balance, a
 * subtotal, a tax, ...). Words only name classes of rows and columns every issuer prints; nothing here
 * names one issuer's layout.
 */

export const COLUMN_ROLES = [
  "date",
  "description",
  "reference",
  "debit",
  "credit",
  "amount",
  "balance",
  "quantity",
  "unit",
  "unit_price",
  "line_total",
  "tax_rate",
  "tax_base",
  "tax_amount",
  "discount",
  "ytd",
] as const;
export type ColumnRole = (typeof COLUMN_ROLES)[number];

/** Roles whose cells are figures. */
export const NUMERIC_ROLES: ReadonlySet<ColumnRole> = new Set([
  "debit",
  "credit",
  "amount",
  "balance",
  "quantity",
  "unit_price",
  "line_total",
  "tax_rate",
  "tax_base",
  "tax_amount",
  "discount",
  "ytd",
]);

/**
 * Header words per role. Each entry is matched against a whole header cell once it is normalised (lower
 * case, currency marks, units in brackets and punctuation removed), so "Amount (€)" is "amount" and
 * "Paid out" is not "out".
 */
const HEADERS: Record<ColumnRole, string[]> = {
  date: [
    "date",
    "posting date",
    "transaction date",
    "trans date",
    "value date",
    "booking date",
    "post date",
    "datum",
    "buchungstag",
    "buchungsdatum",
    "buchung",
    "valuta",
    "wertstellung",
    "wert",
    "tag",
    "date opération",
    "date d'opération",
    "date de valeur",
    "date valeur",
    "valeur",
    "boekdatum",
    "rentedatum",
    "fecha",
    "fecha valor",
    "f valor",
    "fecha operación",
    "data",
    "data valuta",
    "data operazione",
    "period",
    "zeitraum",
    "période",
    "periode",
    "periodo",
  ],
  description: [
    "description",
    "details",
    "transaction",
    "transaction details",
    "particulars",
    "narrative",
    "memo",
    "payee",
    "merchant",
    "item",
    "items",
    "product",
    "service",
    "services",
    "article",
    "earnings",
    "deductions",
    "payments",
    "type",
    "beschreibung",
    "bezeichnung",
    "verwendungszweck",
    "buchungstext",
    "vorgang",
    "text",
    "artikel",
    "leistung",
    "position",
    "bezüge",
    "abzüge",
    "lohnart",
    "libellé",
    "désignation",
    "opération",
    "opérations",
    "nature de l'opération",
    "détail",
    "rubrique",
    "rubriques",
    "éléments de paie",
    "omschrijving",
    "mededeling",
    "artikel",
    "concepto",
    "descripción",
    "artículo",
    "devengos",
    "deducciones",
    "descrizione",
    "causale",
    "articolo",
    "voce",
    "competenze",
    "trattenute",
  ],
  reference: [
    "reference",
    "ref",
    "ref no",
    "cheque no",
    "check no",
    "code",
    "sku",
    "art no",
    "beleg",
    "belegnr",
    "artikelnr",
    "art nr",
    "référence",
    "réf",
    "referentie",
    "referencia",
    "riferimento",
    "pos",
    "no",
    "nr",
    "n°",
    "#",
  ],
  debit: [
    "debit",
    "debits",
    "withdrawal",
    "withdrawals",
    "paid out",
    "money out",
    "payments out",
    "out",
    "charges",
    "debit amount",
    "soll",
    "belastung",
    "belastungen",
    "lastschrift",
    "ausgang",
    "ausgänge",
    "auszahlung",
    "débit",
    "débits",
    "retraits",
    "af",
    "afschrijving",
    "debet",
    "cargo",
    "cargos",
    "debe",
    "adeudo",
    "dare",
    "addebiti",
    "addebito",
    "uscite",
    "sorties",
    "sortie",
    "afschrijvingen",
    "uitgaven",
    "salidas",
    "retiros",
  ],
  credit: [
    "credit",
    "credits",
    "deposit",
    "deposits",
    "paid in",
    "money in",
    "in",
    "receipts",
    "credit amount",
    "haben",
    "gutschrift",
    "gutschriften",
    "eingang",
    "eingänge",
    "einzahlung",
    "crédit",
    "crédits",
    "versements",
    "bij",
    "bijschrijving",
    "abono",
    "abonos",
    "haber",
    "ingresos",
    "avere",
    "accrediti",
    "accredito",
    "entrate",
    "entrées",
    "entrée",
    "bijschrijvingen",
    "ontvangsten",
    "entradas",
  ],
  amount: [
    "amount",
    "value",
    "sum",
    "this period",
    "current",
    "betrag",
    "umsatz",
    "summe",
    "wert",
    "montant",
    "somme",
    "bedrag",
    "som",
    "importe",
    "importo",
    "ammontare",
    "monto",
    "valor",
    "à payer",
    "à déduire",
    "gain",
    "retenue",
  ],
  balance: [
    "balance",
    "running balance",
    "account balance",
    "saldo",
    "kontostand",
    "solde",
    "saldo contable",
  ],
  quantity: [
    "qty",
    "quantity",
    "units",
    "hours",
    "hrs",
    "days",
    "pcs",
    "menge",
    "anzahl",
    "stück",
    "stk",
    "std",
    "stunden",
    "tage",
    "quantité",
    "qté",
    "qte",
    "nombre",
    "nb",
    // The base a rate applies to (a payslip's contribution, a tax breakdown's taxable amount: reader.ts
    // taxBaseUnderBase makes it the tax base there).
    "base",
    "basis",
    "grundlage",
    "assiette",
    "heures",
    "jours",
    "aantal",
    "aant",
    "aant.",
    "hoeveelheid",
    "uren",
    "cantidad",
    "cant",
    "unidades",
    "uds",
    "uds.",
    "horas",
    "quantità",
    "qtà",
    "q tà",
    "ore",
    "giorni",
  ],
  unit: ["unit", "uom", "einheit", "me", "unité", "eenheid", "unidad", "unità", "um"],
  unit_price: [
    "unit price",
    "price",
    "rate",
    "unit cost",
    "price per unit",
    "cost",
    "einzelpreis",
    "einzelpr",
    "einzelpr netto",
    "stückpr",
    "preis je einheit",
    "preis/einheit",
    "unit pr",
    "precio u",
    "prezzo un",
    "prezzo unit",
    "preis",
    "e preis",
    "ep",
    "stückpreis",
    "satz",
    "prix unitaire",
    "prix unit",
    "prix",
    "pu",
    "p u",
    "tarif",
    "taux",
    "stukprijs",
    "prijs",
    "eenheidsprijs",
    "tarief",
    "precio unitario",
    "precio",
    "p unit",
    "precio unidad",
    "prezzo unitario",
    "prezzo",
    "tariffa",
    "costo unitario",
    // An hourly or daily rate (payslips, timesheets).
    "hourly rate",
    "rate per hour",
    "stundenlohn",
    "stundensatz",
    "lohnsatz",
    "taux horaire",
    "uurloon",
    "uurtarief",
    "dagtarief",
    "precio hora",
    "tarifa hora",
    "paga oraria",
    "tariffa oraria",
    // A unit price net of tax ("Net price" is no net line amount).
    "net price",
    "net unit price",
    "unit price net",
    "price net",
    "prix unitaire ht",
    "prix ht",
    "pu ht",
    "nettopreis",
    "einzelpreis netto",
    "netto einzelpreis",
    "nettoprijs",
    "precio neto",
    "prezzo netto",
  ],
  line_total: [
    "total",
    "line total",
    "net",
    "net amount",
    "total price",
    "gesamt",
    "gesamtpreis",
    "gesamtbetrag",
    "nettobetrag",
    "netto",
    "total ht",
    "montant ht",
    "prix total",
    "totaal",
    "netto bedrag",
    "importe total",
    "total neto",
    "totale",
    "importo totale",
  ],
  tax_rate: [
    "vat %",
    "vat rate",
    "tax %",
    "tax rate",
    "ust %",
    "ust satz",
    "mwst %",
    "mwst satz",
    "steuersatz",
    "steuer %",
    "taux tva",
    "tva %",
    "% tva",
    "btw %",
    "btw tarief",
    "% btw",
    "iva %",
    "% iva",
    "tipo iva",
    "aliquota",
    "aliquota iva",
    "%",
  ],
  tax_base: [
    "tax base",
    "vat base",
    "taxable amount",
    "taxable",
    "net value",
    "bemessungsgrundlage",
    "steuerbasis",
    "steuerpflichtiger betrag",
    "base tva",
    "base ht",
    "base imposable",
    "grondslag",
    "maatstaf van heffing",
    "base imponible",
    "imponibile",
    "base imponibile",
  ],
  tax_amount: [
    "vat",
    "tax",
    "vat amount",
    "tax amount",
    "ust",
    "mwst",
    "steuer",
    "steuerbetrag",
    "tva",
    "montant tva",
    "btw",
    "btw bedrag",
    "iva",
    "cuota iva",
    "importo iva",
  ],
  discount: ["discount", "rabatt", "nachlass", "remise", "rabais", "korting", "descuento", "dto", "sconto"],
  ytd: [
    "ytd",
    "year to date",
    "ytd amount",
    "jahr",
    "lfd jahr",
    "kumuliert",
    "jahressumme",
    "cumul",
    "cumulé",
    "cumul annuel",
    "jaar",
    "cumulatief",
    "acumulado",
    "progressivo",
    "progressivi",
    // Year to date in the six languages, as payslips head the column ("T/m periode": up to this period).
    "year to date total",
    "ytd total",
    "to date",
    "cumulative",
    "jahreswert",
    "jahreswerte",
    "jahresbetrag",
    "aufgelaufen",
    "kumuliert jahr",
    "cumul annuel",
    "cumul année",
    "cumul depuis janvier",
    "cumuls",
    "t m periode",
    "tot en met periode",
    "t m deze periode",
    "cumulatief t m",
    "cum",
    "acumulado anual",
    "acumulado año",
    "acumulados",
    "progressivo annuo",
    "progressivi annui",
    "da inizio anno",
    // Abbreviated ("Acum. año", "Kum. Jahr", "Progr. anno"): the header's dot removed by normaliseHeader.
    "acum",
    "acum año",
    "acum anual",
    "kum",
    "kum jahr",
    "progr",
    "progr anno",
  ],
};

const HEADER_INDEX = new Map<string, ColumnRole>();
for (const role of COLUMN_ROLES)
  for (const w of HEADERS[role]) if (!HEADER_INDEX.has(w)) HEADER_INDEX.set(w, role);

/**
 * A label as matched against the vocabulary: typographic ligatures (ﬁ, ﬂ, ﬀ, ﬃ, ﬄ, ﬅ, ﬆ) spelled out, as
 * NFKC writes them, so "ﬁnal balance" and "Net ﬁscal" are the words they read as. Only the ligatures are
 * folded: the figures of a line are never touched.
 */
export function foldLigatures(text: string): string {
  const folded = /[\uFB00-\uFB06]/.test(text)
    ? text.replace(/[\uFB00-\uFB06]/g, (c) => c.normalize("NFKC"))
    : text;
  const unswapped = /[\u4100-\u7A00]/.test(folded) ? folded.replace(SWAPPED, unswap) : folded;
  return JUNK.test(unswapped) ? spellJunk(unswapped) : unswapped;
}

/**
 * A ligature a re-encoding (a Ghostscript re-distil) mapped to a character no word holds: "Total deduc}ons" for
 * "Total deductions". Each such character between letters is read as the ligature under which the text names the
 * most labels the vocabulary knows (a deductions total, not only a total); none naming more, the text stays as it is.
 */
const JUNK = /[A-Za-z][}{~^\\]+[a-z]/;
const LIGATURE_LETTERS = ["ti", "fi", "fl", "ff", "ffi", "ffl", "tt", "ft", "st"];
function spellJunk(text: string): string {
  const named = (t: string) =>
    Object.values(LABELS).filter((re) => re instanceof RegExp && !re.global && re.test(t)).length;
  let best = text;
  let most = named(text);
  for (const letters of LIGATURE_LETTERS) {
    const t = text.replace(/(?<=[A-Za-z])[}{~^\\]+(?=[a-z])/g, letters);
    const n = named(t);
    if (n > most) [best, most] = [t, n];
  }
  return best;
}

/**
 * A ligature whose ToUnicode entry was written with its UTF-16 bytes swapped: "ti" as U+7400 U+6900 ("琀椀"),
 * so "Deductions" reads "Deduc琀椀ons" (seen from print-to-PDF pipelines). Characters U+4100-U+7A00 whose low
 * byte is zero and whose high byte is a Latin letter, in a run touching a Latin letter, are those letters
 * (docs/decisions.md "Unseen layouts"); CJK text elsewhere is left alone.
 */
const SWAPPED = /(?<=[A-Za-z])[\u4100-\u7A00]+|[\u4100-\u7A00]+(?=[A-Za-z])/g;
function unswap(run: string): string {
  const out = [...run].map((c) => {
    const code = c.charCodeAt(0);
    const hi = code >> 8;
    return (code & 0xff) === 0 && ((hi >= 0x41 && hi <= 0x5a) || (hi >= 0x61 && hi <= 0x7a))
      ? String.fromCharCode(hi)
      : undefined;
  });
  return out.every((c) => c !== undefined) ? out.join("") : run;
}

/** A header cell as compared: lower case, no currency marks, bracketed units, dots or colons. */
export function normaliseHeader(text: string): string {
  return foldLigatures(text)
    .toLowerCase()
    .replace(/\((?:[^)]{0,12})\)|\[(?:[^\]]{0,12})\]/g, " ")
    .replace(/\b(?:in|en|em)\s+(?:eur|gbp|usd|chf|[€£$])\s*$/g, " ")
    .replace(/[€£$¥]|\b(?:eur|gbp|usd|chf)\b/g, " ")
    .replace(/[.:/_\-–]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** The role a header cell names, or undefined. */
export function headerRole(text: string): ColumnRole | undefined {
  const n = normaliseHeader(text);
  if (!n || n.length > 40) return undefined;
  const direct = HEADER_INDEX.get(n);
  if (direct) return direct;
  // "Amount EUR", "Betrag in €", "Menge/Einheit": the role word first, then at most a short qualifier.
  const words = n.split(" ");
  for (let k = Math.min(3, words.length - 1); k >= 1; k--) {
    const head = HEADER_INDEX.get(words.slice(0, k).join(" "));
    if (head && words.length - k <= 1) return head;
  }
  return undefined;
}

/** Labels of rows (EN, DE, FR, NL, ES, IT). */
export const LABELS = {
  opening:
    /(?<![\p{L}\p{N}])(opening balance|balance brought forward|brought forward|beginning balance|starting balance|(?:balance|saldo) at (?:the )?start\b|start(?:ing)? balance|previous (statement )?balance|balance forward|anfangssaldo|alter (kontostand|saldo)|saldovortrag|saldo vortrag|vortrag|übertrag vom|kontostand alt|saldo alt|solde pr[ée]c[ée]dent|ancien solde|solde initial|solde d'ouverture|solde au d[ée]but|solde report[ée]|report (du|de la) page|beginsaldo|vorig saldo|saldo vorig|saldo iniziale|saldo precedente|saldo inicial|saldo anterior)(?![\p{L}\p{N}])/iu,
  closing:
    /(?<![\p{L}\p{N}])(closing balance|ending balance|new balance|final balance|balance at (?:the )?end\b|end balance|balance carried forward|carried forward|endsaldo|neuer (kontostand|saldo)|schlusssaldo|kontostand neu|saldo neu|übertrag auf|nouveau solde|solde final|solde de cl[ôo]ture|solde au \d|solde [àa] reporter|[àa] reporter|eindsaldo|nieuw saldo|saldo finale|saldo final|saldo actual|nuevo saldo)(?![\p{L}\p{N}])/iu,
  /** A balance handed from one page to the next (either end): compared, never summed. */
  carry:
    /^(?:(?:(?:saldo|solde|balance|bal\.?)\s+)?(?:übertrag|vortrag|saldovortrag|report|riporto|transport|a riportare|[àa] reporter|suma y sigue|b\/f|c\/f)\b(?:\s*(?:von|vom|auf|from|to|de la|du|sur|da|alla|van|naar)?\s*(?:seite|page|pagina|blatt|p\.)?\s*\d*)?[\s:.]*$|.*\b(?:brought forward|carried forward|balance forward)\b)/i,
  totalIn:
    /\b(total (money in|deposits|credits|paid in|receipts|incoming)|deposits and (other )?(additions|credits)|summe haben|summe gutschriften|summe eingänge|total des cr[ée]dits|total cr[ée]dits?|total des versements|totaal bij|total abonos|total haber|suma (?:haber|abonos|ingresos|de abonos)|total ingresos|totale avere|totale accrediti|totale entrate)\b/i,
  totalOut:
    /\b(total (money out|withdrawals|debits|paid out|payments|outgoing)|withdrawals and (other )?(subtractions|debits)|summe soll|summe lastschriften|summe belastungen|summe ausgänge|total des d[ée]bits|total d[ée]bits?|totaal af|total cargos|total debe|suma (?:debe|cargos|adeudos|de cargos)|total (?:cargos|adeudos)|totale dare|totale addebiti|totale uscite)\b/i,
  subtotal:
    /\b(sub-?total|zwischensumme|nettobetrag|summe netto|gesamt netto|netto gesamt|gesamtnetto|rechnungssumme netto|net amount|total net|net total|total (excl\.?|excluding|before|ex\.?) (vat|tax)|total ht|montant ht|sous-total|sous total|subtotaal|totaal excl\w*|imponibile|base imponible|subtotale)\b/i,
  totalish:
    /\b(sub-?total|total|totals|summe|gesamt\w*|zwischensumme|nettobetrag|rechnungssumme\w*|amount due|balance due|zu zahlen\w*|rechnungsbetrag|endbetrag|gross pay|gross earnings|gesamtbrutto|salaire brut|sous-total|montant (ttc|ht|total)|net [àa] payer|[àa] payer|totaal\w*|eindtotaal|totalbetrag|endsumme|totalsumme|importe total|totale)\b/i,
  tax: /\b(vat|tax|ust\.?|mwst\.?|umsatzsteuer|mehrwertsteuer|gst|hst|tva|btw|iva)\b/i,
  /** A row stating the base a tax is computed on, not the tax. */
  taxBase: /(basis|base|bemessungsgrundlage|grundlage|\bht\b|\bexcl|\bnet amount|\bnetto\b|imponib)/i,
  taxIncluded:
    /\b(incl\.?|included|including|of which|inkl\.?|inklusive|enthalten\w*|enth\.?|davon|dont|inclus\w*|inbegrepen|waarvan|incluido|de los cuales|inclusa|di cui)\b/i,
  /** A tax named in any of the six languages, compounds included ("Versicherungsteuer"). */
  anyTax: /(vat|tax|ust\b|mwst|steuer|tva|btw|iva\b|gst|hst)/i,
  /** Discounts and surcharges: amounts a block adds or subtracts, never tax lines even with a rate. */
  discount:
    /\b(rabatt\w*|nachlass|sondernachlass|abschlag|skonto|discount|remise|rabais|escompte|r[ée]duction|korting|descuento|sconto|reduction)\b/i,
  gross:
    /\b(gross|brutto|gesamtbrutto|gesamtbezüge|summe bezüge|total (payments|earnings)|brut|salaire brut|total des gains|bruto|brutoloon|totaal bruto|total devengado|lordo|totale competenze)\b/i,
  deductionsTotal:
    /\b(total deductions|deductions|summe abzüge|abzüge|gesetzliche abzüge|gesamtabzüge|total des retenues|retenues|total (?:des )?cotisations(?: salariales)?|total [àa] d[ée]duire|inhoudingen|deducciones|total a deducir|trattenute)\b/i,
  net: /\b(net pay|net salary|net wages|take[- ]home pay|auszahlungsbetrag|nettoverdienst|nettolohn|netto lfd|net pay ytd|netto|nettoloon|net [àa] payer|net pay[ée]|salaire net|neto|l[ií]quido (?:total )?a percibir|netto in busta)\b/i,
  ytd: /\b(ytd|year to date|lfd\.? jahr|jahressumme\w*|kumuliert|cumul\w*|annuel|jaar|acumulado|progressiv\w*)\b|\b(?:kum|acum|progr)\./i,
  minus: /^(minus|less|abzüglich|abzgl\.?|deduct|moins|[-−])\b/i,
  /** Money already paid, taken off what is still due ("Acompte", "Anzahlung", "Amount paid"). */
  /** The change a receipt gives back: what was tendered minus the total. */
  change:
    /\b(change|change due|your change|r[üu]ckgeld|wechselgeld|rendu|monnaie rendue|[àa] rendre|wisselgeld|terug|zur[üu]ck|cambio|vuelta|vueltas|resto)\b/i,
  paid: /\b(amount paid|already paid|payments? received|deposit paid|prepaid|paid on account|bereits (bezahlt|gezahlt)|anzahlung|geleistete (zahlung|anzahlung)\w*|acompte|d[ée]j[àa] (pay[ée]|vers[ée])|aanbetaling|reeds betaald|anticipo|ya pagado|acconto|gi[àa] pagato)\b/i,
  /**
   * The amount a document asks to be paid (or pays out), printed again in a summary box or a payment
   * slip: every copy must agree.
   */
  payable:
    /\b(amount due|total due|balance due|amount payable|total to pay|rechnungsbetrag|zahlbetrag|zu zahlen\w*|offener betrag|auszahlungsbetrag|net pay|net [àa] payer|montant (ttc )?[àa] payer|total ttc|montant ttc|totaal te betalen|te betalen|importe a pagar|total a pagar|totale da pagare|importo da pagare)\b/i,
  /**
   * A line that states a measure, not money ("Total weight (kg) 12.50", "Total hours 162.50", "Gewicht
   * 4.20"): a total of a measure, a weight or volume, or a unit in brackets. ("Hours 1,200.00" alone may be
   * a consulting line's amount: not a measure.)
   */
  measure:
    /^(?:(?:total|gesamt|summe|totaal|totale|total des?)\s+(?:(?:net|gross|brutto|netto)\s+)?(?:weight|gewicht|poids|peso|volume|quantity|qty|menge|anzahl|count|nombre|aantal|cantidad|quantit[àa]|units|pieces|st[üu]ck|colli|packages|parcels|pallets|cartons|hours|stunden|heures|uren|horas|ore|days|tage|jours|dagen|d[íi]as|giorni|km|kwh|litres|liters)|(?:(?:net|gross|brutto|netto)\s+)?(?:weight|gewicht|poids|peso|volume))\b|\((?:kg|g|t|lbs?|h|hrs|m3|m²|kwh|l|km|pcs|stk)\)/i,
  /** An amount printed for information, accrued or reserved but not paid: no term of the sums around it. */
  memo: /\b(reservering|gereserveerd|opgebouwd|accrued|accrual|reserved|r[üu]ckstellung|for information( only)?|pour information|[àa] titre indicatif|ter informatie|zur information|nur zur info\w*|a titolo informativo|a efectos informativos)\b/i,
  /** A payslip's taxable pay: gross less pre-tax deductions, printed as the base of the taxes. */
  wageBase:
    /\b(taxable (wages|pay|income|earnings|gross|salary)|(federal|state) taxable( wages)?|steuerbrutto|steuer-brutto|sv-brutto|lohnsteuer-?brutto|salaire imposable|net imposable|net fiscal|belastbaar loon|fiscaal loon|base irpf|imponibile (fiscale|previdenziale))\b/i,
  /** Identifiers whose digit groups are never amounts (and whose wrapped tail is no figure either). */
  identifier:
    /\b(iban|bic|swift|sort code|account (no|number)|acct|routing|aba|konto(nummer)?|kto|blz|rib|cl[ée] rib|n° de compte|rekeningnummer|cuenta|conto|codice|reference|referenz|verwendungszweck|mandat\w*|gläubiger-id|creditor id|tax id|ust-id\w*|vat (reg|no|number)|siret|siren|steuer-?(id|nummer))\b/i,
} as const;

export const isStatementLabel = (label: string) =>
  LABELS.opening.test(label) ||
  LABELS.closing.test(label) ||
  LABELS.totalIn.test(label) ||
  LABELS.totalOut.test(label);

/** Words that may stand beside a tax word and its rate in a tax row ("plus 20% VAT", "zzgl. 19 % USt."). */
const TAX_FILLER =
  /\b(zzgl\.?|zuzüglich|plus|add|at|on|of|von|auf|sur|de|du|la|le|davon|enthaltene|incl\.?|inkl\.?|including|dont|y compris|total|summe|gesamt|over|su|sobre)\b|[@+():.]/gi;

/**
 * A row printing a tax at a rate: the tax word comes before the rate, or nothing but filler words stands
 * beside them (a line item that carries a tax category column, "Frachtbetrag 19% VAT(S)", is no tax row);
 * it is not the base the tax is computed on, and not a discount.
 */
export function isTaxRow(label: string): boolean {
  const rate = /\d+(?:[.,]\d+)?\s?%/.exec(label);
  const tax = LABELS.tax.exec(label);
  if (!rate || !tax) return false;
  if (LABELS.discount.test(label) || LABELS.taxBase.test(label)) return false;
  if (tax.index < rate.index) return true;
  const rest = label.replace(rate[0], " ").replace(LABELS.tax, " ").replace(TAX_FILLER, " ");
  return rest.trim() === "";
}
