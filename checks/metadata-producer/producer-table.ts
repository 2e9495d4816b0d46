/**
 * Software that writes PDFs, by what its name in Producer / Creator / xmp:CreatorTool / an XMP history
 * entry says about how a document came to be. One table, first match wins, so specific patterns (Acrobat
 * Paper Capture, PDFMaker) come before general ones (Acrobat). metadata.producer judges each category
 * against the declared document type.
 */

export type ProducerCategory =
  /** Web services that edit PDFs (upload, change, download). */
  | "online_editor"
  /** Desktop programs whose purpose is editing existing PDFs. */
  | "pdf_editor"
  /** Acrobat itself saving a PDF (editing, or a re-save). */
  | "acrobat_save"
  /** OCR of a scan (Acrobat Paper Capture and the like). */
  | "ocr"
  /** Photo and image editors. */
  | "image_editor"
  /** Design tools used to lay out documents from scratch. */
  | "design_tool"
  /** Word processors and spreadsheets (and their PDF export add-ins). */
  | "office"
  /** Virtual printers and "print to PDF" / "save as PDF" of an operating system. */
  | "print_to_pdf"
  /** Scanners, copiers and scanning apps. */
  | "scanner"
  /** Libraries and document-composition systems that issuers' back ends use. */
  | "generator";

export interface ProducerEntry {
  pattern: RegExp;
  /** Plain name for messages. */
  name: string;
  category: ProducerCategory;
}

export const PRODUCERS: readonly ProducerEntry[] = [
  // Online editors and converters
  { pattern: /ilovepdf/i, name: "iLovePDF", category: "online_editor" },
  { pattern: /smallpdf/i, name: "Smallpdf", category: "online_editor" },
  { pattern: /sejda/i, name: "Sejda", category: "online_editor" },
  { pattern: /pdfescape/i, name: "PDFescape", category: "online_editor" },
  { pattern: /pdf\s?candy/i, name: "PDF Candy", category: "online_editor" },
  { pattern: /soda\s?pdf/i, name: "Soda PDF", category: "online_editor" },
  { pattern: /pdf\s?filler/i, name: "pdfFiller", category: "online_editor" },
  { pattern: /dochub/i, name: "DocHub", category: "online_editor" },
  { pattern: /pdf2go/i, name: "PDF2Go", category: "online_editor" },
  { pattern: /hipdf/i, name: "HiPDF", category: "online_editor" },
  { pattern: /lightpdf/i, name: "LightPDF", category: "online_editor" },
  { pattern: /pdf\s?buddy/i, name: "PDF Buddy", category: "online_editor" },
  { pattern: /pdfsimpli/i, name: "PDFSimpli", category: "online_editor" },
  { pattern: /formswift/i, name: "FormSwift", category: "online_editor" },
  { pattern: /online2pdf/i, name: "Online2PDF", category: "online_editor" },
  { pattern: /online pdf editor/i, name: "an online PDF editor", category: "online_editor" },
  // Acrobat: OCR and Office conversion before Acrobat in general
  { pattern: /paper\s?capture/i, name: "Adobe Acrobat Paper Capture (OCR)", category: "ocr" },
  { pattern: /pdfmaker/i, name: "Acrobat PDFMaker (Office conversion)", category: "office" },
  { pattern: /acrobat\s+distiller/i, name: "Acrobat Distiller", category: "generator" },
  { pattern: /adobe\s+pdf\s+library/i, name: "Adobe PDF Library", category: "generator" },
  {
    pattern: /livecycle|adobe\s+experience\s+manager\s+forms/i,
    name: "Adobe LiveCycle / AEM Forms",
    category: "generator",
  },
  {
    pattern: /adobe\s+acrobat|acrobat\s+(pro|standard|reader)/i,
    name: "Adobe Acrobat",
    category: "acrobat_save",
  },
  // Desktop PDF editors
  { pattern: /foxit\s+(phantompdf|pdf\s+editor|editor)/i, name: "Foxit PDF Editor", category: "pdf_editor" },
  { pattern: /nitro\s*(pro|pdf)/i, name: "Nitro PDF", category: "pdf_editor" },
  { pattern: /pdf-xchange\s+editor/i, name: "PDF-XChange Editor", category: "pdf_editor" },
  { pattern: /master\s+pdf\s+editor/i, name: "Master PDF Editor", category: "pdf_editor" },
  { pattern: /pdfelement|wondershare/i, name: "Wondershare PDFelement", category: "pdf_editor" },
  { pattern: /able2extract/i, name: "Able2Extract", category: "pdf_editor" },
  { pattern: /infix\s+pdf/i, name: "Infix PDF Editor", category: "pdf_editor" },
  { pattern: /pdf\s+studio/i, name: "PDF Studio", category: "pdf_editor" },
  { pattern: /inkscape/i, name: "Inkscape", category: "pdf_editor" },
  // Image editors and design tools
  { pattern: /photoshop/i, name: "Adobe Photoshop", category: "image_editor" },
  { pattern: /\bgimp\b/i, name: "GIMP", category: "image_editor" },
  { pattern: /paint\.net/i, name: "Paint.NET", category: "image_editor" },
  { pattern: /affinity\s+photo/i, name: "Affinity Photo", category: "image_editor" },
  { pattern: /pixelmator/i, name: "Pixelmator", category: "image_editor" },
  { pattern: /photo-?paint/i, name: "Corel PHOTO-PAINT", category: "image_editor" },
  { pattern: /illustrator/i, name: "Adobe Illustrator", category: "design_tool" },
  { pattern: /indesign/i, name: "Adobe InDesign", category: "design_tool" },
  { pattern: /canva/i, name: "Canva", category: "design_tool" },
  { pattern: /coreldraw/i, name: "CorelDRAW", category: "design_tool" },
  // LibreOffice Draw is how LibreOffice opens and edits an existing PDF (its PDF import); documents are
  // not authored there. Before the general LibreOffice entry.
  {
    pattern: /^draw$|\b(libreoffice|openoffice(\.org)?)\s+draw\b/i,
    name: "LibreOffice Draw (PDF import and edit)",
    category: "pdf_editor",
  },
  // Office
  { pattern: /microsoft.{0,3}\s*(office\s+)?word/i, name: "Microsoft Word", category: "office" },
  { pattern: /microsoft.{0,3}\s*(office\s+)?excel/i, name: "Microsoft Excel", category: "office" },
  { pattern: /microsoft.{0,3}\s*(office\s+)?powerpoint/i, name: "Microsoft PowerPoint", category: "office" },
  { pattern: /libreoffice|openoffice|^writer$|^calc$/i, name: "LibreOffice", category: "office" },
  { pattern: /google\s+docs|google\s+sheets/i, name: "Google Docs", category: "office" },
  { pattern: /^pages$|apple\s+pages/i, name: "Apple Pages", category: "office" },
  { pattern: /wps\s+(office|writer)/i, name: "WPS Office", category: "office" },
  // Virtual printers
  { pattern: /microsoft:?\s*print\s+to\s+pdf/i, name: "Microsoft Print to PDF", category: "print_to_pdf" },
  {
    pattern: /quartz\s+pdfcontext|mac\s*os.*quartz|^preview$/i,
    name: "macOS Quartz (Preview / Save as PDF)",
    category: "print_to_pdf",
  },
  { pattern: /pdfcreator/i, name: "PDFCreator", category: "print_to_pdf" },
  { pattern: /cutepdf/i, name: "CutePDF", category: "print_to_pdf" },
  { pattern: /bullzip/i, name: "Bullzip PDF Printer", category: "print_to_pdf" },
  { pattern: /\bdopdf\b/i, name: "doPDF", category: "print_to_pdf" },
  { pattern: /primopdf/i, name: "PrimoPDF", category: "print_to_pdf" },
  { pattern: /novapdf/i, name: "novaPDF", category: "print_to_pdf" },
  { pattern: /pdf24/i, name: "PDF24", category: "print_to_pdf" },
  // Scanners and scanning apps
  { pattern: /camscanner/i, name: "CamScanner", category: "scanner" },
  {
    pattern:
      /scansnap|epson\s+scan|hp\s+scan|scangear|genius\s+scan|adobe\s+scan|office\s+lens|microsoft\s+lens/i,
    name: "a scanning app",
    category: "scanner",
  },
  {
    pattern: /\b(canon\s+ir|imagerunner|ricoh|konica|bizhub|xerox|kyocera|sharp\s+mx|brother\s+mfc)/i,
    name: "a scanner or copier",
    category: "scanner",
  },
  // Generators: libraries and composition systems
  {
    pattern:
      /itext|pdflib|apache\s+fop|wkhtmltopdf|skia\/pdf|chromium|headless\s?chrome|\bqt\b|reportlab|tcpdf|fpdf|mpdf|dompdf|prince|pdfsharp|jasperreports|crystal\s+reports|birt|aspose|telerik|syncfusion|pdf-lib|pypdf|pdfkit|ghostscript|exstream|quadient|inspire\s+designer|streamserve|papyrus|docorigin|sap\s+netweaver|bi\s+publisher|quickbooks|xero|sage|datev|epos/i,
    name: "a document generator",
    category: "generator",
  },
];

export function classifyProducer(value: string): ProducerEntry | undefined {
  return PRODUCERS.find((p) => p.pattern.test(value));
}

/**
 * Applications that write their PDFs themselves, with the Producer names their own PDF writer puts in the
 * file. A file whose Creator names one of them but whose Producer names another program was made again
 * by that program after the application wrote it (re-distilled, or rewritten by a library).
 */
export const NATIVE_PDF_WRITERS: readonly { creator: RegExp; producer: RegExp; name: string }[] = [
  {
    creator: /^(writer|calc|impress|draw|math)$|libreoffice|openoffice/i,
    producer: /libreoffice|openoffice|^(writer|calc|impress|draw)$/i,
    name: "LibreOffice",
  },
  { creator: /headless\s?chrome|chrome\/\d|chromium/i, producer: /skia\/pdf|chrom(e|ium)/i, name: "Chrome" },
];
