export const PHASES = ["Queued", "Running", "Completed", "Failed"] as const;
export type Phase = (typeof PHASES)[number];
export const API_STATUSES = ["QUEUED", "RUNNING", "COMPLETED", "FAILED"] as const;
export type ApiStatus = (typeof API_STATUSES)[number];

const toApi: Record<Phase, ApiStatus> = {
  Queued: "QUEUED",
  Running: "RUNNING",
  Completed: "COMPLETED",
  Failed: "FAILED",
};
const toPhase: Record<ApiStatus, Phase> = {
  QUEUED: "Queued",
  RUNNING: "Running",
  COMPLETED: "Completed",
  FAILED: "Failed",
};

export function phaseToApiStatus(phase: Phase | undefined): ApiStatus {
  return toApi[phase ?? "Queued"];
}
export function apiStatusToPhase(status: ApiStatus): Phase {
  return toPhase[status];
}
export function isTerminal(phase: Phase | undefined): boolean {
  return phase === "Completed" || phase === "Failed";
}
