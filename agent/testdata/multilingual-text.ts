import { Rng } from "../../fixtures/random.js";
import type { DocType } from "../../core/verdict.js";

/**
 * Seeded extracted text of documents in English, German, French, Dutch, Spanish and Italian, for the
 * classifier's tests: the wording each kind of document prints in that language (titles, labels, totals),
 * with random names, dates and amounts, a random subset and order of the optional lines, and a line of
 * unrelated boilerplate. `documentText(seed, type, lang)` is deterministic.
 */

export const LANGS = ["en", "de", "fr", "nl", "es", "it"] as const;
export type Lang = (typeof LANGS)[number];
export type KnownType = Exclude<DocType, "other">;

/** Title options, then label lines ({m} money, {d} date, {n} number, {p} person, {c} company). */
type Template = { titles: string[]; lines: string[] };

const T: Record<KnownType, Record<Lang, Template>> = {
  bank_statement: {
    en: {
      titles: ["Account statement", "Bank statement", "Statement of account"],
      lines: [
        "Statement period {d} to {d}",
        "Opening balance {m}",
        "Closing balance {m}",
        "Sort code {n} Account number {n}",
        "Date Description Paid out Paid in Balance",
        "{d} CARD PAYMENT {c} {m} {m}",
        "{d} DIRECT DEBIT {c} {m} {m}",
      ],
    },
    de: {
      titles: ["Kontoauszug", "Kontoauszug Nr. {n}"],
      lines: [
        "Girokonto {n}",
        "Alter Kontostand {m}",
        "Neuer Kontostand {m}",
        "Buchungstag Wertstellung Verwendungszweck Betrag",
        "{d} {d} Lastschrift {c} -{m}",
        "{d} {d} Gutschrift {p} {m}",
        "IBAN DE{n} BIC {c}",
      ],
    },
    fr: {
      titles: ["Relevé de compte", "Relevé de compte courant", "Relevé bancaire"],
      lines: [
        "Période du {d} au {d}",
        "Ancien solde au {d} {m}",
        "Nouveau solde au {d} {m}",
        "Date Libellé Date de valeur Débit Crédit",
        "{d} PRLV SEPA {c} {d} {m}",
        "{d} VIR SEPA {p} {d} {m}",
        "Total des opérations {m} {m}",
      ],
    },
    nl: {
      titles: ["Rekeningafschrift", "Dagafschrift nr. {n}", "Bankafschrift"],
      lines: [
        "Rekeningnummer NL{n}",
        "Vorig saldo {m}",
        "Nieuw saldo {m}",
        "Boekdatum Rentedatum Omschrijving Bedrag",
        "{d} {d} Betaalautomaat {c} -{m}",
        "{d} {d} Overboeking {p} {m}",
        "Totaal bij- en afschrijvingen {m}",
      ],
    },
    es: {
      titles: ["Extracto de cuenta", "Extracto bancario", "Extracto de movimientos"],
      lines: [
        "Número de cuenta ES{n}",
        "Saldo anterior {m}",
        "Saldo final {m}",
        "Fecha operación Fecha valor Concepto Importe Saldo",
        "{d} {d} Compra tarjeta {c} -{m} {m}",
        "{d} {d} Transferencia recibida {p} {m} {m}",
        "Movimientos del periodo {d} - {d}",
      ],
    },
    it: {
      titles: ["Estratto conto", "Estratto conto corrente"],
      lines: [
        "Conto corrente n. {n}",
        "Saldo iniziale {m}",
        "Saldo finale {m}",
        "Data contabile Data valuta Descrizione Addebiti Accrediti",
        "{d} {d} Pagamento POS {c} {m}",
        "{d} {d} Bonifico a vostro favore {p} {m}",
        "Saldo disponibile {m}",
      ],
    },
  },
  payslip: {
    en: {
      titles: ["Payslip", "Earnings statement", "Pay stub"],
      lines: [
        "Employee ID {n} Pay date {d}",
        "Pay period {d} - {d}",
        "Basic salary {m}",
        "Gross pay {m}",
        "Income tax {m} National Insurance {m}",
        "Net pay {m}",
        "Year to date {m}",
      ],
    },
    de: {
      titles: ["Entgeltabrechnung", "Gehaltsabrechnung", "Verdienstabrechnung"],
      lines: [
        "Personalnummer {n} Steuerklasse 1",
        "Abrechnungszeitraum {d}",
        "Grundgehalt {m}",
        "Gesamtbrutto {m}",
        "Lohnsteuer {m} Krankenversicherung {m}",
        "Nettogehalt {m}",
        "Auszahlungsbetrag {m}",
      ],
    },
    fr: {
      titles: ["Bulletin de paie", "Bulletin de salaire", "Fiche de paie"],
      lines: [
        "Matricule {n} Convention collective Syntec",
        "Période de paie du {d} au {d}",
        "Salaire de base {m}",
        "Salaire brut {m}",
        "Cotisations salariales {m} CSG/CRDS {m}",
        "Net à payer avant impôt {m}",
        "Prélèvement à la source {m}",
      ],
    },
    nl: {
      titles: ["Loonstrook", "Salarisstrook", "Loonspecificatie"],
      lines: [
        "Personeelsnummer {n} Loonperiode {d}",
        "Werknemer {p} Werkgever {c}",
        "Bruto salaris {m}",
        "Loonheffing {m}",
        "Vakantiegeld {m}",
        "Netto salaris {m}",
        "Uit te betalen {m}",
      ],
    },
    es: {
      titles: ["Nómina", "Recibo de salarios", "Recibo de nómina"],
      lines: [
        "Trabajador {p} Empresa {c}",
        "Periodo de liquidación {d} a {d}",
        "Salario base {m}",
        "Total devengado {m}",
        "Contingencias comunes {m} IRPF {m}",
        "Total a deducir {m}",
        "Líquido a percibir {m}",
      ],
    },
    it: {
      titles: ["Busta paga", "Cedolino paga", "Cedolino"],
      lines: [
        "Matricola {n} Codice fiscale {c}",
        "Periodo di paga {d}",
        "Retribuzione lorda {m}",
        "Totale competenze {m}",
        "Contributi INPS {m} IRPEF {m}",
        "Totale trattenute {m}",
        "Netto in busta {m}",
      ],
    },
  },
  invoice: {
    en: {
      titles: ["Invoice", "Tax invoice"],
      lines: [
        "Invoice number {n} Invoice date {d}",
        "Bill to {p}",
        "Description Qty Unit price Amount",
        "Consulting services 3 {m} {m}",
        "Subtotal {m} VAT 20% {m}",
        "Amount due {m}",
        "Payment terms: 30 days",
      ],
    },
    de: {
      titles: ["Rechnung"],
      lines: [
        "Rechnungsnummer {n} Rechnungsdatum {d}",
        "Leistungsdatum {d}",
        "Pos. Bezeichnung Menge Einzelpreis Gesamt",
        "1 Wartung 2 {m} {m}",
        "Nettobetrag {m} zzgl. 19 % USt. {m}",
        "Rechnungsbetrag {m}",
        "Zahlungsziel 14 Tage, USt-IdNr. DE{n}",
      ],
    },
    fr: {
      titles: ["Facture", "Facture n° {n}"],
      lines: [
        "N° de facture {n} Date de facture {d}",
        "Désignation Quantité Prix unitaire Montant HT",
        "Pose de parquet 12 {m} {m}",
        "Total HT {m} TVA 20 % {m}",
        "Total TTC {m}",
        "Conditions de paiement : 30 jours",
        "SIRET {n} TVA intracommunautaire FR{n}",
      ],
    },
    nl: {
      titles: ["Factuur"],
      lines: [
        "Factuurnummer {n} Factuurdatum {d}",
        "Omschrijving Aantal Stukprijs Bedrag",
        "Installatie 2 {m} {m}",
        "Subtotaal {m} BTW 21% {m}",
        "Totaal incl. BTW {m}",
        "Betalingstermijn 14 dagen, vervaldatum {d}",
        "KvK {n} BTW-nummer NL{n}B01",
      ],
    },
    es: {
      titles: ["Factura", "Factura nº {n}"],
      lines: [
        "Número de factura {n} Fecha de factura {d}",
        "Concepto Cantidad Precio unitario Importe",
        "Reparación 4 {m} {m}",
        "Base imponible {m} IVA 21% {m}",
        "Total factura {m}",
        "Forma de pago: transferencia, vencimiento {d}",
        "CIF B{n}",
      ],
    },
    it: {
      titles: ["Fattura", "Fattura n. {n}"],
      lines: [
        "Numero fattura {n} Data fattura {d}",
        "Descrizione Quantità Prezzo unitario Importo",
        "Manutenzione 2 {m} {m}",
        "Imponibile {m} IVA 22% {m}",
        "Totale documento {m}",
        "Modalità di pagamento: bonifico, scadenza {d}",
        "Partita IVA {n} Codice destinatario {c}",
      ],
    },
  },
  utility_bill: {
    en: {
      titles: ["Your electricity bill", "Energy bill"],
      lines: [
        "Account number {n} Meter number {n}",
        "Previous reading {n} Current reading {n}",
        "Electricity 412 kWh at {m}",
        "Standing charge 31 days {m}",
        "Total amount due {m}",
        "Tariff: Standard Variable",
        "MPAN {n}",
      ],
    },
    de: {
      titles: ["Stromrechnung", "Jahresabrechnung Strom"],
      lines: [
        "Vertragskonto {n} Zählernummer {n}",
        "Zählerstand alt {n} Zählerstand neu {n}",
        "Verbrauch 2.340 kWh",
        "Arbeitspreis {m} Grundpreis {m}",
        "Rechnungsbetrag {m}",
        "Neuer Abschlag {m}",
        "Stadtwerke {c}",
      ],
    },
    fr: {
      titles: ["Facture d'électricité", "Votre facture d'électricité"],
      lines: [
        "N° de contrat {n} N° de compteur {n}",
        "Ancien index {n} Nouvel index {n}",
        "Consommation 412 kWh",
        "Abonnement {m} Puissance souscrite 6 kVA",
        "Montant TTC à payer {m}",
        "Point de livraison (PDL) {n}",
        "Électricité option base",
      ],
    },
    nl: {
      titles: ["Energierekening", "Jaarafrekening energie"],
      lines: [
        "Klantnummer {n} Meternummer {n}",
        "Meterstand begin {n} Meterstand eind {n}",
        "Elektriciteit verbruik 2.340 kWh",
        "Vastrecht {m} Leveringskosten {m}",
        "Netbeheerkosten {m}",
        "Nieuw termijnbedrag {m}",
        "EAN-code {n}",
      ],
    },
    es: {
      titles: ["Factura de electricidad", "Factura de la luz"],
      lines: [
        "CUPS ES{n} Contador {n}",
        "Lectura anterior {n} Lectura actual {n}",
        "Consumo 412 kWh",
        "Término de potencia {m} Término de energía {m}",
        "Total a pagar {m}",
        "Periodo de suministro {d} - {d}",
        "Electricidad {c}",
      ],
    },
    it: {
      titles: ["Bolletta luce", "Bolletta energia elettrica"],
      lines: [
        "Codice POD IT{n} Contatore {n}",
        "Lettura precedente {n} Lettura attuale {n}",
        "Consumo 412 kWh",
        "Spesa per la materia energia {m} Quota fissa {m}",
        "Oneri di sistema {m}",
        "Totale da pagare {m}",
        "Energia elettrica {c}",
      ],
    },
  },
  tax_return: {
    en: {
      titles: ["Form 1040 U.S. Individual Income Tax Return", "SA100 Tax Return"],
      lines: [
        "Filing status Single",
        "Adjusted gross income {m}",
        "Standard deduction {m}",
        "Taxable income {m}",
        "Amount you owe {m}",
        "Unique Taxpayer Reference {n}",
      ],
    },
    de: {
      titles: ["Einkommensteuererklärung {n}"],
      lines: [
        "Steuernummer {n} Finanzamt {c}",
        "Anlage N",
        "Werbungskosten {m}",
        "Zu versteuerndes Einkommen {m}",
        "Veranlagungszeitraum {n}",
        "Identifikationsnummer {n}",
      ],
    },
    fr: {
      titles: ["Déclaration de revenus", "Avis d'impôt sur le revenu"],
      lines: [
        "Numéro fiscal {n}",
        "Revenu fiscal de référence {m}",
        "Nombre de parts 2",
        "Revenu imposable {m}",
        "Impôt sur le revenu net {m}",
        "Formulaire 2042",
      ],
    },
    nl: {
      titles: ["Aangifte inkomstenbelasting {n}", "Belastingaangifte"],
      lines: [
        "Burgerservicenummer {n}",
        "Box 1 belastbaar inkomen {m}",
        "Inkomstenbelasting {m}",
        "Voorlopige aanslag {m}",
        "Belastingdienst {c}",
      ],
    },
    es: {
      titles: ["Declaración de la renta", "Modelo 100"],
      lines: [
        "Agencia Tributaria NIF {n}",
        "Rendimientos del trabajo {m}",
        "Base liquidable general {m}",
        "Cuota íntegra {m}",
        "Resultado de la declaración {m}",
      ],
    },
    it: {
      titles: ["Dichiarazione dei redditi", "Modello 730"],
      lines: [
        "Agenzia delle Entrate codice fiscale {c}",
        "Sostituto d'imposta {c}",
        "Reddito imponibile {m}",
        "Imposta lorda {m}",
        "Detrazioni {m}",
      ],
    },
  },
  id_document: {
    en: {
      titles: ["Passport", "Identity card", "Driving licence"],
      lines: [
        "Surname {p} Given names {p}",
        "Nationality British",
        "Date of birth {d} Place of birth London",
        "Date of issue {d} Date of expiry {d}",
        "Issuing authority HMPO",
      ],
    },
    de: {
      titles: ["Personalausweis", "Reisepass"],
      lines: [
        "Name {p}",
        "Geburtsdatum {d} Geburtsort Köln",
        "Staatsangehörigkeit Deutsch",
        "Gültig bis {d}",
        "Ausstellungsdatum {d}",
      ],
    },
    fr: {
      titles: ["Carte nationale d'identité", "Passeport"],
      lines: [
        "Nom {p} Prénoms {p}",
        "Date de naissance {d} Lieu de naissance Lyon",
        "Nationalité Française",
        "Date de délivrance {d}",
        "Date d'expiration {d}",
      ],
    },
    nl: {
      titles: ["Identiteitskaart", "Paspoort", "Rijbewijs"],
      lines: [
        "Naam {p}",
        "Geboortedatum {d} Geboorteplaats Utrecht",
        "Nationaliteit Nederlandse",
        "Datum van afgifte {d}",
        "Geldig tot {d}",
      ],
    },
    es: {
      titles: ["Documento Nacional de Identidad", "Pasaporte"],
      lines: [
        "Apellidos {p} Nombre {p}",
        "Fecha de nacimiento {d} Lugar de nacimiento Sevilla",
        "Nacionalidad Española",
        "Fecha de expedición {d}",
        "Fecha de caducidad {d}",
      ],
    },
    it: {
      titles: ["Carta d'identità", "Passaporto", "Patente di guida"],
      lines: [
        "Cognome {p} Nome {p}",
        "Data di nascita {d} Luogo di nascita Torino",
        "Cittadinanza Italiana",
        "Data di rilascio {d}",
        "Data di scadenza {d}",
      ],
    },
  },
  contract: {
    en: {
      titles: ["Tenancy agreement", "Employment contract", "Service agreement"],
      lines: [
        "This agreement is made on {d} between {c} (hereinafter the Landlord) and {p}",
        "The parties agree as follows",
        "Termination: either party may end this agreement with one month's notice",
        "Governing law and jurisdiction: England and Wales",
        "In witness whereof the parties have signed",
      ],
    },
    de: {
      titles: ["Mietvertrag", "Arbeitsvertrag"],
      lines: [
        "Zwischen {c} (nachfolgend Vermieter) und {p} (nachfolgend Mieter) wird folgender Vertrag geschlossen",
        "§ 1 Vertragsparteien",
        "§ 5 Kündigung",
        "Gerichtsstand ist Berlin",
        "Ort, Datum {d}",
      ],
    },
    fr: {
      titles: ["Contrat de location", "Contrat de travail"],
      lines: [
        "Entre les soussignés {c}, ci-après dénommé le bailleur, et {p}, ci-après dénommé le locataire",
        "Les parties conviennent de ce qui suit",
        "Article 3 Durée du contrat",
        "Article 9 Résiliation",
        "Fait à Lyon le {d}",
      ],
    },
    nl: {
      titles: ["Huurovereenkomst", "Arbeidsovereenkomst"],
      lines: [
        "De ondergetekenden {c}, hierna te noemen verhuurder, en {p}, hierna te noemen huurder",
        "Partijen komen het volgende overeen",
        "Artikel 4 Opzegging",
        "Looptijd vanaf {d}",
        "Aldus opgemaakt te Utrecht",
      ],
    },
    es: {
      titles: ["Contrato de arrendamiento", "Contrato de trabajo"],
      lines: [
        "Reunidos de una parte {c}, en adelante el arrendador, y de otra {p}, en adelante el arrendatario",
        "Las partes acuerdan las siguientes cláusulas",
        "Cláusula séptima: rescisión",
        "En Madrid, a {d}",
      ],
    },
    it: {
      titles: ["Contratto di locazione", "Contratto di lavoro"],
      lines: [
        "Tra le parti {c}, di seguito denominato locatore, e {p}, di seguito denominato conduttore",
        "Premesso che il locatore è proprietario dell'immobile",
        "Art. 6 Recesso",
        "Foro competente Milano",
        "Milano, {d}",
      ],
    },
  },
  receipt: {
    en: {
      titles: ["Receipt", "Sales receipt"],
      lines: [
        "Cashier 04 Till 2",
        "2 x Coffee {m}",
        "Total {m}",
        "Cash tendered {m} Change due {m}",
        "Thank you for shopping with us",
        "Auth code {n}",
      ],
    },
    de: {
      titles: ["Kassenbon", "Kassenbeleg"],
      lines: [
        "Kasse 3 Bon-Nr {n}",
        "2 x Brötchen {m}",
        "Summe {m}",
        "Gegeben {m} Rückgeld {m}",
        "Vielen Dank für Ihren Einkauf",
        "TSE-Signatur {n}",
      ],
    },
    fr: {
      titles: ["Ticket de caisse", "Reçu"],
      lines: [
        "Caisse 2 Caissier 17",
        "2 x Baguette {m}",
        "Total {m}",
        "Espèces {m} Rendu monnaie {m}",
        "Merci de votre visite",
      ],
    },
    nl: {
      titles: ["Kassabon"],
      lines: [
        "Kassa 4 Bonnummer {n}",
        "2 x Brood {m}",
        "Totaal {m}",
        "Contant {m} Wisselgeld {m}",
        "Bedankt voor uw aankoop",
      ],
    },
    es: {
      titles: ["Ticket de compra", "Factura simplificada"],
      lines: [
        "Cajero 3 Ticket {n}",
        "2 x Pan {m}",
        "Total {m}",
        "Efectivo entregado {m} Cambio {m}",
        "Gracias por su compra",
      ],
    },
    it: {
      titles: ["Scontrino", "Documento commerciale di vendita"],
      lines: [
        "Cassa 2 Documento n. {n}",
        "2 x Caffè {m}",
        "Totale complessivo {m}",
        "Contanti {m} Resto {m}",
        "Grazie per l'acquisto",
      ],
    },
  },
  loan_application: {
    en: {
      titles: ["Loan application", "Credit application"],
      lines: [
        "Applicant {p} Date of birth {d}",
        "Loan amount requested {m}",
        "Purpose of loan: home improvement",
        "Loan term 60 months",
        "Annual income {m} Monthly expenses {m}",
        "I hereby apply for the credit described above",
      ],
    },
    de: {
      titles: ["Kreditantrag", "Darlehensantrag"],
      lines: [
        "Antragsteller {p}",
        "Kreditbetrag {m}",
        "Laufzeit 72 Monate",
        "Nettoeinkommen {m}",
        "Verwendungszweck Modernisierung",
      ],
    },
    fr: {
      titles: ["Demande de prêt", "Demande de crédit"],
      lines: [
        "Emprunteur {p} Co-emprunteur {p}",
        "Montant demandé {m}",
        "Objet du prêt : travaux",
        "Durée du prêt 84 mois",
        "Revenus mensuels {m} Charges mensuelles {m}",
      ],
    },
    nl: {
      titles: ["Kredietaanvraag", "Aanvraag lening"],
      lines: [
        "Aanvrager {p} Mede-aanvrager {p}",
        "Leenbedrag {m}",
        "Looptijd 60 maanden",
        "Maandelijks inkomen {m}",
        "Doel: verbouwing",
      ],
    },
    es: {
      titles: ["Solicitud de préstamo", "Solicitud de crédito"],
      lines: [
        "Solicitante {p}",
        "Importe solicitado {m}",
        "Finalidad del préstamo: reforma",
        "Plazo 60 meses",
        "Ingresos mensuales {m}",
      ],
    },
    it: {
      titles: ["Richiesta di finanziamento", "Domanda di prestito"],
      lines: [
        "Richiedente {p} Coobbligato {p}",
        "Importo richiesto {m}",
        "Finalità del prestito: ristrutturazione",
        "Durata del finanziamento 60 mesi",
        "Reddito mensile {m}",
      ],
    },
  },
};

const PEOPLE: Record<Lang, string[]> = {
  en: ["James Miller", "Emily Clarke", "Oliver Hughes"],
  de: ["Lukas Becker", "Anna Schmidt", "Jonas Weber"],
  fr: ["Camille Martin", "Louis Girard", "Léa Fournier"],
  nl: ["Daan de Vries", "Sanne Jansen", "Bram Bakker"],
  es: ["Lucía García", "Javier Romero", "Marta Navarro"],
  it: ["Giulia Rossi", "Marco Bianchi", "Chiara Ferrari"],
};
const COMPANIES: Record<Lang, string[]> = {
  en: ["Northwind Ltd", "Bluefield Health", "Harbor Foods"],
  de: ["Weserland GmbH", "Stadtwerke Nord", "Becker KG"],
  fr: ["Atelier Lumière SAS", "Transports Garnier", "Énergie Provence"],
  nl: ["Van Dijk B.V.", "Polder Energie", "Bakkerij Smit"],
  es: ["Reformas Levante S.L.", "Iberluz", "Panadería Sol"],
  it: ["Officine Moretti S.r.l.", "Luce Nord", "Bar Centrale"],
};
const BOILERPLATE: Record<Lang, string> = {
  en: "Please keep this document for your records.",
  de: "Bitte bewahren Sie dieses Dokument sorgfältig auf.",
  fr: "Merci de conserver ce document.",
  nl: "Bewaar dit document zorgvuldig.",
  es: "Conserve este documento.",
  it: "Conservare il presente documento.",
};

function money(rng: Rng, lang: Lang): string {
  const whole = rng.int(5, 9999);
  const cents = String(rng.int(0, 99)).padStart(2, "0");
  if (lang === "en") return `£${whole.toLocaleString("en-GB")}.${cents}`;
  const grouped = String(whole).replace(/\B(?=(\d{3})+(?!\d))/g, lang === "fr" ? "\u00a0" : ".");
  return `${grouped},${cents} €`;
}

function date(rng: Rng, lang: Lang): string {
  const d = String(rng.int(1, 28)).padStart(2, "0");
  const m = String(rng.int(1, 12)).padStart(2, "0");
  return lang === "de" ? `${d}.${m}.2025` : lang === "nl" ? `${d}-${m}-2025` : `${d}/${m}/2025`;
}

/** The extracted text of one document (with the `--- page 1 ---` marker the check step writes). */
export function documentText(seed: number, type: KnownType, lang: Lang): string {
  const rng = new Rng(seed);
  const t = T[type][lang];
  const fill = (line: string) =>
    line
      .replace(/\{m\}/g, () => money(rng, lang))
      .replace(/\{d\}/g, () => date(rng, lang))
      .replace(/\{n\}/g, () => rng.digits(rng.int(4, 9), true))
      .replace(/\{p\}/g, () => rng.pick(PEOPLE[lang]))
      .replace(/\{c\}/g, () => rng.pick(COMPANIES[lang]));
  // Keep at least four of the lines, in the template's order, and drop the others at random.
  const keep = t.lines.filter(() => rng.chance(0.75));
  const lines = keep.length >= 4 ? keep : t.lines.slice(0, 4);
  return [
    "--- page 1 ---",
    rng.pick(COMPANIES[lang]),
    fill(rng.pick(t.titles)),
    ...lines.map(fill),
    BOILERPLATE[lang],
  ].join("\n");
}
