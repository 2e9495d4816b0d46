import { existsSync } from "node:fs";
import { mkdtemp, readlink, rename, rm, symlink } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

/**
 * The OCR's language models and how one is chosen. The models are the integer LSTM models of the npm
 * packages `@tesseract.js-data/<code>` (tessdata_best, integerised: `4.0.0_best_int/<code>.traineddata.gz`),
 * read from node_modules: never downloaded. tesseract.js reads every model of a worker from one directory,
 * and each package has its own, so the first OCR of a process links the six files into one directory
 * under the system temp folder (/tmp is writable in the step Pod; the working directory is not touched).
 *
 * Chosen from the region first (a German bank's statement is read with the German model), then from the
 * text: when the words read are clearly another of the six languages, the page is read again with that one.
 */

export const OCR_LANGUAGES = ["eng", "deu", "fra", "nld", "spa", "ita"] as const;
export type OcrLanguage = (typeof OCR_LANGUAGES)[number];

const require = createRequire(import.meta.url);

/** The model file of one language inside its npm package. */
export function modelFile(lang: OcrLanguage): string {
  const dir = path.dirname(require.resolve(`@tesseract.js-data/${lang}/package.json`));
  return path.join(dir, "4.0.0_best_int", `${lang}.traineddata.gz`);
}

/** Directory of the bundled English model (kept for callers that need only English). */
export function englishModelDir(): string {
  return path.dirname(modelFile("eng"));
}

let modelDir: Promise<string> | undefined;

/**
 * One directory holding (links to) the six models, made once per process and reused across processes
 * while its links still point at these packages' files.
 */
export function modelDirectory(): Promise<string> {
  modelDir ??= makeModelDirectory().catch((err) => {
    modelDir = undefined;
    throw err;
  });
  return modelDir;
}

async function makeModelDirectory(): Promise<string> {
  const files = OCR_LANGUAGES.map((l) => [l, modelFile(l)] as const);
  for (const [lang, file] of files) {
    if (!existsSync(file)) throw new Error(`the OCR model for ${lang} is missing (${file}); run npm install`);
  }
  // Keyed by where the packages are, so two installs never share a directory.
  const key = Buffer.from(path.dirname(path.dirname(files[0]![1])))
    .toString("base64url")
    .slice(-40);
  const dir = path.join(os.tmpdir(), `docverify-ocr-models-${key}`);
  if (await linksAreCurrent(dir, files)) return dir;
  const staging = await mkdtemp(path.join(os.tmpdir(), "docverify-ocr-models-new-"));
  for (const [lang, file] of files) await symlink(file, path.join(staging, `${lang}.traineddata.gz`));
  try {
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
  } catch (err) {
    // Another process made it at the same moment: use theirs when it is right.
    await rm(staging, { recursive: true, force: true });
    if (!(await linksAreCurrent(dir, files))) throw err;
  }
  return dir;
}

async function linksAreCurrent(dir: string, files: readonly (readonly [string, string])[]): Promise<boolean> {
  try {
    for (const [lang, file] of files) {
      if ((await readlink(path.join(dir, `${lang}.traineddata.gz`))) !== file) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** The languages a document from `region` (ISO 3166 alpha-2) is first read with, most likely first. */
export function languagesForRegion(region: string): OcrLanguage[] {
  switch (region.toUpperCase()) {
    case "DE":
    case "AT":
    case "LI":
      return ["deu"];
    case "CH":
    case "LU":
      return ["deu", "fra"];
    case "FR":
    case "MC":
      return ["fra"];
    case "BE":
      return ["nld", "fra"];
    case "NL":
      return ["nld"];
    case "ES":
    case "AD":
      return ["spa"];
    case "IT":
    case "SM":
    case "VA":
      return ["ita"];
    default:
      return ["eng"];
  }
}

// Frequent words of each language that documents print (articles, prepositions, document words).
const MARKERS: Record<OcrLanguage, readonly string[]> = {
  eng: [
    "the",
    "and",
    "of",
    "to",
    "for",
    "from",
    "total",
    "balance",
    "date",
    "amount",
    "account",
    "page",
    "paid",
    "payment",
    "invoice",
    "statement",
    "with",
    "your",
  ],
  deu: [
    "der",
    "die",
    "das",
    "und",
    "für",
    "von",
    "mit",
    "den",
    "betrag",
    "datum",
    "rechnung",
    "konto",
    "seite",
    "summe",
    "gesamt",
    "zahlung",
    "kontoauszug",
    "auf",
    "ihre",
  ],
  fra: [
    "le",
    "la",
    "les",
    "de",
    "des",
    "du",
    "et",
    "pour",
    "montant",
    "facture",
    "compte",
    "date",
    "page",
    "total",
    "au",
    "votre",
    "paiement",
    "relevé",
    "sur",
  ],
  nld: [
    "de",
    "het",
    "een",
    "en",
    "van",
    "voor",
    "met",
    "bedrag",
    "datum",
    "factuur",
    "rekening",
    "pagina",
    "totaal",
    "betaling",
    "uw",
    "op",
    "aan",
    "afschrift",
  ],
  spa: [
    "el",
    "la",
    "los",
    "las",
    "de",
    "del",
    "y",
    "para",
    "con",
    "importe",
    "fecha",
    "factura",
    "cuenta",
    "página",
    "total",
    "pago",
    "su",
    "extracto",
  ],
  ita: [
    "il",
    "la",
    "di",
    "del",
    "della",
    "e",
    "per",
    "con",
    "importo",
    "data",
    "fattura",
    "conto",
    "pagina",
    "totale",
    "pagamento",
    "estratto",
    "sul",
    "ai",
  ],
};

/**
 * The language a text is written in, among the six, when its words say so clearly (at least 6 marker
 * words, and twice as many as the next language's); undefined otherwise.
 */
export function languageOfText(text: string): OcrLanguage | undefined {
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  const counts = new Map<OcrLanguage, number>(OCR_LANGUAGES.map((l) => [l, 0]));
  const sets = OCR_LANGUAGES.map((l) => [l, new Set(MARKERS[l])] as const);
  for (const w of words) for (const [l, set] of sets) if (set.has(w)) counts.set(l, (counts.get(l) ?? 0) + 1);
  const ranked = [...counts].sort((a, b) => b[1] - a[1]);
  const [best, second] = ranked;
  if (!best || best[1] < 6 || best[1] < 2 * (second?.[1] ?? 0)) return undefined;
  return best[0];
}
