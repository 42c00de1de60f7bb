// Drives Burrow's console (`/app/`) in the system's Chromium through playwright-core, as a person
// would: signs in with a key, opens the surveys list and one survey's results (with the stats
// API's per-question counts and the responses table), filters its open answers, downloads the
// CSV, looks at it at phone width, launches and stops a draft survey through the confirmation
// dialog, opens the plugins, signs out, and signs in again with a key that lacks `survey:read`.
// Prints one JSON object with every number the pages showed (read through their `data-testid`s),
// screenshots taken, CSP violations, page errors, console messages and failed requests; exits 1
// when a step fails, with that JSON on stdout all the same.
//
// Environment:
//   BROWSER_DIR   where playwright-core is installed (`node_modules/` inside)
//   CHROMIUM      the Chromium binary
//   BURROW_URL    the console's server
//   KEY           a key with every scope
//   NARROW_KEY    a key without `survey:read`
//   SURVEY        the survey to open
//   DRAFT         a draft survey to launch and stop
//   SEARCH        the text to filter the open question's answers with
//   DAY           a date (YYYY-MM-DD) to read the results of, from and to
//   SHOTS         where screenshots go (console-surveys.png, console-results.png,
//                 console-results-phone.png, console-confirm.png, console-stopped.png,
//                 console-no-scope.png)
import { createRequire } from "node:module";
import { join } from "node:path";
import { onPath } from "./chromium.mjs";

const env = process.env;
const require = createRequire(`${env.BROWSER_DIR}/`);
const { chromium } = require("playwright-core");

const result = {
  steps: [], console: [], cspViolations: [], pageErrors: [], requests: [], failedRequests: [],
};
const step = (what) => result.steps.push(`${new Date().toISOString()} ${what}`);
const shot = (name) => join(env.SHOTS, name);

async function signIn(page, key) {
  await page.getByTestId("key-input").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** The text of every element matching `testId` inside `scope`. */
async function texts(scope, testId) {
  return (await scope.getByTestId(testId).allTextContents()).map((text) => text.trim());
}

async function run(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener("securitypolicyviolation", (event) => {
      window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  page.on("console", (message) => {
    result.console.push(`${message.type()}: ${message.text()}`);
    if (message.text().includes("Content Security Policy")) result.cspViolations.push(message.text());
  });
  page.on("pageerror", (error) => result.pageErrors.push(String(error)));
  page.on("request", (request) => result.requests.push(request.url()));
  page.on("requestfailed", (request) =>
    result.failedRequests.push(`${request.url()} ${request.failure()?.errorText}`));
  page.on("response", (response) => {
    if (response.status() >= 400) result.failedRequests.push(`${response.url()} ${response.status()}`);
  });

  step("sign in");
  await page.goto(`${env.BURROW_URL}/app/`);
  await signIn(page, env.KEY);
  const table = page.getByTestId("surveys");
  await table.waitFor();
  result.surveys = await page.getByTestId("survey-row").evaluateAll((rows) => rows.map((row) => ({
    id: row.dataset.surveyId,
    name: row.querySelector("th").textContent.trim(),
    status: row.querySelector("[data-testid=survey-status]").textContent.trim(),
    responses: row.querySelector("[data-testid=survey-responses]").textContent.trim(),
  })));
  await page.screenshot({ path: shot("console-surveys.png"), fullPage: true });
  // The icon index.html names loads as an image under the page's policy (headless Chromium
  // does not fetch tab icons itself).
  result.favicon = await page.evaluate(() => new Promise((resolve) => {
    const image = new Image();
    image.onload = () => resolve(image.naturalWidth > 0);
    image.onerror = () => resolve(false);
    image.src = document.querySelector("link[rel=icon]").href;
  }));

  step("open the results");
  await page.getByRole("link", { name: result.surveys.find((s) => s.id === env.SURVEY).name }).click();
  const questions = page.getByTestId("question");
  await page.getByTestId("funnel").waitFor();
  await questions.first().waitFor();
  await page.getByTestId("open-count").waitFor();
  // Every chart drawn: Chart.js sized its canvas.
  await page.waitForFunction(() => [...document.querySelectorAll("canvas")]
    .every((canvas) => canvas.width > 0 && window.Chart?.getChart(canvas)));
  result.charts = await page.locator("canvas").count();
  result.funnel = {};
  for (const event of ["shown", "dismissed", "sent"]) {
    result.funnel[event] = (await page.getByTestId(`funnel-${event}`).textContent()).trim();
  }
  result.funnel.response_rate = (await page.getByTestId("rate-response").textContent()).trim();
  result.responses = (await page.getByTestId("results-responses").textContent()).trim();
  result.questions = await questions.evaluateAll((sections) => sections.map((section) => ({
    id: section.dataset.questionId,
    type: section.dataset.questionType,
    answered: section.querySelector("[data-testid=answered]").textContent.trim(),
    rows: [...section.querySelectorAll("[data-testid=value-row]")].map((row) => ({
      value: row.dataset.value,
      count: row.querySelector("[data-testid=value-count]").textContent.trim(),
      percent: row.querySelector("[data-testid=value-percent]").textContent.trim(),
    })),
  })));
  result.questionStats = await questions.evaluateAll((sections) => sections.map((section) => {
    const stats = section.querySelector("[data-testid=question-stats]");
    return stats && {
      responses: stats.querySelector("[data-testid=stats-responses]").textContent.trim(),
      average: stats.querySelector("[data-testid=stats-average]")?.textContent.trim() ?? null,
      rows: Object.fromEntries([...stats.querySelectorAll("[data-testid=stats-row]")].map((row) =>
        [row.dataset.value, row.querySelector("[data-testid=stats-count]").textContent.trim()])),
    };
  }));
  await page.getByTestId("response-row").first().waitFor();
  result.responseRows = await page.getByTestId("response-row").evaluateAll((rows) => rows.map((row) => ({
    person: row.querySelector("[data-testid=response-person]").textContent.trim(),
    language: row.querySelector("[data-testid=response-language]").textContent.trim(),
  })));
  result.nps = {};
  for (const part of ["score", "promoters", "passives", "detractors"]) {
    result.nps[part] = (await page.getByTestId(`nps-${part}`).textContent()).trim();
  }
  await page.screenshot({ path: shot("console-results.png"), fullPage: true });

  step("filter the open answers");
  const open = questions.filter({ has: page.getByTestId("answer-search") });
  result.open = { count: (await open.getByTestId("open-count").textContent()).trim() };
  await open.getByTestId("answer-search").fill(env.SEARCH);
  await open.getByTestId("answer-search").press("Enter");
  await page.waitForFunction((before) => {
    const count = document.querySelector("[data-testid=open-count]");
    return count && count.textContent.trim() !== before;
  }, result.open.count);
  result.open.filteredCount = (await open.getByTestId("open-count").textContent()).trim();
  result.open.filtered = await open.getByTestId("open-answer").evaluateAll((items) =>
    items.map((item) => item.querySelector("p").textContent.trim()));

  step("one day's results");
  await page.getByTestId("date-from").fill(env.DAY);
  await page.getByTestId("date-to").fill(env.DAY);
  await page.getByTestId("apply-range").click();
  // The new render's inputs carry the day as their value attribute (typed values do not).
  await page.waitForFunction((day) => {
    const from = document.querySelector("[data-testid=date-from]");
    return from?.getAttribute("value") === day && document.querySelector("[data-testid=open-count]");
  }, env.DAY);
  result.day = {
    sent: (await page.getByTestId("funnel-sent").textContent()).trim(),
    shown: (await page.getByTestId("funnel-shown").textContent()).trim(),
    responses: (await page.getByTestId("results-responses").textContent()).trim(),
  };

  step("download the CSV");
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByTestId("export-csv").click(),
  ]);
  const csv = await download.path();
  result.csvDownloaded = Boolean(csv) && download.url().startsWith("blob:");

  step("phone width");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(200);
  result.phoneOverflow = await page.evaluate(() =>
    document.documentElement.scrollWidth > window.innerWidth + 1);
  await page.screenshot({ path: shot("console-results-phone.png"), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });

  step("launch and stop a draft survey");
  await page.evaluate((id) => {
    location.hash = location.hash.replace(/surveys\/.*$/, `surveys/${id}`);
  }, env.DRAFT);
  const surveyStatus = page.getByTestId("survey-status");
  const dialog = page.getByTestId("confirm-dialog");
  await page.getByTestId("launch-survey").waitFor();
  const lifecycle = { before: (await surveyStatus.textContent()).trim() };
  await page.getByTestId("launch-survey").click();
  await dialog.waitFor();
  lifecycle.dialog = await dialog.evaluate((element) => ({
    modal: element.open && element.matches(":modal"),
    title: element.querySelector("h2").textContent.trim(),
    focused: document.activeElement?.dataset.testid,
  }));
  await page.screenshot({ path: shot("console-confirm.png") });
  await page.getByTestId("confirm-cancel").click();
  await dialog.waitFor({ state: "detached" });
  lifecycle.afterCancel = (await surveyStatus.textContent()).trim();
  lifecycle.sentOnCancel = result.requests.some((url) => url.includes("/launch/"));
  await page.getByTestId("launch-survey").click();
  await page.getByTestId("confirm-ok").click();
  await page.waitForFunction(() =>
    document.querySelector("[data-testid=survey-status]")?.textContent.trim() !== "draft");
  lifecycle.launched = (await surveyStatus.textContent()).trim();
  lifecycle.launchedOutcome = (await page.getByTestId("lifecycle-outcome").textContent()).trim();
  lifecycle.focusAfterLaunch = await page.evaluate(() => document.activeElement?.dataset.testid);
  await page.getByTestId("stop-survey").click();
  await dialog.waitFor();
  lifecycle.stopTitle = (await dialog.locator("h2").textContent()).trim();
  await page.getByTestId("confirm-ok").click();
  await page.waitForFunction(() =>
    document.querySelector("[data-testid=survey-status]")?.textContent.trim() !== "running");
  lifecycle.stopped = (await surveyStatus.textContent()).trim();
  lifecycle.buttonsWhenStopped = await page.locator("[data-testid$=-survey]").count();
  result.lifecycle = lifecycle;
  await page.screenshot({ path: shot("console-stopped.png"), fullPage: true });

  step("plugins");
  await page.getByRole("link", { name: "Plugins" }).click();
  await page.getByRole("heading", { name: "Plugins" }).waitFor();
  await page.waitForFunction(() => !document.querySelector("main").textContent.includes("Loading"));
  result.plugins = (await page.locator("main").textContent()).trim();

  step("a reload keeps the session; the keyboard reaches sign-out from the top");
  await page.reload();
  await page.getByRole("heading", { name: "Plugins" }).waitFor();
  let reached = false;
  for (let n = 0; n < 12 && !reached; n += 1) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate(() => document.activeElement?.dataset.testid === "sign-out");
  }
  result.signOutByKeyboard = reached;

  step("storage");
  result.storage = {
    session: await page.evaluate(() => sessionStorage.getItem("burrow.personal_api_key")),
    local: await page.evaluate(() => localStorage.length),
    cookies: (await context.cookies()).length + (await page.evaluate(() => document.cookie.length)),
    keyInAnyUrl: result.requests.some((url) => url.includes(env.KEY)) || page.url().includes(env.KEY),
  };
  await page.getByTestId("sign-out").click();
  await page.getByTestId("sign-in").waitFor();
  result.storage.afterSignOut = await page.evaluate(() => sessionStorage.getItem("burrow.personal_api_key"));

  step("a key without survey:read");
  await signIn(page, env.NARROW_KEY);
  await page.getByTestId("missing-scope").first().waitFor();
  result.narrow = (await page.getByTestId("missing-scope").first().textContent()).trim();
  await page.screenshot({ path: shot("console-no-scope.png"), fullPage: true });

  result.cspViolations.push(...await page.evaluate(() => window.__violations));
}

let browser;
let failed = false;
try {
  browser = await chromium.launch({
    executablePath: onPath(env.CHROMIUM),
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
    timeout: 60_000,
  });
  await run(browser);
} catch (error) {
  failed = true;
  result.error = String(error?.stack ?? error);
} finally {
  await browser?.close().catch(() => {});
}
// Every URL the page asked for, without the noise of the charts' library.
result.requests = result.requests.filter((url) => url.includes("/api/"));
process.stdout.write(JSON.stringify(result));
process.exit(failed ? 1 : 0);
