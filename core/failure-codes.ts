/** Failure codes of a FAILED detection, each with its fixed one-sentence failure_message. */
export const FAILURE_MESSAGES = {
  source_unreachable:
    "The document could not be downloaded because its host could not be reached; check that source_url is correct and publicly reachable.",
  source_forbidden:
    "The document's address is one this deployment does not fetch from: a private, loopback, link-local or metadata network, or a port it does not allow (80 and 443 unless configured otherwise).",
  source_http_error:
    "The document's server answered with an HTTP error status instead of the document; check that source_url points at the file and is accessible.",
  source_too_large: "The document is larger than this deployment's maximum document size.",
  source_timeout: "Downloading the document took longer than this deployment allows.",
  upload_not_found:
    "No document was found for the given upload_id; upload the file before creating the detection.",
  unsupported_content_type: "The document is not a supported type; submit a PDF, JPEG, PNG or TIFF file.",
  document_unreadable: "The document is damaged or cannot be read as the type it claims to be.",
  document_encrypted:
    "The document is protected by a password or certificate and cannot be opened; submit it without the protection.",
  document_too_complex:
    "The document is beyond what this deployment checks (too many pages, drawing operations or image pixels, data that expands too far, or checks that ran out of time or memory); a copy exported again from its source usually passes.",
  check_failed:
    "The document checks could not be completed; retry the detection or contact support with the detection id.",
  agent_failed:
    "The analysis agent could not produce a verdict; see agent_error, and retry the detection or contact support.",
  deadline_exceeded:
    "The detection did not finish within this deployment's time limit; retry it or contact support.",
  internal_error:
    "An internal error stopped the detection; retry it or contact support with the detection id.",
  forced_error: "The job failed on purpose because it was created with force_error set to true.",
} as const;

export type FailureCode = keyof typeof FAILURE_MESSAGES;
export const FAILURE_CODES = Object.keys(FAILURE_MESSAGES) as FailureCode[];

export function isFailureCode(value: unknown): value is FailureCode {
  return typeof value === "string" && Object.hasOwn(FAILURE_MESSAGES, value);
}

export function failure(code: FailureCode): { code: FailureCode; message: string } {
  return { code, message: FAILURE_MESSAGES[code] };
}
