/**
 * Swagger UI's Authorize flow in a real browser against the running standalone service: Debian's chromium
 * (installed by `npm run test:setup`) driven by playwright-core. The page fetches a token from the
 * document's OAuth2 tokenUrl (/token) with the client's credentials, then "Try it out" on GET /v1/detection
 * sends that token and gets 200. Screenshots go to .test-artifacts/swagger-ui/ (gitignored).
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, chromiumAvailable, launchChromium } from "./browser.js";
import { CLIENTS, type Service, startService } from "./harness.js";

describe.skipIf(!chromiumAvailable)(
  chromiumAvailable
    ? "Swagger UI in chromium"
    : "Swagger UI in chromium (skipped: /usr/bin/chromium is missing; run `npm run test:setup`)",
  () => {
    let svc: Service;
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      svc = await startService();
      browser = await launchChromium("swagger-ui", { width: 1280, height: 900 });
      page = browser.page;
    });

    afterAll(async () => {
      await browser?.close();
      await svc?.dispose();
    });

    it("Authorize fetches a token from /token; Try it out sends it and gets 200", async () => {
      const tokenRequests: { method: string; body: string; authorization?: string }[] = [];
      const apiCalls: { url: string; authorization?: string; status?: number }[] = [];
      const tokens: string[] = [];
      const offsite: string[] = [];
      page.on("request", (req) => {
        const url = new URL(req.url());
        if (url.origin !== svc.url) offsite.push(req.url());
        if (url.pathname === "/token") {
          tokenRequests.push({
            method: req.method(),
            body: req.postData() ?? "",
            authorization: req.headers().authorization,
          });
        }
      });
      page.on("response", async (res) => {
        const url = new URL(res.url());
        if (url.pathname === "/token" && res.status() === 200) {
          tokens.push(((await res.json()) as { access_token: string }).access_token);
        }
        if (url.pathname === "/v1/detection") {
          apiCalls.push({
            url: res.url(),
            authorization: res.request().headers().authorization,
            status: res.status(),
          });
        }
      });

      await page.goto(`${svc.url}/docs`);
      await page.getByRole("button", { name: "Authorize" }).first().waitFor();
      await expect(
        page.getByText("docverify — document verification service").first().isVisible(),
      ).resolves.toBe(true);
      await page.screenshot({ path: path.join(browser.artifacts, "1-docs.png"), fullPage: false });

      // Authorize with the OAuth2 client-credentials scheme.
      await page.getByRole("button", { name: "Authorize" }).first().click();
      const oauth = page.locator(".auth-container").filter({ hasText: "clientCredentials" });
      await oauth.locator("#client_id_clientCredentials").fill(CLIENTS.full.client_id);
      await oauth.locator("#client_secret_clientCredentials").fill(CLIENTS.full.client_secret);
      await oauth.getByText("select all", { exact: true }).click();
      await page.screenshot({ path: path.join(browser.artifacts, "2-authorize-dialog.png") });
      // (the dialog's buttons carry aria-labels: "Apply given OAuth2 credentials", "Close this dialog")
      await oauth.locator("button.modal-btn.authorize").click();
      await oauth.locator("button.modal-btn", { hasText: "Logout" }).waitFor();
      await page.screenshot({ path: path.join(browser.artifacts, "3-authorized.png") });
      await page.locator("button.btn-done").first().click();

      expect(tokenRequests).toHaveLength(1);
      expect(tokenRequests[0]!.method).toBe("POST");
      const form = new URLSearchParams(tokenRequests[0]!.body);
      expect(form.get("grant_type")).toBe("client_credentials");
      expect(form.get("scope")?.split(" ")).toContain("DocumentVerification:detections:get");
      // the client's credentials went as HTTP Basic (Swagger UI's default) or in the form
      const basic = tokenRequests[0]!.authorization;
      if (basic) {
        expect(Buffer.from(basic.replace(/^Basic /, ""), "base64").toString()).toBe(
          `${CLIENTS.full.client_id}:${CLIENTS.full.client_secret}`,
        );
      } else expect(form.get("client_id")).toBe(CLIENTS.full.client_id);
      expect(tokens).toHaveLength(1);

      // Try it out: GET /v1/detection (listDetections).
      const op = page.locator("#operations-detections-listDetections");
      await op.locator(".opblock-summary").click();
      await op.locator("button.try-out__btn").click();
      await op.locator("button.execute").click();
      const status = op.locator(".live-responses-table tr.response .response-col_status").first();
      await status.waitFor();
      await op.locator(".live-responses-table").scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(browser.artifacts, "4-try-it-out.png"), fullPage: false });

      expect(apiCalls).toHaveLength(1);
      expect(apiCalls[0]).toMatchObject({ authorization: `Bearer ${tokens[0]}`, status: 200 });
      expect((await status.textContent())?.trim()).toBe("200");
      // The documented answers show their own examples (not "Missing bearer token" for 403/404/429).
      const get = page.locator("#operations-detections-getDetection");
      await get.locator(".opblock-summary").click();
      const notFound = get.locator("tr.response[data-code='404']");
      await notFound.waitFor();
      await notFound.scrollIntoViewIfNeeded();
      await page.screenshot({
        path: path.join(browser.artifacts, "5-documented-answers.png"),
        fullPage: false,
      });
      expect(await notFound.textContent()).toContain('"detail": "Detection not found"');
      const forbidden = await get.locator("tr.response[data-code='403']").textContent();
      expect(forbidden).toContain("Missing required scopes: DocumentVerification:detections:get");
      expect(forbidden).not.toContain("Missing bearer token");

      // everything the page loaded came from the service itself (no CDN)
      expect(offsite).toEqual([]);
    });
  },
);
