/**
 * The DocMDP permission levels a signature grants to later revisions (ISO 32000 §12.8.2.2), as
 * modification-policy.ts grades every incremental update:
 *
 *   level 1  no changes, except validation data (DSS), document timestamps and metadata
 *   level 2  + filling in form fields and signing (new or existing signature fields)
 *   level 3  + adding, changing or removing annotations
 * A certification signature states its level (/TransformParams /P); it caps every signature of the
 * document. An approval signature without DocMDP is judged at level 2, as Acrobat and pyHanko let forms
 * be filled and countersigned after it; annotations (which can be laid over page content) are not.
 */

export type DocMdpLevel = 1 | 2 | 3;

/** Level used for signatures that carry no DocMDP transform. */
export const DEFAULT_LEVEL: DocMdpLevel = 2;

export function levelWords(level: DocMdpLevel): string {
  switch (level) {
    case 1:
      return "no changes but validation data, document timestamps and metadata";
    case 2:
      return "form filling and further signatures";
    case 3:
      return "form filling, further signatures and annotations";
  }
}
