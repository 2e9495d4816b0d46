/** Moved to core/address-policy.ts: the one address policy of source downloads and webhook deliveries. */
export * from "../core/address-policy.js";
