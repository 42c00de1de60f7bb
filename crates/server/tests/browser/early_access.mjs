// Drives posthog-js (the real npm package) in the system's Chromium, through playwright-core,
// against a running `burrow serve`: a shop's page on another origin lists the project's early
// access features (`getEarlyAccessFeatures`) and enrolls its person in one
// (`updateEarlyAccessFeatureEnrollment`); then the same person, in a fresh browser, gets the
// feature's flag on from Burrow's `/flags`. Prints one JSON object (the features listed, the
// flag before, right after and in the fresh browser, the SDK's console and the requests to
// Burrow); exits 1 when the browser part fails, with that JSON on stdout all the same.
//
// Environment:
//   BROWSER_DIR   where posthog-js and playwright-core are installed (`node_modules/` inside)
//   CHROMIUM      the Chromium binary
//   BURROW_URL    `burrow serve`'s address, posthog-js's `api_host`
//   TOKEN         the project's public token
//   FLAG_KEY      the feature's flag
//   PERSON        the distinct id the page identifies its visitor as
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import http from "node:http";
import { onPath } from "./chromium.mjs";

const env = process.env;
const require = createRequire(`${env.BROWSER_DIR}/`);
const { chromium } = require("playwright-core");
const posthogDist = `${env.BROWSER_DIR}/node_modules/posthog-js/dist`;

const result = { console: [], requests: [], steps: [] };
const step = (what) => result.steps.push(`${new Date().toISOString()} ${what}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what, check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** The shop's page: posthog-js pointed at Burrow, its visitor identified as PERSON. */
function page() {
  const options = {
    api_host: env.BURROW_URL,
    person_profiles: "always",
    debug: true,
    // Each capture is sent at once, so the enrollment reaches Burrow before the page is left.
    request_batching: false,
    // Headless Chromium's user agent reads as a bot, whose events posthog-js drops.
    opt_out_useragent_filter: true,
    bootstrap: { distinctID: env.PERSON, isIdentifiedID: true },
  };
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title><script src="/array.full.js"></script>
<script>
  window.flagsLoaded = false;
  posthog.init(${JSON.stringify(env.TOKEN)}, ${JSON.stringify(options)});
  posthog.onFeatureFlags(() => { window.flagsLoaded = true; });
</script></head>
<body><h1>Shop</h1></body></html>`;
}

function startSite() {
  const server = http.createServer((request, response) => {
    const path = new URL(request.url, "http://site").pathname;
    if (path === "/shop.html") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(page());
    } else if (path === "/array.full.js") {
      response.writeHead(200, { "content-type": "application/javascript" });
      response.end(readFileSync(`${posthogDist}/array.full.js`));
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function watch(tab) {
  tab.on("console", (message) => result.console.push(`[${message.type()}] ${message.text()}`.slice(0, 1000)));
  tab.on("pageerror", (error) => result.console.push(`[pageerror] ${error.message}`));
  tab.on("response", (response) => {
    const request = response.request();
    if (!request.url().startsWith(env.BURROW_URL)) return;
    result.requests.push({ method: request.method(), url: request.url(), status: response.status() });
  });
}

/** A fresh browser context's tab on the shop, once posthog-js has its flags. */
async function openShop(browser, url) {
  const context = await browser.newContext();
  const tab = await context.newPage();
  watch(tab);
  await tab.goto(url);
  await waitFor("the flags", () => tab.evaluate(() => window.flagsLoaded), 20_000);
  return { context, tab };
}

const flagOn = (tab) => tab.evaluate((key) => posthog.isFeatureEnabled(key) === true, env.FLAG_KEY);

async function run(browser, url) {
  step("open the shop");
  const first = await openShop(browser, url);
  result.before = await flagOn(first.tab);
  step("list the early access features");
  result.features = await first.tab.evaluate(
    () => new Promise((resolve) => posthog.getEarlyAccessFeatures((features) => resolve(features), true)),
  );
  step("enroll");
  const enrollments = () =>
    result.requests.filter((request) => request.method === "POST" && !request.url.includes("/flags")).length;
  const sentBefore = enrollments();
  await first.tab.evaluate((key) => posthog.updateEarlyAccessFeatureEnrollment(key, true), env.FLAG_KEY);
  result.rightAfter = await flagOn(first.tab);
  await waitFor("the enrollment's capture", () => enrollments() > sentBefore, 20_000);
  await first.context.close();
  step("the same person in a fresh browser");
  const second = await openShop(browser, url);
  result.freshBrowser = await flagOn(second.tab);
  await second.context.close();
}

let browser;
let site;
let failed = false;
try {
  site = await startSite();
  browser = await chromium.launch({
    executablePath: onPath(env.CHROMIUM),
    headless: true,
    // posthog-js drops every event when navigator.webdriver is true.
    args: ["--disable-blink-features=AutomationControlled", "--no-sandbox", "--disable-dev-shm-usage"],
    timeout: 60_000,
  });
  await run(browser, `http://127.0.0.1:${site.address().port}/shop.html`);
} catch (error) {
  failed = true;
  result.error = String(error?.stack ?? error);
} finally {
  await browser?.close();
  site?.close();
}
process.stdout.write(JSON.stringify(result));
process.exit(failed ? 1 : 0);
