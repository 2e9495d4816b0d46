import type { Config } from "../core/config.js";
import type { WebhookSender } from "../core/ports.js";
import { webhookSettingsFrom } from "../core/webhook-settings.js";
import { createWebhookSender } from "../platform/http/webhook-sender.js";

/**
 * The webhook sender of either runtime: the address policy of source downloads (DOCVERIFY_ALLOW_PRIVATE_SOURCES,
 * DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES, DOCVERIFY_ALLOWED_SOURCE_PORTS) and the deliverer's deadline and cap.
 */
export function webhookSenderFor(
  config: Config,
  env: Record<string, string | undefined> = process.env,
): WebhookSender {
  const settings = webhookSettingsFrom(env);
  return createWebhookSender({
    allowPrivate: config.allowPrivateSources,
    allowAddresses: config.allowedPrivateAddresses,
    allowedPorts: config.allowedSourcePorts,
    timeoutMs: settings.timeoutMs,
    maxResponseBytes: settings.maxResponseBytes,
  });
}
