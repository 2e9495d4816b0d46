import { constants } from "node:buffer";
import type { RawPdf } from "../pdf-raw/document.js";
import { DecodeError, DecodeLimitError, decodeStream } from "../pdf-raw/filters.js";
import {
  get,
  isDict,
  isName,
  isRef,
  isStream,
  nameOf,
  numberOf,
  type PdfDict,
  type PdfStream,
  type PdfValue,
  refKey,
} from "../pdf-raw/objects.js";
import { scanContent } from "./content-scan.js";
import { jpegFrameSize, jpxSize } from "./image-size.js";
import { type DocumentBudget, STRUCTURE_LIMITS } from "./limits.js";

/**
 * The budget pre-check of a PDF (issue 13): measures, with the raw parser (document/pdf-raw/) and before
 * pdfjs or any check reads the file, what reading it would cost, and stops at the first limit passed:
 *
 * - structure: the page tree (pages walked, nesting, loops), form XObjects drawn inside each other (nesting,
 *   a form that draws itself directly or through others), graphics states saved without restore;
 * - operators: every content stream as a reader executes it — each page, each use of a form counted again
 *   (so a fan-out of forms drawing forms is counted at its real, multiplied size), Type 3 glyph
 *   procedures, tiling patterns, soft-mask groups and annotation appearances;
 * - decoded bytes: every stream in the file (every `n g obj`, referenced or not, object and
 *   cross-reference streams included) decoded under one shared limit, images and embedded files aside;
 * - images: each image's pixels by its dictionary and by its own JPEG / JPEG 2000 header, and the distinct
 *   images one page draws together (forms included).
 *
 * Nothing decoded is kept: the walk holds one stream's data at a time. A stream that cannot be decoded
 * (corrupt data, an unknown filter) costs nothing here: the readers fail on it too, page by page.
 */

export type BudgetLimit =
  | "pages"
  | "page_tree"
  | "objects"
  | "decoded_bytes"
  | "operators"
  | "form_nesting"
  | "form_cycle"
  | "save_depth"
  | "image_pixels";

export interface BudgetBreach {
  limit: BudgetLimit;
  /** One sentence for logs and the step's message (not shown to API callers). */
  message: string;
}

export interface PdfBudgetReport {
  /** Pages walked (up to the first breach). */
  pages: number;
  decodedBytes: number;
  operators: number;
  /** Largest single image, in pixels. */
  maxImagePixels: number;
  /** Largest sum of distinct image pixels one page draws. */
  maxPageImagePixels: number;
  maxFormNesting: number;
  maxSaveDepth: number;
  streams: number;
  breach?: BudgetBreach;
}

class BudgetExceeded extends Error {
  constructor(readonly breach: BudgetBreach) {
    super(breach.message);
  }
}

/** What drawing a form once costs. */
interface FormCost {
  operators: number;
  /** Content bytes decoded to draw it. */
  bytes: number;
  /** Distinct images it draws (ref → pixels). */
  images: Map<string, number>;
}

interface ContentFacts {
  operators: number;
  bytes: number;
  draws: Map<string, number>;
  maxInlineImagePixels: number;
  maxSaveDepth: number;
}

const MB = 1024 * 1024;
const MAX_LENGTH = constants.MAX_LENGTH;
const fmt = (n: number) => n.toLocaleString("en-US");

export function measurePdf(pdf: RawPdf, budget: DocumentBudget): PdfBudgetReport {
  const m = new Meter(pdf, budget);
  try {
    m.walkPages();
    m.walkAllStreams();
  } catch (err) {
    if (!(err instanceof BudgetExceeded)) throw err;
    m.report.breach = err.breach;
  }
  return m.report;
}

class Meter {
  readonly report: PdfBudgetReport = {
    pages: 0,
    decodedBytes: 0,
    operators: 0,
    maxImagePixels: 0,
    maxPageImagePixels: 0,
    maxFormNesting: 0,
    maxSaveDepth: 0,
    streams: 0,
  };
  /** Streams already decoded and counted, by their data's offset in the file. */
  private measured = new Set<number>();
  /** Content streams already scanned, by their data's offset. */
  private scans = new Map<number, ContentFacts>();
  private forms = new Map<string, FormCost>();
  private type3Fonts = new Set<string>();
  private resourceIds = new Map<PdfDict, number>();

  constructor(
    private readonly pdf: RawPdf,
    private readonly budget: DocumentBudget,
  ) {}

  private exceed(limit: BudgetLimit, message: string): never {
    throw new BudgetExceeded({ limit, message });
  }

  // ---------------------------------------------------------------------------------------------
  // Decoded bytes and operators
  // ---------------------------------------------------------------------------------------------

  private decodedTooMuch(): never {
    this.exceed(
      "decoded_bytes",
      `The document's streams expand to more than ${fmt(this.budget.maxDecodedBytes / MB)} MB when decoded.`,
    );
  }

  /**
   * A stream's decoded data, never more than what is left of the budget (a bomb stops there); undefined
   * when it cannot be decoded. Counts nothing: callers charge what the readers decode.
   */
  private decode(stream: PdfStream): Uint8Array | undefined {
    if (get(stream.dict, "Filter") === undefined) return stream.raw;
    // zlib takes at most buffer.constants.MAX_LENGTH as its output limit.
    const left = Math.max(1, this.budget.maxDecodedBytes - this.report.decodedBytes);
    const perStream = STRUCTURE_LIMITS.maxStreamBytes;
    const room = Math.min(MAX_LENGTH, left, perStream);
    try {
      return decodeStream(stream, room).data;
    } catch (err) {
      if (err instanceof DecodeLimitError) {
        if (room === perStream && perStream < left)
          this.exceed(
            "decoded_bytes",
            `A stream of the document expands to more than ${fmt(perStream / MB)} MB when decoded.`,
          );
        this.decodedTooMuch();
      }
      if (err instanceof DecodeError) return undefined;
      throw err;
    }
  }

  private charge(operators: number, bytes: number): void {
    this.report.operators += operators;
    this.report.decodedBytes += bytes;
    if (this.report.decodedBytes > this.budget.maxDecodedBytes) this.decodedTooMuch();
    if (this.report.operators > this.budget.maxOperators)
      this.exceed(
        "operators",
        `The document's pages execute more than ${fmt(this.budget.maxOperators)} drawing operators (forms counted at every use).`,
      );
  }

  /** What a content stream holds, read once per stream (a stream shared by many pages is scanned once). */
  private contentFacts(s: PdfStream): ContentFacts | undefined {
    const known = this.scans.get(s.offset);
    if (known) return known;
    const data = this.decode(s);
    if (!data) return undefined;
    this.measured.add(s.offset);
    this.report.streams++;
    const scan = scanContent(data, this.budget.maxOperators - this.report.operators);
    const facts: ContentFacts = {
      operators: scan.operators,
      bytes: data.length,
      draws: scan.draws,
      maxInlineImagePixels: scan.maxInlineImagePixels,
      maxSaveDepth: scan.maxSaveDepth,
    };
    this.scans.set(s.offset, facts);
    return facts;
  }

  /** Every stream in the file: decoded bytes counted, image sizes checked. */
  walkAllStreams(): void {
    const headers = this.pdf.scanObjects();
    let count = 0;
    for (const list of headers.values()) count += list.length;
    if (count >= STRUCTURE_LIMITS.maxObjects)
      this.exceed("objects", `The document has more than ${fmt(STRUCTURE_LIMITS.maxObjects)} objects.`);
    for (const list of headers.values()) {
      for (const { offset } of list) {
        const obj = this.pdf.objectAt(offset);
        if (!obj || !isStream(obj.value)) continue;
        const s = obj.value;
        const type = nameOf(this.pdf.resolve(get(s.dict, "Type")));
        const subtype = nameOf(this.pdf.resolve(get(s.dict, "Subtype")));
        if (subtype === "Image") {
          this.imagePixels(s);
          continue;
        }
        // Attachments are never opened by the readers; their size is the document's size limit's.
        if (type === "EmbeddedFile") continue;
        if (this.measured.has(s.offset)) continue;
        this.measured.add(s.offset);
        this.report.streams++;
        const data = this.decode(s);
        if (data && data !== s.raw) this.charge(0, data.length);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Images
  // ---------------------------------------------------------------------------------------------

  /** An image's pixels (the larger of its dictionary's and its own header's size), checked alone. */
  private imagePixels(s: PdfStream): number {
    const num = (k: string) => numberOf(this.pdf.resolve(get(s.dict, k))) ?? 0;
    let pixels = Math.max(0, num("Width")) * Math.max(0, num("Height"));
    const filter = this.pdf.resolve(get(s.dict, "Filter"));
    const filters = Array.isArray(filter) ? filter.map((f) => nameOf(this.pdf.resolve(f))) : [nameOf(filter)];
    if (filters.length === 1 && (filters[0] === "DCTDecode" || filters[0] === "DCT")) {
      const own = jpegFrameSize(s.raw);
      if (own) pixels = Math.max(pixels, own.width * own.height);
    } else if (filters.length === 1 && filters[0] === "JPXDecode") {
      const own = jpxSize(s.raw);
      if (own) pixels = Math.max(pixels, own.width * own.height);
    }
    const smask = this.pdf.resolve(get(s.dict, "SMask"));
    if (isStream(smask) && smask !== s) {
      const w = numberOf(this.pdf.resolve(get(smask.dict, "Width"))) ?? 0;
      const h = numberOf(this.pdf.resolve(get(smask.dict, "Height"))) ?? 0;
      pixels += Math.max(0, w) * Math.max(0, h);
    }
    this.checkImage(pixels);
    return pixels;
  }

  private checkImage(pixels: number): void {
    if (pixels > this.report.maxImagePixels) this.report.maxImagePixels = pixels;
    if (pixels > this.budget.maxImagePixels)
      this.exceed(
        "image_pixels",
        `An image of the document has ${fmt(Math.round(pixels / 1e6))} million pixels, more than the ${fmt(this.budget.maxImagePixels / 1e6)} million allowed.`,
      );
  }

  // ---------------------------------------------------------------------------------------------
  // Pages
  // ---------------------------------------------------------------------------------------------

  walkPages(): void {
    const root = get(this.pdf.catalog(), "Pages");
    this.walkNode(root, undefined, 0, new Set());
  }

  private walkNode(
    v: PdfValue | undefined,
    inherited: PdfDict | undefined,
    depth: number,
    path: Set<string>,
  ): void {
    if (depth > STRUCTURE_LIMITS.maxPageTreeDepth)
      this.exceed(
        "page_tree",
        `The page tree is nested more than ${STRUCTURE_LIMITS.maxPageTreeDepth} levels deep.`,
      );
    const key = isRef(v) ? refKey(v) : undefined;
    if (key !== undefined && path.has(key)) this.exceed("page_tree", "The page tree loops back on itself.");
    const node = this.pdf.dict(v);
    if (!node) return;
    const resources = this.pdf.dict(get(node, "Resources")) ?? inherited;
    const kids = this.pdf.resolve(get(node, "Kids"));
    if (Array.isArray(kids) && !isName(get(node, "Type"), "Page")) {
      if (key !== undefined) path.add(key);
      for (const kid of kids) this.walkNode(kid, resources, depth + 1, path);
      if (key !== undefined) path.delete(key);
      return;
    }
    if (++this.report.pages > this.budget.maxPages)
      this.exceed("pages", `The document has more than ${fmt(this.budget.maxPages)} pages.`);
    this.measurePage(node, resources);
  }

  private measurePage(page: PdfDict, resources: PdfDict | undefined): void {
    const images = new Map<string, number>();
    // Contents: one stream or an array of streams, read as one.
    const contents = this.pdf.resolve(get(page, "Contents"));
    const parts = Array.isArray(contents) ? contents : [get(page, "Contents")];
    for (const part of parts) {
      const s = this.pdf.resolve(part);
      if (!isStream(s)) continue;
      this.runContent(s, resources, images, 0, new Set());
    }
    this.sideContent(resources, images, new Set(), 0);
    // Annotation appearances (readers draw the normal appearance, /AP /N: a form or a dict of forms).
    const annots = this.pdf.resolve(get(page, "Annots"));
    if (Array.isArray(annots)) {
      for (const a of annots.slice(0, 10_000)) {
        const ap = this.pdf.dict(get(this.pdf.dict(a), "AP"));
        const n = get(ap, "N");
        const nv = this.pdf.resolve(n);
        const appearances = isStream(nv) ? [n] : isDict(nv) ? [...nv.map.values()] : [];
        for (const f of appearances) this.drawXObject(f, resources, images, 1, new Set(), 1);
      }
    }
    let pixels = 0;
    for (const p of images.values()) pixels += p;
    if (pixels > this.report.maxPageImagePixels) this.report.maxPageImagePixels = pixels;
    if (pixels > this.budget.maxImagePixels)
      this.exceed(
        "image_pixels",
        `Page ${this.report.pages} draws images of ${fmt(Math.round(pixels / 1e6))} million pixels together, more than the ${fmt(this.budget.maxImagePixels / 1e6)} million allowed.`,
      );
  }

  /**
   * Runs one content stream as a reader does: charges its operators and decoded bytes, then draws what it
   * draws with `Do` (each time it draws it).
   */
  private runContent(
    s: PdfStream,
    resources: PdfDict | undefined,
    images: Map<string, number>,
    depth: number,
    stack: Set<string>,
  ): void {
    const facts = this.contentFacts(s);
    if (!facts) return;
    this.charge(facts.operators, facts.bytes);
    if (facts.maxSaveDepth > this.report.maxSaveDepth) this.report.maxSaveDepth = facts.maxSaveDepth;
    if (facts.maxSaveDepth > STRUCTURE_LIMITS.maxSaveDepth)
      this.exceed(
        "save_depth",
        `A content stream saves the graphics state more than ${fmt(STRUCTURE_LIMITS.maxSaveDepth)} times without restoring it.`,
      );
    if (facts.maxInlineImagePixels > 0) this.checkImage(facts.maxInlineImagePixels);
    const xobjects = this.pdf.dict(get(resources, "XObject"));
    for (const [name, times] of facts.draws) {
      this.drawXObject(get(xobjects, name), resources, images, times, stack, depth + 1);
    }
  }

  /**
   * Draws XObject `x` `times` times: an image is recorded for the page; a form costs its operators and
   * content bytes (its own draws included) each time. A form's cost is measured once and then multiplied,
   * so a fan-out of forms drawing forms is counted at its full size without being walked at it.
   */
  private drawXObject(
    x: PdfValue | undefined,
    resources: PdfDict | undefined,
    images: Map<string, number>,
    times: number,
    stack: Set<string>,
    depth: number,
  ): void {
    const s = this.pdf.resolve(x);
    if (!isStream(s)) return;
    const subtype = nameOf(this.pdf.resolve(get(s.dict, "Subtype")));
    const key = isRef(x) ? refKey(x) : `@${s.offset}`;
    if (subtype === "Image") {
      if (!images.has(key)) images.set(key, this.imagePixels(s));
      return;
    }
    if (subtype !== "Form" && get(s.dict, "BBox") === undefined) return;
    if (stack.has(key)) this.exceed("form_cycle", "A form XObject of the document draws itself.");
    if (depth > STRUCTURE_LIMITS.maxFormNesting)
      this.exceed(
        "form_nesting",
        `The document's form XObjects are nested more than ${STRUCTURE_LIMITS.maxFormNesting} deep.`,
      );
    if (depth > this.report.maxFormNesting) this.report.maxFormNesting = depth;
    const own = this.pdf.dict(get(s.dict, "Resources"));
    const formResources = own ?? resources;
    const memoKey = own ? key : `${key}|${formResources ? this.resourceId(formResources) : 0}`;
    let cost = this.forms.get(memoKey);
    let drawnAlready = 0;
    if (!cost) {
      // The first draw is measured by running it (charging as it goes); every further draw is charged.
      const before = { operators: this.report.operators, bytes: this.report.decodedBytes };
      const formImages = new Map<string, number>();
      stack.add(key);
      this.runContent(s, formResources, formImages, depth, stack);
      // Glyphs, patterns and soft masks of inherited resources were counted with their owner.
      if (own) this.sideContent(own, formImages, stack, depth);
      stack.delete(key);
      cost = {
        operators: this.report.operators - before.operators,
        bytes: this.report.decodedBytes - before.bytes,
        images: formImages,
      };
      this.forms.set(memoKey, cost);
      drawnAlready = 1;
    }
    for (const [k, p] of cost.images) if (!images.has(k)) images.set(k, p);
    const more = times - drawnAlready;
    if (more > 0) this.charge(more * cost.operators, more * cost.bytes);
  }

  /**
   * Content a reader runs for a set of resources besides the streams that name them: Type 3 glyph
   * procedures (once per font and document, as readers cache fonts), tiling patterns and soft-mask groups.
   */
  private sideContent(
    resources: PdfDict | undefined,
    images: Map<string, number>,
    stack: Set<string>,
    depth: number,
  ): void {
    if (!resources) return;
    const fonts = this.pdf.dict(get(resources, "Font"));
    for (const f of fonts?.map.values() ?? []) {
      const font = this.pdf.dict(f);
      if (!font || !isName(this.pdf.resolve(get(font, "Subtype")), "Type3")) continue;
      const fkey = isRef(f) ? refKey(f) : undefined;
      if (fkey !== undefined) {
        if (this.type3Fonts.has(fkey)) continue;
        this.type3Fonts.add(fkey);
      }
      const procs = this.pdf.dict(get(font, "CharProcs"));
      const fres = this.pdf.dict(get(font, "Resources")) ?? resources;
      for (const p of [...(procs?.map.values() ?? [])].slice(0, 65_536)) {
        const s = this.pdf.resolve(p);
        if (isStream(s)) this.runContent(s, fres, images, depth + 1, stack);
      }
    }
    const patterns = this.pdf.dict(get(resources, "Pattern"));
    for (const p of patterns?.map.values() ?? []) {
      const s = this.pdf.resolve(p);
      if (!isStream(s) || numberOf(this.pdf.resolve(get(s.dict, "PatternType"))) !== 1) continue;
      this.drawXObject(p, resources, images, 1, stack, depth + 1);
    }
    const states = this.pdf.dict(get(resources, "ExtGState"));
    for (const g of states?.map.values() ?? []) {
      const smask = this.pdf.dict(get(this.pdf.dict(g), "SMask"));
      const group = get(smask, "G");
      if (group !== undefined) this.drawXObject(group, resources, images, 1, stack, depth + 1);
    }
  }

  private resourceId(d: PdfDict): number {
    let id = this.resourceIds.get(d);
    if (id === undefined) {
      id = this.resourceIds.size + 1;
      this.resourceIds.set(d, id);
    }
    return id;
  }
}
