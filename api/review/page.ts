import { createHash } from "node:crypto";
import type { DetectionDetailData } from "../../core/detection-detail.js";
import type { EvidenceManifest } from "../../core/evidence.js";
import { scoreBandOf } from "../../core/verdict.js";
import { neutralizeForDisplay } from "../../core/display-text.js";
import type { EvidenceState } from "../detections/evidence-read.js";

/**
 * The reviewer page (docs/evidence.md): one self-contained HTML document — its style and script inline,
 * allowed by their hashes in the Content-Security-Policy, nothing from any other origin — that shows the
 * score band, the headline groups, each page image with its numbered boxes (a click on a group highlights
 * its boxes and scrolls to the first), the page as first saved beside the page as submitted for pages an
 * incremental update changed, the per-check list and the reasoning. Everything taken from the document
 * (file name, headlines, messages, values) is hostile input: it is only ever written through `esc`, as
 * text; the script reads nothing but numbers from data attributes and builds no markup.
 */

const STYLE = `
:root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #d9dde5; --mark: #e6007a; --hl: #ffb000; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: #f4f5f8; }
header { background: #fff; border-bottom: 1px solid var(--line); padding: 18px 28px; display: flex; gap: 24px; align-items: center; flex-wrap: wrap; }
header h1 { font-size: 20px; margin: 0 0 4px; }
header .meta { color: var(--muted); margin: 0; font-size: 13px; word-break: break-all; }
.band { border-radius: 8px; padding: 10px 16px; font-weight: 600; font-size: 18px; margin-left: auto; }
.band small { display: block; font-weight: 400; font-size: 12px; }
.band-high { background: #fde2e4; color: #8a1020; }
.band-moderate { background: #fff1d0; color: #7a4b00; }
.band-low { background: #dff3e4; color: #14532d; }
.band-none { background: #e8eaf0; color: var(--muted); }
main { display: grid; grid-template-columns: minmax(300px, 420px) 1fr; gap: 20px; padding: 20px 28px; align-items: start; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px; }
h2 { font-size: 16px; margin: 0 0 10px; }
h3 { font-size: 13px; margin: 0 0 6px; color: var(--muted); font-weight: 600; }
#groups { position: sticky; top: 12px; max-height: calc(100vh - 24px); overflow: auto; }
ol.groups { list-style: none; margin: 0; padding: 0; }
ol.groups li { margin: 0 0 8px; }
button.group { all: unset; box-sizing: border-box; display: grid; grid-template-columns: 28px 1fr; gap: 8px; width: 100%; padding: 8px; border: 1px solid var(--line); border-radius: 6px; cursor: pointer; }
button.group:hover, button.group:focus-visible { border-color: var(--mark); }
button.group.active { border-color: var(--hl); background: #fff7e0; }
.num { display: inline-block; min-width: 24px; padding: 1px 6px; border-radius: 4px; background: #960050; color: #fff; font-weight: 700; text-align: center; font-size: 13px; height: fit-content; }
.headline { font-weight: 600; overflow-wrap: anywhere; }
.detail { grid-column: 2; color: var(--muted); font-size: 12.5px; overflow-wrap: anywhere; }
.sev { font-variant-numeric: tabular-nums; }
.pages { display: flex; flex-direction: column; gap: 20px; }
figure.page { margin: 0; }
figure.page figcaption { font-weight: 600; margin-bottom: 8px; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.sheet { position: relative; display: block; border: 1px solid var(--line); background: #fff; line-height: 0; }
.sheet img { width: 100%; height: auto; display: block; }
.box { position: absolute; border: 3px solid transparent; border-radius: 3px; cursor: pointer; }
.box.hl { border-color: var(--hl); background: rgba(255, 176, 0, 0.18); box-shadow: 0 0 0 4px rgba(255, 176, 0, 0.45); }
.missing { color: var(--muted); font-style: italic; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px; border-top: 1px solid var(--line); overflow-wrap: anywhere; }
th { color: var(--muted); font-weight: 600; }
.outcome-flag { color: #8a1020; font-weight: 600; }
.outcome-error { color: #7a4b00; font-weight: 600; }
pre.reasoning { white-space: pre-wrap; font: inherit; margin: 0; overflow-wrap: anywhere; }
.wide { grid-column: 1 / -1; }
.note { color: var(--muted); font-size: 13px; }
`;

const SCRIPT = `
(function () {
  "use strict";
  var boxes = document.querySelectorAll(".box[data-box]");
  for (var i = 0; i < boxes.length; i++) {
    var f = boxes[i].getAttribute("data-box").split(",").map(Number);
    if (f.length !== 4 || f.some(function (v) { return !isFinite(v); })) continue;
    var pad = 0.004;
    boxes[i].style.left = (Math.max(0, f[0] - pad) * 100) + "%";
    boxes[i].style.top = (Math.max(0, f[1] - pad) * 100) + "%";
    boxes[i].style.width = ((f[2] - f[0] + 2 * pad) * 100) + "%";
    boxes[i].style.height = ((f[3] - f[1] + 2 * pad) * 100) + "%";
  }
  function select(n, scroll) {
    var old = document.querySelectorAll(".hl, .active");
    for (var i = 0; i < old.length; i++) old[i].classList.remove("hl", "active");
    var marks = document.querySelectorAll('.box[data-group="' + n + '"]');
    for (var j = 0; j < marks.length; j++) marks[j].classList.add("hl");
    var button = document.querySelector('button.group[data-group="' + n + '"]');
    if (button) { button.classList.add("active"); button.setAttribute("aria-pressed", "true"); }
    if (scroll) {
      var target = marks[0] || document.getElementById("page-" + (button && button.getAttribute("data-page")));
      if (target) target.scrollIntoView({ behavior: "smooth", block: "center" });
    } else if (button) {
      button.scrollIntoView({ behavior: "smooth", block: "nearest" });
    }
  }
  var buttons = document.querySelectorAll("button.group[data-group]");
  for (var k = 0; k < buttons.length; k++) {
    buttons[k].addEventListener("click", function (e) {
      select(Number(e.currentTarget.getAttribute("data-group")), true);
    });
  }
  for (var m = 0; m < boxes.length; m++) {
    boxes[m].addEventListener("click", function (e) {
      select(Number(e.currentTarget.getAttribute("data-group")), false);
    });
  }
})();
`;

const hash = (s: string) => `'sha256-${createHash("sha256").update(s).digest("base64")}'`;

/**
 * The page's Content-Security-Policy: nothing from anywhere by default; its own inline style and script by
 * hash, images from the service itself; no forms, frames, plugins or base URL changes.
 */
export const REVIEW_CSP = [
  "default-src 'none'",
  `style-src ${hash(STYLE)}`,
  `script-src ${hash(SCRIPT)}`,
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers of every answer of the reviewer page and its images. */
export const REVIEW_HEADERS: Record<string, string> = {
  "Content-Security-Policy": REVIEW_CSP,
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Cache-Control": "no-store",
};

/** HTML-escapes text for element content and quoted attribute values. */
export function esc(value: unknown): string {
  return String(value ?? "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

function documentPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body}
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** The one answer of a link that does not open a page: the same for wrong, expired and foreign links. */
export const NOT_FOUND_HTML = documentPage(
  "Review link not valid — docverify",
  `<header><div><h1>This review link is not valid</h1><p class="meta">It may have expired. Ask for a new one: GET /v1/detection/{detection_id}/evidence returns a fresh review_url.</p></div></header>`,
);

const BAND_WORDS = { low: "Low risk", moderate: "Moderate risk", high: "High risk" } as const;
const fraction = (f: readonly number[] | null) => (f ? f.map((v) => v.toFixed(4)).join(",") : "");

function band(detail: DetectionDetailData): string {
  if (detail.authoritative) {
    const trust = detail.authoritative.trust ?? "undecided";
    const cls = trust === "corroborated" ? "band-low" : trust === "unattested" ? "band-high" : "band-none";
    return `<div class="band ${cls}" id="band">Decided by ${esc(detail.authoritative.check_id)}: ${esc(trust)}<small>${esc(detail.authoritative.directive ?? "")}</small></div>`;
  }
  const score = detail.verdict?.fraud_score ?? detail.score;
  if (score === null || score === undefined)
    return `<div class="band band-none" id="band">No score<small>${esc(detail.status)}</small></div>`;
  const b = scoreBandOf(score);
  return `<div class="band band-${b}" id="band">${BAND_WORDS[b]}<small>fraud score ${esc(score)}/100</small></div>`;
}

function groupsSection(m: EvidenceManifest): string {
  if (m.groups.length === 0)
    return `<section id="groups"><h2>What was found</h2><p class="note">No check reported a finding.</p></section>`;
  const items = m.groups
    .map((g) => {
      const checks = g.checks.map((c) => `${c.checkId}: ${c.code} (${c.severity})`).join(" · ");
      const where = g.pages.length ? ` · page${g.pages.length > 1 ? "s" : ""} ${g.pages.join(", ")}` : "";
      return `<li><button type="button" class="group" data-group="${g.number}" data-page="${g.pages[0] ?? ""}" aria-pressed="false"><span class="num">${g.number}</span><span class="headline">${esc(g.headline)}</span><span class="detail"><span class="sev">severity ${g.severity}</span>${esc(where)} · ${g.findingCount} finding${g.findingCount === 1 ? "" : "s"}</span><span class="detail">${esc(checks)}</span></button></li>`;
    })
    .join("\n");
  const more =
    m.groupsTotal > m.groups.length
      ? `<p class="note">${m.groupsTotal - m.groups.length} further groups of weaker findings are in the evidence data.</p>`
      : "";
  return `<section id="groups"><h2>What was found (${m.findingsTotal} finding${m.findingsTotal === 1 ? "" : "s"} in ${m.groupsTotal} group${m.groupsTotal === 1 ? "" : "s"})</h2><ol class="groups">${items}</ol>${more}</section>`;
}

function sheet(
  src: string,
  alt: string,
  boxes: { group: number; fraction: readonly number[] | null }[],
): string {
  const marks = boxes
    .filter((b) => b.fraction)
    .map(
      (b) =>
        `<div class="box" data-group="${b.group}" data-box="${fraction(b.fraction)}" title="${b.group}"></div>`,
    )
    .join("");
  return `<div class="sheet"><img src="${esc(src)}" alt="${esc(alt)}">${marks}</div>`;
}

function pagesSection(
  m: EvidenceManifest,
  imageUrl: (page: number, v: "submitted" | "first-saved") => string,
): string {
  if (m.pages.length === 0) return "";
  const regionGroups = new Set(
    m.findings.filter((f) => f.code === "revision_changed_region" && f.group !== null).map((f) => f.group),
  );
  const figures = m.pages
    .map((p) => {
      const regions = m.groups.flatMap((g) =>
        g.regions
          .filter((r) => r.page === p.number)
          .map((r) => ({ group: g.number, fraction: r.bboxFraction })),
      );
      const caption = `Page ${p.number}${p.groups.length ? ` · group${p.groups.length > 1 ? "s" : ""} ${p.groups.join(", ")}` : ""}`;
      if (!p.image) {
        const why =
          p.notRendered === "page_cap" || p.notRendered === "byte_cap"
            ? "not rendered: beyond this deployment's image bounds per detection"
            : p.notRendered === "time"
              ? "not rendered: beyond the rendering time bound"
              : "no image of this page";
        return `<figure class="page" id="page-${p.number}"><figcaption>${esc(caption)}</figcaption><p class="missing">${esc(why)}</p></figure>`;
      }
      const submitted = sheet(imageUrl(p.number, "submitted"), `Page ${p.number} as submitted`, regions);
      if (!p.firstSaved) {
        return `<figure class="page" id="page-${p.number}"><figcaption>${esc(caption)}</figcaption>${submitted}</figure>`;
      }
      const before = sheet(
        imageUrl(p.number, "first-saved"),
        `Page ${p.number} as first saved`,
        regions.filter((r) => regionGroups.has(r.group)),
      );
      return `<figure class="page" id="page-${p.number}"><figcaption>${esc(caption)} · changed by an incremental update</figcaption><div class="pair"><div><h3>As first saved (revision ${p.firstSaved.revision ?? 1})</h3>${before}</div><div><h3>As submitted</h3>${submitted}</div></div></figure>`;
    })
    .join("\n");
  return `<section class="pages-section"><h2>Pages with findings</h2><div class="pages">${figures}</div>${
    m.render?.notes.length ? `<p class="note">${esc(m.render.notes.join(" "))}</p>` : ""
  }</section>`;
}

function checksSection(m: EvidenceManifest, detail: DetectionDetailData): string {
  const importance = new Map((detail.verdict?.per_check ?? []).map((p) => [p.check_id, p.importance]));
  const rows = m.checks
    .map(
      (c) =>
        `<tr><td>${esc(c.checkId)}</td><td class="outcome-${esc(c.outcome)}">${esc(c.outcome)}</td><td>${c.severity}</td><td>${importance.get(c.checkId) ?? "–"}</td><td>${c.findingCount}</td><td>${esc(c.summary)}</td></tr>`,
    )
    .join("");
  return `<section id="checks" class="wide"><h2>Checks</h2><table><thead><tr><th>check</th><th>outcome</th><th>severity</th><th>importance</th><th>findings</th><th>summary</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

export interface ReviewPageInput {
  detail: DetectionDetailData;
  state: EvidenceState;
  /** URL of a page image for this page (relative, signed with the link's token). */
  imageUrl(page: number, version: "submitted" | "first-saved"): string;
}

/** The reviewer page of a detection. */
export function reviewPage({ detail, state, imageUrl }: ReviewPageInput): string {
  const meta = [
    detail.id,
    detail.filename ? neutralizeForDisplay(detail.filename) : undefined,
    detail.completed_at ? `completed ${detail.completed_at}` : undefined,
  ]
    .filter(Boolean)
    .join(" · ");
  const header = `<header><div><h1>Document review</h1><p class="meta">${esc(meta)}</p></div>${band(detail)}</header>`;
  let main: string;
  if (state.kind === "ready") {
    const m = state.manifest;
    const reasoning = detail.verdict?.reasoning
      ? `<section id="reasoning" class="wide"><h2>Reasoning</h2><pre class="reasoning">${esc(detail.verdict.reasoning)}</pre></section>`
      : "";
    main = `<main>${groupsSection(m)}${pagesSection(m, imageUrl)}${checksSection(m, detail)}${reasoning}</main>`;
  } else {
    const why =
      state.kind === "pruned"
        ? "The evidence and the reasoning of this detection were removed after the retention period; the score is kept."
        : state.kind === "pending"
          ? "This detection has not completed yet."
          : "This detection has no stored evidence.";
    main = `<main><section class="wide"><p class="note">${esc(why)}</p></section></main>`;
  }
  return documentPage(`Review ${detail.id} — docverify`, `${header}\n${main}`);
}
