/**
 * pdfjs-dist's legacy build bundles a core-js polyfill that replaces the global JSON.stringify with a
 * JavaScript implementation on Node versions without JSON.rawJSON (Node 20): every JSON.stringify in the
 * process then runs several times slower. This module is imported before anything that loads pdfjs and
 * captures the native function; `restoreNativeJson()` puts it back once the imports are done.
 */
export const nativeStringify = JSON.stringify;

export function restoreNativeJson(): void {
  if (JSON.stringify !== nativeStringify) JSON.stringify = nativeStringify;
}
