import { DOC_TYPE_WORDS, type DocType } from "../core/verdict.js";

/**
 * Document-type classifier over extracted text: weighted phrase features per type, in English, German, French,
 * Dutch, Spanish and Italian (the labels each language prints on statements, payslips, invoices, bills, IDs,
 * contracts, receipts, tax returns and loan applications). Deterministic and explainable: the result lists the
 * phrases that decided it. A type counts as recognised only from CLASSIFIER.confident on (see decideDocType).
 */

export interface Classification {
  docType: DocType;
  /** 0-1: how sure the classifier is (strength of the evidence and its margin over the runner-up). */
  confidence: number;
  /** What the document appears to be in plain words, e.g. "electricity bill", "payslip", "passport". */
  plainWords: string;
  /** The phrases found in the text that support `docType`, strongest first. */
  evidence: string[];
}

/**
 * A phrase feature. A string matches as whole words, case-insensitive, with any run of spaces or hyphens
 * where it has a space; a trailing `*` lets the last word continue (German compounds: `kontoauszug*`).
 * A RegExp is used as given (for structured tokens such as MRZ lines).
 */
export interface Feature {
  match: string | RegExp;
  weight: number;
  /** Names a more specific kind in plain words (e.g. "electricity bill") when its features dominate. */
  subtype?: string;
  /** Evidence label for RegExp features (default: the matched text). */
  label?: string;
}

type KnownType = Exclude<DocType, "other">;

export const DOC_TYPE_FEATURES: Record<KnownType, Feature[]> = {
  bank_statement: [
    { match: "bank statement", weight: 5 },
    { match: "account statement", weight: 4 },
    { match: "statement of account", weight: 4 },
    { match: "statement period", weight: 4 },
    { match: "statement date", weight: 2 },
    { match: "opening balance", weight: 4 },
    { match: "closing balance", weight: 4 },
    { match: "balance brought forward", weight: 3 },
    { match: "balance carried forward", weight: 3 },
    { match: "available balance", weight: 2 },
    { match: "sort code", weight: 3 },
    { match: "iban", weight: 2 },
    { match: "bic", weight: 1 },
    { match: "swift", weight: 1 },
    { match: "account number", weight: 1 },
    { match: "standing order", weight: 2 },
    { match: "direct debit", weight: 1 },
    { match: "paid in", weight: 1 },
    { match: "paid out", weight: 1 },
    { match: "withdrawals", weight: 2 },
    { match: "deposits", weight: 1 },
    { match: "kontoauszug*", weight: 5 },
    { match: "kontostand", weight: 3 },
    { match: "alter kontostand", weight: 3 },
    { match: "neuer kontostand", weight: 3 },
    { match: "buchungstag", weight: 3 },
    { match: "wertstellung", weight: 3 },
    { match: "valuta", weight: 2 },
    { match: "saldo", weight: 2 },
    { match: "umsätze", weight: 1 },
    { match: "girokonto", weight: 3 },
    // French
    { match: "relevé de compte", weight: 5 },
    { match: "relevé de comptes", weight: 5 },
    { match: "relevé bancaire", weight: 5 },
    { match: "ancien solde", weight: 4 },
    { match: "nouveau solde", weight: 4 },
    { match: "solde créditeur", weight: 3 },
    { match: "solde débiteur", weight: 3 },
    { match: "date de valeur", weight: 3 },
    { match: "total des opérations", weight: 3 },
    { match: "date d'arrêté", weight: 2 },
    { match: "prélèvement", weight: 1 },
    { match: "virement", weight: 1 },
    // Dutch
    { match: "rekeningafschrift", weight: 5 },
    { match: "bankafschrift", weight: 5 },
    { match: "dagafschrift", weight: 5 },
    { match: "vorig saldo", weight: 4 },
    { match: "nieuw saldo", weight: 4 },
    { match: "beginsaldo", weight: 4 },
    { match: "eindsaldo", weight: 4 },
    { match: "rentedatum", weight: 3 },
    { match: "boekdatum", weight: 3 },
    { match: "bij- en afschrijvingen", weight: 3 },
    { match: "overboeking", weight: 1 },
    // Spanish
    { match: "extracto bancario", weight: 5 },
    { match: "extracto de cuenta", weight: 5 },
    { match: "extracto de movimientos", weight: 5 },
    { match: "saldo anterior", weight: 4 },
    { match: "saldo final", weight: 4 },
    { match: "saldo inicial", weight: 4 },
    { match: "fecha valor", weight: 3 },
    { match: "fecha operación", weight: 2 },
    { match: "movimientos", weight: 2 },
    { match: "transferencia", weight: 1 },
    // Italian
    { match: "estratto conto", weight: 5 },
    { match: "saldo iniziale", weight: 4 },
    { match: "saldo finale", weight: 4 },
    { match: "saldo contabile", weight: 3 },
    { match: "saldo disponibile", weight: 2 },
    { match: "data valuta", weight: 3 },
    { match: "data contabile", weight: 3 },
    { match: "movimenti", weight: 2 },
    { match: "bonifico", weight: 1 },
  ],
  payslip: [
    { match: "payslip", weight: 5 },
    { match: "pay slip", weight: 5 },
    { match: "pay stub", weight: 5 },
    { match: "pay statement", weight: 4 },
    { match: "earnings statement", weight: 4 },
    { match: "gross pay", weight: 4 },
    { match: "net pay", weight: 4 },
    { match: "gross earnings", weight: 3 },
    { match: "national insurance", weight: 3 },
    { match: "ni number", weight: 2 },
    { match: "paye", weight: 3 },
    { match: "tax code", weight: 2 },
    { match: "pay period", weight: 3 },
    { match: "pay date", weight: 2 },
    { match: "year to date", weight: 2 },
    { match: "ytd", weight: 1 },
    { match: "employee id", weight: 2 },
    { match: "employee no", weight: 2 },
    { match: "employer", weight: 1 },
    { match: "deductions", weight: 2 },
    { match: "overtime", weight: 1 },
    { match: "basic salary", weight: 2 },
    { match: "pension contribution", weight: 1 },
    { match: "federal withholding", weight: 2 },
    { match: "gehaltsabrechnung", weight: 5 },
    { match: "lohnabrechnung", weight: 5 },
    { match: "entgeltabrechnung", weight: 5 },
    { match: "verdienstabrechnung", weight: 5 },
    { match: "bruttolohn", weight: 3 },
    { match: "bruttogehalt", weight: 3 },
    { match: "gesamtbrutto", weight: 3 },
    { match: "nettolohn", weight: 3 },
    { match: "nettogehalt", weight: 3 },
    { match: "auszahlungsbetrag", weight: 3 },
    { match: "lohnsteuer", weight: 3 },
    { match: "solidaritätszuschlag", weight: 1 },
    { match: "kirchensteuer", weight: 1 },
    { match: "steuerklasse", weight: 2 },
    { match: "personalnummer", weight: 2 },
    { match: "rentenversicherung", weight: 1 },
    { match: "krankenversicherung", weight: 1 },
    { match: "paystub", weight: 5 },
    { match: "paycheck", weight: 2 },
    // French
    { match: "bulletin de paie", weight: 5 },
    { match: "bulletin de salaire", weight: 5 },
    { match: "fiche de paie", weight: 5 },
    { match: "salaire brut", weight: 4 },
    { match: "net à payer", weight: 4 },
    { match: "salaire de base", weight: 2 },
    { match: "cotisations salariales", weight: 3 },
    { match: "cotisations", weight: 2 },
    { match: "csg", weight: 2 },
    { match: "crds", weight: 2 },
    { match: "urssaf", weight: 2 },
    { match: "période de paie", weight: 3 },
    { match: "prélèvement à la source", weight: 2 },
    { match: "convention collective", weight: 2 },
    { match: "matricule", weight: 1 },
    // Dutch
    { match: "loonstrook", weight: 5 },
    { match: "salarisstrook", weight: 5 },
    { match: "loonspecificatie", weight: 5 },
    { match: "brutoloon", weight: 4 },
    { match: "nettoloon", weight: 4 },
    { match: "bruto salaris", weight: 3 },
    { match: "netto salaris", weight: 3 },
    { match: "loonheffing", weight: 3 },
    { match: "loonperiode", weight: 3 },
    { match: "vakantiegeld", weight: 2 },
    { match: "personeelsnummer", weight: 2 },
    { match: "werknemer", weight: 1 },
    // Spanish
    { match: "nómina", weight: 5 },
    { match: "recibo de salarios", weight: 5 },
    { match: "recibo de nómina", weight: 5 },
    { match: "total devengado", weight: 4 },
    { match: "total a deducir", weight: 4 },
    { match: "líquido a percibir", weight: 4 },
    { match: "salario base", weight: 3 },
    { match: "devengos", weight: 3 },
    { match: "periodo de liquidación", weight: 3 },
    { match: "irpf", weight: 2 },
    { match: "contingencias comunes", weight: 2 },
    { match: "trabajador", weight: 1 },
    // Italian
    { match: "busta paga", weight: 5 },
    { match: "cedolino", weight: 5 },
    { match: "retribuzione lorda", weight: 4 },
    { match: "netto in busta", weight: 4 },
    { match: "netto a pagare", weight: 3 },
    { match: "totale competenze", weight: 3 },
    { match: "totale trattenute", weight: 3 },
    { match: "periodo di paga", weight: 3 },
    { match: "trattenute", weight: 2 },
    { match: "irpef", weight: 2 },
    { match: "inps", weight: 2 },
    { match: "tfr", weight: 2 },
    { match: "matricola", weight: 1 },
  ],
  invoice: [
    { match: "invoice", weight: 3 },
    { match: "tax invoice", weight: 3 },
    { match: "invoice number", weight: 4 },
    { match: "invoice no", weight: 4 },
    { match: "invoice date", weight: 3 },
    { match: "bill to", weight: 3 },
    { match: "ship to", weight: 2 },
    { match: "payment terms", weight: 3 },
    { match: "net 30", weight: 2 },
    { match: "unit price", weight: 3 },
    { match: "qty", weight: 2 },
    { match: "subtotal", weight: 2 },
    { match: "amount due", weight: 2 },
    { match: "vat number", weight: 2 },
    { match: "vat reg", weight: 2 },
    { match: "purchase order", weight: 2 },
    { match: "po number", weight: 2 },
    { match: "rechnung", weight: 4 },
    { match: "rechnungsnummer", weight: 5 },
    { match: "rechnungsdatum", weight: 4 },
    { match: "leistungsdatum", weight: 3 },
    { match: "lieferdatum", weight: 2 },
    { match: "zahlungsziel", weight: 3 },
    { match: "ust-idnr", weight: 3 },
    { match: "umsatzsteuer", weight: 2 },
    { match: "mwst", weight: 1 },
    { match: "nettobetrag", weight: 2 },
    { match: "einzelpreis", weight: 3 },
    // French
    { match: "facture", weight: 4 },
    { match: "n° de facture", weight: 5 },
    { match: "numéro de facture", weight: 5 },
    { match: "date de facture", weight: 3 },
    { match: "total ht", weight: 3 },
    { match: "total ttc", weight: 3 },
    { match: "montant ht", weight: 3 },
    { match: "prix unitaire", weight: 3 },
    { match: "conditions de paiement", weight: 3 },
    { match: "tva intracommunautaire", weight: 2 },
    { match: "tva", weight: 2 },
    { match: "siret", weight: 2 },
    { match: "désignation", weight: 1 },
    // Dutch
    { match: "factuur", weight: 4 },
    { match: "factuurnummer", weight: 5 },
    { match: "factuurdatum", weight: 4 },
    { match: "eenheidsprijs", weight: 3 },
    { match: "stukprijs", weight: 3 },
    { match: "totaal incl. btw", weight: 3 },
    { match: "totaal excl. btw", weight: 3 },
    { match: "betalingstermijn", weight: 3 },
    { match: "subtotaal", weight: 2 },
    { match: "btw", weight: 2 },
    { match: "kvk", weight: 2 },
    { match: "vervaldatum", weight: 2 },
    // Spanish
    { match: "factura", weight: 4 },
    { match: "número de factura", weight: 5 },
    { match: "nº de factura", weight: 5 },
    { match: "fecha de factura", weight: 3 },
    { match: "base imponible", weight: 3 },
    { match: "precio unitario", weight: 3 },
    { match: "total factura", weight: 3 },
    { match: "forma de pago", weight: 2 },
    { match: "iva", weight: 2 },
    { match: "cif", weight: 2 },
    { match: "vencimiento", weight: 2 },
    // Italian
    { match: "fattura", weight: 4 },
    { match: "numero fattura", weight: 5 },
    { match: "data fattura", weight: 3 },
    { match: "imponibile", weight: 3 },
    { match: "prezzo unitario", weight: 3 },
    { match: "totale documento", weight: 3 },
    { match: "partita iva", weight: 2 },
    { match: "codice destinatario", weight: 2 },
    { match: "modalità di pagamento", weight: 2 },
  ],
  utility_bill: [
    { match: "electricity", weight: 3, subtype: "electricity bill" },
    { match: "kwh", weight: 3, subtype: "electricity bill" },
    { match: "mpan", weight: 4, subtype: "electricity bill" },
    { match: "electricity bill", weight: 5, subtype: "electricity bill" },
    { match: "gas bill", weight: 5, subtype: "gas bill" },
    { match: "natural gas", weight: 2, subtype: "gas bill" },
    { match: "mprn", weight: 4, subtype: "gas bill" },
    { match: "water bill", weight: 5, subtype: "water bill" },
    { match: "sewerage", weight: 3, subtype: "water bill" },
    { match: "wastewater", weight: 2, subtype: "water bill" },
    { match: "utility bill", weight: 5 },
    { match: "meter reading", weight: 4 },
    { match: "meter number", weight: 3 },
    { match: "previous reading", weight: 3 },
    { match: "present reading", weight: 3 },
    { match: "current reading", weight: 3 },
    { match: "standing charge", weight: 4 },
    { match: "unit rate", weight: 3 },
    { match: "tariff", weight: 2 },
    { match: "energy", weight: 1 },
    { match: "usage", weight: 1 },
    { match: "stromrechnung", weight: 5, subtype: "electricity bill" },
    { match: "strom*", weight: 2, subtype: "electricity bill" },
    { match: "gasrechnung", weight: 5, subtype: "gas bill" },
    { match: "erdgas", weight: 2, subtype: "gas bill" },
    { match: "wasserrechnung", weight: 5, subtype: "water bill" },
    { match: "abwasser", weight: 2, subtype: "water bill" },
    { match: "zählerstand", weight: 4 },
    { match: "zählernummer", weight: 3 },
    { match: "verbrauch", weight: 2 },
    { match: "abschlag*", weight: 3 },
    { match: "grundpreis", weight: 3 },
    { match: "arbeitspreis", weight: 3 },
    { match: "jahresabrechnung", weight: 2 },
    { match: "stadtwerke", weight: 3 },
    // French
    { match: "facture d'électricité", weight: 5, subtype: "electricity bill" },
    { match: "électricité", weight: 3, subtype: "electricity bill" },
    { match: "facture de gaz", weight: 5, subtype: "gas bill" },
    { match: "gaz naturel", weight: 2, subtype: "gas bill" },
    { match: "facture d'eau", weight: 5, subtype: "water bill" },
    { match: "eau potable", weight: 3, subtype: "water bill" },
    { match: "assainissement", weight: 3, subtype: "water bill" },
    { match: "relevé de compteur", weight: 4 },
    { match: "ancien index", weight: 3 },
    { match: "nouvel index", weight: 3 },
    { match: "index précédent", weight: 3 },
    { match: "n° de compteur", weight: 3 },
    { match: "point de livraison", weight: 3 },
    { match: "puissance souscrite", weight: 3 },
    { match: "consommation", weight: 2 },
    { match: "abonnement", weight: 2 },
    // Dutch
    { match: "energierekening", weight: 5 },
    { match: "jaarafrekening", weight: 4 },
    { match: "elektriciteit", weight: 3, subtype: "electricity bill" },
    { match: "aardgas", weight: 2, subtype: "gas bill" },
    { match: "waterrekening", weight: 5, subtype: "water bill" },
    { match: "drinkwater", weight: 3, subtype: "water bill" },
    { match: "meterstand", weight: 4 },
    { match: "meternummer", weight: 3 },
    { match: "vastrecht", weight: 3 },
    { match: "leveringskosten", weight: 3 },
    { match: "netbeheerkosten", weight: 3 },
    { match: "termijnbedrag", weight: 3 },
    { match: "ean-code", weight: 2 },
    { match: "verbruik", weight: 2 },
    // Spanish
    { match: "factura de la luz", weight: 5, subtype: "electricity bill" },
    { match: "factura de electricidad", weight: 5, subtype: "electricity bill" },
    { match: "electricidad", weight: 3, subtype: "electricity bill" },
    { match: "factura de gas", weight: 5, subtype: "gas bill" },
    { match: "factura del agua", weight: 5, subtype: "water bill" },
    { match: "término de potencia", weight: 3 },
    { match: "término de energía", weight: 3 },
    { match: "lectura anterior", weight: 3 },
    { match: "lectura actual", weight: 3 },
    { match: "cups", weight: 3 },
    { match: "contador", weight: 2 },
    { match: "consumo", weight: 2 },
    { match: "suministro", weight: 2 },
    // Italian
    { match: "bolletta", weight: 5 },
    { match: "bolletta luce", weight: 5, subtype: "electricity bill" },
    { match: "energia elettrica", weight: 3, subtype: "electricity bill" },
    { match: "bolletta gas", weight: 5, subtype: "gas bill" },
    { match: "gas naturale", weight: 2, subtype: "gas bill" },
    { match: "servizio idrico", weight: 3, subtype: "water bill" },
    { match: "lettura precedente", weight: 3 },
    { match: "lettura attuale", weight: 3 },
    { match: "contatore", weight: 2 },
    { match: "quota fissa", weight: 3 },
    { match: "oneri di sistema", weight: 3 },
    { match: "pod", weight: 2, subtype: "electricity bill" },
    { match: "pdr", weight: 2, subtype: "gas bill" },
  ],
  tax_return: [
    { match: "tax return", weight: 4 },
    { match: "form 1040", weight: 5 },
    { match: "individual income tax return", weight: 5 },
    { match: "adjusted gross income", weight: 4 },
    { match: "taxable income", weight: 3 },
    { match: "filing status", weight: 4 },
    { match: "standard deduction", weight: 3 },
    { match: "itemized deductions", weight: 3 },
    { match: "amount you owe", weight: 3 },
    { match: "sa100", weight: 5 },
    { match: "self assessment", weight: 4 },
    { match: "unique taxpayer reference", weight: 4 },
    { match: "utr", weight: 2 },
    { match: "einkommensteuererklärung", weight: 6 },
    { match: "steuererklärung", weight: 5 },
    { match: "anlage n", weight: 4 },
    { match: "anlage kap", weight: 3 },
    { match: "anlage vorsorgeaufwand", weight: 3 },
    { match: "finanzamt", weight: 2 },
    { match: "steuernummer", weight: 2 },
    { match: "identifikationsnummer", weight: 1 },
    { match: "zu versteuerndes einkommen", weight: 4 },
    { match: "werbungskosten", weight: 3 },
    { match: "veranlagungszeitraum", weight: 3 },
    // French
    { match: "déclaration de revenus", weight: 6 },
    { match: "avis d'impôt", weight: 5 },
    { match: "impôt sur le revenu", weight: 4 },
    { match: "revenu fiscal de référence", weight: 4 },
    { match: "revenu imposable", weight: 3 },
    { match: "nombre de parts", weight: 3 },
    { match: "numéro fiscal", weight: 3 },
    // Dutch
    { match: "aangifte inkomstenbelasting", weight: 6 },
    { match: "belastingaangifte", weight: 6 },
    { match: "inkomstenbelasting", weight: 4 },
    { match: "belastbaar inkomen", weight: 3 },
    { match: "voorlopige aanslag", weight: 3 },
    { match: "belastingdienst", weight: 3 },
    // Spanish
    { match: "declaración de la renta", weight: 6 },
    { match: "modelo 100", weight: 5 },
    { match: "agencia tributaria", weight: 3 },
    { match: "base liquidable", weight: 3 },
    { match: "cuota íntegra", weight: 3 },
    { match: "resultado de la declaración", weight: 4 },
    // Italian
    { match: "dichiarazione dei redditi", weight: 6 },
    { match: "modello 730", weight: 5 },
    { match: "modello redditi", weight: 5 },
    { match: "agenzia delle entrate", weight: 3 },
    { match: "reddito imponibile", weight: 3 },
    { match: "imposta lorda", weight: 3 },
    { match: "sostituto d'imposta", weight: 3 },
  ],
  id_document: [
    { match: "passport", weight: 4, subtype: "passport" },
    { match: "passport no", weight: 4, subtype: "passport" },
    { match: "passport number", weight: 4, subtype: "passport" },
    { match: "reisepass", weight: 5, subtype: "passport" },
    { match: /^P<[A-Z<]{3}[A-Z<]{10,}$/m, weight: 6, subtype: "passport", label: "passport MRZ line (P<)" },
    { match: "driving licence", weight: 5, subtype: "driving licence" },
    { match: "driver's license", weight: 5, subtype: "driving licence" },
    { match: "driver license", weight: 5, subtype: "driving licence" },
    { match: "führerschein", weight: 5, subtype: "driving licence" },
    { match: "identity card", weight: 5, subtype: "identity card" },
    { match: "personalausweis", weight: 5, subtype: "identity card" },
    // What OCR makes of identity documents (issue 22): accents dropped, US licence captions, the TD1 and
    // TD3 MRZ lines with their fillers misread as letters.
    { match: "carte d'identite", weight: 5, subtype: "identity card" },
    { match: "driver licence", weight: 5, subtype: "driving licence" },
    { match: "drivers license", weight: 5, subtype: "driving licence" },
    { match: "dln", weight: 3, subtype: "driving licence" },
    { match: "commercial driver", weight: 3, subtype: "driving licence" },
    { match: /^P[A-Z<][A-Z]{3}[A-Z<]{20,}$/m, weight: 4, subtype: "passport", label: "passport MRZ line" },
    {
      match: /^[A-Z0-9<]{6}\d[MFX<]\d{7}[A-Z<]{3}[A-Z0-9<]{11}\d$/m,
      weight: 4,
      subtype: "identity card",
      label: "TD1 MRZ data line",
    },
    {
      match: /^I[A-Z<][A-Z<]{3}[A-Z0-9<]{25}$/m,
      weight: 5,
      subtype: "identity card",
      label: "ID card MRZ line",
    },
    { match: /^[A-Z0-9<]{9}\d[A-Z<]{3}\d{7}[MFX<]\d{7}/m, weight: 5, label: "MRZ data line" },
    { match: "date of birth", weight: 2 },
    { match: "place of birth", weight: 3 },
    { match: "nationality", weight: 3 },
    { match: "date of issue", weight: 2 },
    { match: "date of expiry", weight: 3 },
    { match: "issuing authority", weight: 3 },
    { match: "given names", weight: 3 },
    { match: "geburtsdatum", weight: 2 },
    { match: "geburtsort", weight: 3 },
    { match: "staatsangehörigkeit", weight: 3 },
    { match: "gültig bis", weight: 2 },
    { match: "ausstellungsdatum", weight: 2 },
    { match: "identity document", weight: 4 },
    // French
    { match: "carte nationale d'identité", weight: 6, subtype: "identity card" },
    { match: "carte d'identité", weight: 5, subtype: "identity card" },
    { match: "passeport", weight: 5, subtype: "passport" },
    { match: "permis de conduire", weight: 5, subtype: "driving licence" },
    { match: "lieu de naissance", weight: 3 },
    { match: "nationalité", weight: 3 },
    { match: "date de naissance", weight: 2 },
    { match: "date d'expiration", weight: 3 },
    { match: "date de délivrance", weight: 2 },
    // Dutch
    { match: "identiteitskaart", weight: 5, subtype: "identity card" },
    { match: "identiteitsbewijs", weight: 5, subtype: "identity card" },
    { match: "paspoort", weight: 5, subtype: "passport" },
    { match: "rijbewijs", weight: 5, subtype: "driving licence" },
    { match: "geboorteplaats", weight: 3 },
    { match: "nationaliteit", weight: 3 },
    { match: "geboortedatum", weight: 2 },
    { match: "datum van afgifte", weight: 2 },
    { match: "geldig tot", weight: 2 },
    // Spanish
    { match: "documento nacional de identidad", weight: 6, subtype: "identity card" },
    { match: "dni", weight: 3, subtype: "identity card" },
    { match: "pasaporte", weight: 5, subtype: "passport" },
    { match: "permiso de conducir", weight: 5, subtype: "driving licence" },
    { match: "carnet de conducir", weight: 5, subtype: "driving licence" },
    { match: "lugar de nacimiento", weight: 3 },
    { match: "nacionalidad", weight: 3 },
    { match: "fecha de nacimiento", weight: 2 },
    { match: "fecha de caducidad", weight: 3 },
    { match: "fecha de expedición", weight: 2 },
    // Italian
    { match: "carta d'identità", weight: 5, subtype: "identity card" },
    { match: "carta di identità", weight: 5, subtype: "identity card" },
    { match: "passaporto", weight: 5, subtype: "passport" },
    { match: "patente di guida", weight: 5, subtype: "driving licence" },
    { match: "luogo di nascita", weight: 3 },
    { match: "cittadinanza", weight: 3 },
    { match: "data di nascita", weight: 2 },
    { match: "data di rilascio", weight: 2 },
  ],
  contract: [
    { match: "agreement", weight: 3 },
    { match: "this agreement", weight: 4 },
    { match: "hereinafter", weight: 4 },
    { match: "the parties", weight: 3 },
    { match: "governing law", weight: 4 },
    { match: "whereas", weight: 3 },
    { match: "in witness whereof", weight: 4 },
    { match: "indemnif*", weight: 3 },
    { match: "confidentiality", weight: 2 },
    { match: "termination", weight: 2 },
    { match: "jurisdiction", weight: 2 },
    { match: "effective date", weight: 2 },
    { match: "employment agreement", weight: 4, subtype: "employment contract" },
    { match: "employment contract", weight: 4, subtype: "employment contract" },
    { match: "tenancy agreement", weight: 4, subtype: "tenancy agreement" },
    { match: "lease agreement", weight: 4, subtype: "tenancy agreement" },
    { match: "landlord", weight: 2, subtype: "tenancy agreement" },
    { match: "tenant", weight: 2, subtype: "tenancy agreement" },
    { match: "vertrag", weight: 4 },
    { match: "vertragsparteien", weight: 4 },
    { match: "vereinbarung", weight: 3 },
    { match: "nachfolgend", weight: 3 },
    { match: "im folgenden", weight: 2 },
    { match: "gerichtsstand", weight: 4 },
    { match: "kündigung", weight: 2 },
    { match: "arbeitsvertrag", weight: 5, subtype: "employment contract" },
    { match: "arbeitnehmer", weight: 1, subtype: "employment contract" },
    { match: "mietvertrag", weight: 5, subtype: "tenancy agreement" },
    { match: "vermieter", weight: 2, subtype: "tenancy agreement" },
    { match: "mieter", weight: 2, subtype: "tenancy agreement" },
    { match: "kaufvertrag", weight: 5 },
    // French
    { match: "contrat", weight: 4 },
    { match: "entre les soussignés", weight: 5 },
    { match: "ci-après dénommé*", weight: 4 },
    { match: "les parties", weight: 3 },
    { match: "durée du contrat", weight: 3 },
    { match: "résiliation", weight: 2 },
    { match: "contrat de travail", weight: 5, subtype: "employment contract" },
    { match: "contrat de location", weight: 5, subtype: "tenancy agreement" },
    { match: "bailleur", weight: 2, subtype: "tenancy agreement" },
    { match: "locataire", weight: 2, subtype: "tenancy agreement" },
    // Dutch
    { match: "overeenkomst", weight: 4 },
    { match: "ondergetekenden", weight: 4 },
    { match: "hierna te noemen", weight: 4 },
    { match: "partijen", weight: 3 },
    { match: "opzegging", weight: 2 },
    { match: "arbeidsovereenkomst", weight: 5, subtype: "employment contract" },
    { match: "huurovereenkomst", weight: 5, subtype: "tenancy agreement" },
    { match: "verhuurder", weight: 2, subtype: "tenancy agreement" },
    { match: "huurder", weight: 2, subtype: "tenancy agreement" },
    // Spanish
    { match: "contrato", weight: 4 },
    { match: "reunidos", weight: 3 },
    { match: "en adelante", weight: 3 },
    { match: "las partes", weight: 3 },
    { match: "cláusulas", weight: 3 },
    { match: "rescisión", weight: 2 },
    { match: "contrato de trabajo", weight: 5, subtype: "employment contract" },
    { match: "contrato de arrendamiento", weight: 5, subtype: "tenancy agreement" },
    { match: "arrendador", weight: 2, subtype: "tenancy agreement" },
    { match: "arrendatario", weight: 2, subtype: "tenancy agreement" },
    // Italian
    { match: "contratto", weight: 4 },
    { match: "tra le parti", weight: 4 },
    { match: "di seguito denominat*", weight: 4 },
    { match: "premesso che", weight: 4 },
    { match: "foro competente", weight: 4 },
    { match: "recesso", weight: 2 },
    { match: "contratto di lavoro", weight: 5, subtype: "employment contract" },
    { match: "contratto di locazione", weight: 5, subtype: "tenancy agreement" },
    { match: "locatore", weight: 2, subtype: "tenancy agreement" },
    { match: "conduttore", weight: 2, subtype: "tenancy agreement" },
  ],
  receipt: [
    { match: "receipt", weight: 4 },
    { match: "cash receipt", weight: 4 },
    { match: "sales receipt", weight: 4 },
    { match: "thank you for your purchase", weight: 4 },
    { match: "thank you for shopping", weight: 4 },
    { match: "change due", weight: 4 },
    { match: "cash tendered", weight: 3 },
    { match: "tendered", weight: 2 },
    { match: "auth code", weight: 3 },
    { match: "contactless", weight: 2 },
    { match: "cashier", weight: 3 },
    { match: "terminal id", weight: 2 },
    { match: "till", weight: 1 },
    { match: "kassenbon", weight: 5 },
    { match: "quittung", weight: 5 },
    { match: "kassenbeleg", weight: 5 },
    { match: "rückgeld", weight: 4 },
    { match: "gegeben", weight: 1 },
    { match: "kasse", weight: 3 },
    { match: "vielen dank für ihren einkauf", weight: 4 },
    { match: "tse-signatur", weight: 3 },
    { match: "bon-nr", weight: 3 },
    // French
    { match: "ticket de caisse", weight: 5 },
    { match: "reçu", weight: 4 },
    { match: "merci de votre visite", weight: 4 },
    { match: "rendu monnaie", weight: 4 },
    { match: "caissier", weight: 3 },
    { match: "espèces", weight: 2 },
    // Dutch
    { match: "kassabon", weight: 5 },
    { match: "bedankt voor uw aankoop", weight: 4 },
    { match: "wisselgeld", weight: 4 },
    { match: "kassa", weight: 3 },
    { match: "contant", weight: 2 },
    // Spanish
    { match: "ticket de compra", weight: 5 },
    { match: "factura simplificada", weight: 4 },
    { match: "recibo", weight: 4 },
    { match: "gracias por su compra", weight: 4 },
    { match: "cajero", weight: 3 },
    { match: "efectivo", weight: 2 },
    { match: "entregado", weight: 2 },
    // Italian
    { match: "scontrino", weight: 5 },
    { match: "documento commerciale", weight: 4 },
    { match: "ricevuta", weight: 4 },
    { match: "grazie per l'acquisto", weight: 4 },
    { match: "contanti", weight: 2 },
    { match: "resto", weight: 2 },
  ],
  loan_application: [
    { match: "loan application", weight: 6 },
    { match: "application for credit", weight: 5 },
    { match: "credit application", weight: 5 },
    { match: "mortgage application", weight: 5 },
    { match: "loan amount", weight: 4 },
    { match: "amount requested", weight: 4 },
    { match: "requested amount", weight: 4 },
    { match: "loan purpose", weight: 4 },
    { match: "purpose of loan", weight: 4 },
    { match: "purpose of the loan", weight: 4 },
    { match: "loan term", weight: 3 },
    { match: "repayment term", weight: 3 },
    { match: "applicant", weight: 3 },
    { match: "co-applicant", weight: 4 },
    { match: "annual income", weight: 3 },
    { match: "monthly income", weight: 2 },
    { match: "monthly expenses", weight: 2 },
    { match: "collateral", weight: 2 },
    { match: "i hereby apply", weight: 3 },
    { match: "kreditantrag", weight: 6 },
    { match: "darlehensantrag", weight: 6 },
    { match: "kreditbetrag", weight: 4 },
    { match: "darlehensbetrag", weight: 4 },
    { match: "antragsteller*", weight: 4 },
    { match: "nettoeinkommen", weight: 2 },
    // French
    { match: "demande de prêt", weight: 6 },
    { match: "demande de crédit", weight: 6 },
    { match: "montant du prêt", weight: 4 },
    { match: "montant demandé", weight: 4 },
    { match: "objet du prêt", weight: 4 },
    { match: "emprunteur", weight: 4 },
    { match: "co-emprunteur", weight: 4 },
    { match: "durée du prêt", weight: 3 },
    { match: "revenus mensuels", weight: 2 },
    // Dutch
    { match: "kredietaanvraag", weight: 6 },
    { match: "leningaanvraag", weight: 6 },
    { match: "aanvraag lening", weight: 5 },
    { match: "leenbedrag", weight: 4 },
    { match: "aanvrager", weight: 4 },
    { match: "mede-aanvrager", weight: 4 },
    { match: "maandelijks inkomen", weight: 2 },
    // Spanish
    { match: "solicitud de préstamo", weight: 6 },
    { match: "solicitud de crédito", weight: 6 },
    { match: "importe solicitado", weight: 4 },
    { match: "finalidad del préstamo", weight: 4 },
    { match: "solicitante", weight: 4 },
    { match: "ingresos mensuales", weight: 2 },
    // Italian
    { match: "richiesta di finanziamento", weight: 6 },
    { match: "richiesta di prestito", weight: 6 },
    { match: "domanda di prestito", weight: 6 },
    { match: "importo richiesto", weight: 4 },
    { match: "finalità del prestito", weight: 4 },
    { match: "richiedente", weight: 4 },
    { match: "reddito mensile", weight: 2 },
  ],
};

/** Tunables of the classifier. */
export const CLASSIFIER = {
  /** Only the first characters are classified (the head of a document names what it is). */
  maxChars: 100_000,
  /** Below this total weight the document is `other`. */
  minScore: 3,
  /** Weight at which the evidence strength reaches 1 - 1/e. */
  saturation: 6,
  /** Total weight a subtype's own features need before its plain words are used. */
  minSubtypeWeight: 3,
  /** Confidence of `other` when there was text but no type stood out. */
  otherConfidence: 0.1,
} as const;

interface CompiledFeature extends Feature {
  regex: RegExp;
}

const LETTER_OR_DIGIT = "[\\p{L}\\p{N}]";

function compile(feature: Feature): CompiledFeature {
  if (feature.match instanceof RegExp) return { ...feature, regex: feature.match };
  // Features are matched against NFKC text (nº → no, ﬁ → fi), so they are normalised the same way.
  const match = feature.match.normalize("NFKC");
  const stem = match.endsWith("*");
  const phrase = stem ? match.slice(0, -1) : match;
  const body = phrase
    .split(/[\s-]+/)
    .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/'/g, "['’]"))
    .join("[\\s-]+");
  const tail = stem ? "" : `(?!${LETTER_OR_DIGIT})`;
  return { ...feature, regex: new RegExp(`(?<!${LETTER_OR_DIGIT})${body}${tail}`, "iu") };
}

const COMPILED: [KnownType, CompiledFeature[]][] = Object.entries(DOC_TYPE_FEATURES).map(
  ([type, features]) => [type as KnownType, features.map(compile)],
);

interface TypeScore {
  type: KnownType;
  score: number;
  matched: { feature: CompiledFeature; text: string }[];
}

function scoreType(text: string, type: KnownType, features: CompiledFeature[]): TypeScore {
  const matched: TypeScore["matched"] = [];
  for (const feature of features) {
    const m = feature.regex.exec(text);
    if (m) matched.push({ feature, text: feature.label ?? m[0].replace(/\s+/g, " ").trim() });
  }
  matched.sort((a, b) => b.feature.weight - a.feature.weight);
  return { type, score: matched.reduce((sum, m) => sum + m.feature.weight, 0), matched };
}

function plainWordsOf(best: TypeScore): string {
  const bySubtype = new Map<string, number>();
  for (const { feature } of best.matched) {
    if (feature.subtype)
      bySubtype.set(feature.subtype, (bySubtype.get(feature.subtype) ?? 0) + feature.weight);
  }
  let subtype: string | undefined;
  let weight = 0;
  for (const [name, w] of bySubtype) {
    if (w > weight) [subtype, weight] = [name, w];
  }
  return subtype && weight >= CLASSIFIER.minSubtypeWeight ? subtype : DOC_TYPE_WORDS[best.type];
}

/** Plain words for a document whose type could not be recognised. */
export const UNIDENTIFIED_WORDS = "unidentified document";

const PAGE_MARKER = /^--- page \d+ ---$/gm;

/** The text without its `--- page N ---` markers (what is left is the document's own words). */
export function documentWords(text: string): string {
  return text.replace(PAGE_MARKER, "").trim();
}

/** Classifies extracted text. Empty or unrecognised text → `other` with low confidence. */
export function classifyDocument(rawText: string): Classification {
  const text = documentWords(rawText.slice(0, CLASSIFIER.maxChars)).normalize("NFKC");
  if (text.trim() === "")
    return { docType: "other", confidence: 0, plainWords: UNIDENTIFIED_WORDS, evidence: [] };

  const ranked = COMPILED.map(([type, features]) => scoreType(text, type, features)).sort(
    (a, b) => b.score - a.score,
  );
  const best = ranked[0];
  const runnerUp = ranked[1]?.score ?? 0;
  if (!best || best.score < CLASSIFIER.minScore) {
    return {
      docType: "other",
      confidence: CLASSIFIER.otherConfidence,
      plainWords: UNIDENTIFIED_WORDS,
      evidence: [],
    };
  }
  const strength = 1 - Math.exp(-best.score / CLASSIFIER.saturation);
  const margin = (best.score - runnerUp) / best.score;
  const confidence = Math.round(strength * (0.5 + 0.5 * margin) * 100) / 100;
  return {
    docType: best.type,
    confidence,
    plainWords: plainWordsOf(best),
    evidence: [...new Set(best.matched.map((m) => m.text))],
  };
}
