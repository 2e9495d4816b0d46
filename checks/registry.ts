import type { Check } from "./check.js";
import { fileTypeCheck } from "./file-type.js";
import { metadataDatesCheck } from "./metadata-dates.js";

/** Every check the check step runs, in order. Add a check here to run it. */
export const CHECKS: readonly Check[] = [fileTypeCheck, metadataDatesCheck];
