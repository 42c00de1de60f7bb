// Drives posthog-js (the real npm package) in the system's Chromium, through playwright-core,
// against a running `burrow serve`, from a page served on another origin: a small HTTP server on
// another loopback port that this script runs. Prints one JSON object (what the page showed,
// the SDK's console, every request to Burrow with decoded bodies); exits 1 when the browser
// part fails, with that JSON on stdout all the same.
//
// Environment:
//   BROWSER_DIR   where posthog-js and playwright-core are installed (`node_modules/` inside)
//   CHROMIUM      the Chromium binary
//   BURROW_URL    `burrow serve`'s address, posthog-js's `api_host`
//   TOKEN         the project's public token
//   MODE          `answer` (show, answer, submit; reload: not shown again; the same person in a
//                 fresh browser: not shown either), `wait` (PERSON_ID is shown SURVEY in one
//                 browser and left; then the same person, in a browser of their own, and
//                 OTHER_PERSON, in another), `recurring` (SURVEY, weekly, answered in its first
//                 iteration; its launch then moved a week back through the API with KEY, so
//                 Burrow's schedule round moves it to its second iteration; the same browser
//                 reloads), `targeting`, `hosted` (Burrow's page of
//                 an `external_survey` at PAGE, answered with ANSWER's text), or `demo`
//                 (`cargo xtask dev`'s demo site at PAGE_URL: its survey's rating answered 9,
//                 its open question with ANSWER's text)
//   PAGE          `hosted` only: the page's path and query on BURROW_URL
//   PAGE_URL      `demo` only: the demo page's URL, as `cargo xtask dev` prints it
//   BUNDLE        `full` (the site serves posthog-js's dist/array.full.js) or `lazy` (PostHog's
//                 HTML snippet loads {BURROW_URL}/static/array.js, which loads surveys.js)
//   SURVEY        the survey to show (and answer, in `answer` mode)
//   HIDDEN        `targeting` only: the survey that must stay hidden
//   ANSWER        `answer` only: a rating (`rating:8`) or a text (`open:some words`)
//   PERSON        optional JSON object: the person properties the page sets for flags
//   OTHER_PERSON  `answer` (optional) and `wait`: a distinct id that opens the page last, in a
//                 browser of its own; `shownToAnotherPerson` says whether the survey showed to them
//                 (in `answer` mode, `textsShownToAnotherPerson` what it said)
//   LOCALE        optional: the browsers' language (Playwright's `locale`: `navigator.language`,
//                 by which posthog-js picks a survey's translation, and Accept-Language)
//   OTHER_LOCALE  `answer` only, optional: OTHER_PERSON's browser's language (else LOCALE)
//   PERSON_ID     `wait` only: the identified person's distinct id
//   KEY, PROJECT  `recurring` only: a personal API key and the survey's project id
//   SCREENSHOT    where to save a screenshot of the page with the survey shown
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import http from "node:http";
import zlib from "node:zlib";
import { onPath } from "./chromium.mjs";

const env = process.env;
const require = createRequire(`${env.BROWSER_DIR}/`);
const { chromium } = require("playwright-core");
const posthogDist = `${env.BROWSER_DIR}/node_modules/posthog-js/dist`;

const result = { console: [], requests: [], steps: [] };
const step = (what) => result.steps.push(`${new Date().toISOString()} ${what}`);

/** PostHog's HTML snippet (the one its docs give), loading `{api_host}/static/array.js`. */
const SNIPPET = `!function(t,e){var o,n,p,r;e.__SV||(window.posthog&&window.posthog.__loaded)||(window.posthog=e,e._i=[],e.init=function(i,s,a){function g(t,e){var o=e.split(".");2==o.length&&(t=t[o[0]],e=o[1]),t[e]=function(){t.push([e].concat(Array.prototype.slice.call(arguments,0)))}}(p=t.createElement("script")).type="text/javascript",p.crossOrigin="anonymous",p.async=!0,p.src=s.api_host.replace(".i.posthog.com","-assets.i.posthog.com")+"/static/array.js",(r=t.getElementsByTagName("script")[0]).parentNode.insertBefore(p,r);var u=e;for(void 0!==a?u=e[a]=[]:a="posthog",u.people=u.people||[],u.toString=function(t){var e="posthog";return"posthog"!==a&&(e+="."+a),t||(e+=" (stub)"),e},u.people.toString=function(){return u.toString(1)+".people (stub)"},o="init capture register register_once register_for_session unregister unregister_for_session getFeatureFlag getFeatureFlagPayload isFeatureEnabled reloadFeatureFlags updateEarlyAccessFeatureEnrollment getEarlyAccessFeatures on onFeatureFlags onSurveysLoaded onSessionId getSurveys getActiveMatchingSurveys renderSurvey canRenderSurvey canRenderSurveyAsync identify setPersonProperties group resetGroups setPersonPropertiesForFlags resetPersonPropertiesForFlags setGroupPropertiesForFlags resetGroupPropertiesForFlags reset get_distinct_id getGroups get_session_id get_session_replay_url alias set_config startSessionRecording stopSessionRecording sessionRecordingStarted captureException loadToolbar get_property getSessionProperty createPersonProfile opt_in_capturing opt_out_capturing has_opted_in_capturing has_opted_out_capturing clear_opt_in_out_capturing debug".split(" "),n=0;n<o.length;n++)g(u,o[n]);e._i.push([i,s,a])},e.__SV=1)}(document,window.posthog||[]);`;

/** The shop's page: posthog-js pointed at Burrow, setting the person's properties for flags. */
function page(bundle) {
  const person = env.PERSON ? JSON.parse(env.PERSON) : null;
  const options = { api_host: env.BURROW_URL, person_profiles: "always", debug: true };
  const loader = bundle === "full"
    ? `<script src="/array.full.js"></script>`
    : `<script>${SNIPPET}</script>`;
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title>${loader}
<script>
  const options = ${JSON.stringify(options)};
  const person = ${JSON.stringify(person)};
  if (person) options.loaded = (ph) => ph.setPersonPropertiesForFlags(person);
  // ?distinct_id= makes this browser the person who has that id (another device, say).
  const distinctId = new URLSearchParams(location.search).get("distinct_id");
  if (distinctId) options.bootstrap = { distinctID: distinctId, isIdentifiedID: true };
  posthog.init(${JSON.stringify(env.TOKEN)}, options);
</script></head>
<body style="min-height: 600px"><h1>Shop</h1><p>Another origin than Burrow's.</p></body></html>`;
}

/** The site: its page and, for the full bundle, posthog-js's array.full.js. */
function startSite() {
  const server = http.createServer((request, response) => {
    const path = new URL(request.url, "http://site").pathname;
    if (path === "/full.html" || path === "/lazy.html") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(page(path === "/full.html" ? "full" : "lazy"));
    } else if (path === "/array.full.js") {
      response.writeHead(200, { "content-type": "application/javascript" });
      response.end(readFileSync(`${posthogDist}/array.full.js`));
    } else if (path === "/favicon.ico") {
      response.writeHead(204);
      response.end();
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

/** A request body as the SDK sent it: gzip, base64 form or JSON, decoded. */
function decode(buffer) {
  if (!buffer || buffer.length === 0) return null;
  try {
    if (buffer[0] === 0x1f && buffer[1] === 0x8b) return JSON.parse(zlib.gunzipSync(buffer));
    const text = buffer.toString("utf8");
    if (text.startsWith("data=")) {
      return JSON.parse(Buffer.from(decodeURIComponent(text.slice(5)), "base64").toString("utf8"));
    }
    return JSON.parse(text);
  } catch {
    return buffer.toString("utf8").slice(0, 500);
  }
}

/** The events of a capture body (a batch, or one event). */
function eventsOf(body) {
  if (!body || typeof body !== "object") return [];
  return Array.isArray(body) ? body : body.batch ?? [body];
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what, check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** Records every request to Burrow with its status, decoded body and (for /flags) answer. */
function watch(pageHandle) {
  pageHandle.on("console", (message) => {
    result.console.push(`[${message.type()}] ${message.text()}`.slice(0, 2000));
  });
  pageHandle.on("pageerror", (error) => result.console.push(`[pageerror] ${error.message}`));
  pageHandle.on("requestfailed", (request) => {
    result.requests.push({ method: request.method(), url: request.url(), failed: request.failure()?.errorText });
  });
  pageHandle.on("response", async (response) => {
    const request = response.request();
    if (!request.url().startsWith(env.BURROW_URL)) return;
    const entry = { method: request.method(), url: request.url(), status: response.status() };
    result.requests.push(entry);
    if (request.method() === "POST") {
      const body = decode(request.postDataBuffer());
      const path = new URL(request.url()).pathname;
      if (path.startsWith("/flags")) {
        entry.person_properties = body?.person_properties;
        entry.distinct_id = body?.distinct_id;
        try {
          entry.answer = await response.json();
        } catch {
          entry.answer = null;
        }
      } else {
        entry.events = eventsOf(body).map((event) => ({
          event: event.event,
          properties: Object.fromEntries(
            Object.entries(event.properties ?? {}).filter(([key]) => key.startsWith("$survey") || !key.startsWith("$")),
          ),
          $set: event.$set ?? event.properties?.$set,
        }));
      }
    } else if (new URL(request.url()).pathname.startsWith("/api/surveys")) {
      try {
        entry.answer = await response.json();
      } catch {
        entry.answer = null;
      }
    }
  });
}

/** Whether the survey's popover form is rendered (Playwright's CSS pierces open shadow roots). */
async function shown(pageHandle, surveyId) {
  return (await pageHandle.locator(`div.PostHogSurvey-${surveyId} .survey-form`).count()) > 0;
}

/** What the survey's popover says: its question and its submit button. */
async function shownTexts(pageHandle, surveyId) {
  const root = pageHandle.locator(`div.PostHogSurvey-${surveyId}`);
  const text = async (selector) => (await root.locator(selector).first().textContent())?.trim();
  return { question: await text(".survey-question"), button: await text("button.form-submit") };
}

/** Every event the page has sent to Burrow so far. */
const sentEvents = () => result.requests.flatMap((request) => request.events ?? []);

/** Waits until one more /flags answer than `before` arrived, then for several display rounds. */
async function settleAfterFlags(before) {
  const answered = () => result.requests.filter((request) => request.url.includes("/flags") && request.answer !== undefined).length;
  await waitFor("a /flags answer", () => answered() > before, 20_000).catch((error) => step(String(error)));
  // The display queue is re-checked every second; give it several rounds.
  await sleep(6_000);
}

const flagAnswers = () => result.requests.filter((request) => request.url.includes("/flags")).length;

async function answerMode(context, url, newContext) {
  const survey = env.SURVEY;
  const tab = await context.newPage();
  watch(tab);
  await tab.goto(url);
  step(`loaded ${url}`);
  result.webdriver = await tab.evaluate(() => navigator.webdriver);
  result.userAgent = await tab.evaluate(() => navigator.userAgent);
  await waitFor(`the popover of survey ${survey}`, () => shown(tab, survey), 30_000);
  result.shown = true;
  step("popover shown");
  await sleep(500); // the popover's entrance
  await tab.screenshot({ path: env.SCREENSHOT });
  result.texts = await shownTexts(tab, survey);

  const [kind, ...rest] = env.ANSWER.split(":");
  const answer = rest.join(":");
  const root = tab.locator(`div.PostHogSurvey-${survey}`);
  if (kind === "rating") {
    await root.locator(`button.ratings-number[aria-label="Rate ${answer}"]`).click();
  } else {
    await root.locator("textarea").fill(answer);
  }
  await root.locator("button.form-submit").click();
  step("submitted");
  await waitFor(
    "a `survey sent` event in a capture request",
    () => sentEvents().some((event) => event.event === "survey sent"),
    20_000,
  );
  step("survey sent captured");
  result.thankYou = (await root.locator(".thank-you-message").count()) > 0;

  // The same person comes back: the survey is not shown again.
  let before = flagAnswers();
  await tab.reload();
  step("reloaded");
  await settleAfterFlags(before);
  result.shownAfterReload = await shown(tab, survey);
  result.seenSurveyInLocalStorage = await tab.evaluate(
    (id) => Object.keys(localStorage).filter((key) => key.includes(id)),
    survey,
  );
  step(`after reload shown=${result.shownAfterReload}`);

  // The same person in a browser that never saw the survey (no localStorage): only Burrow,
  // which kept the person's `$survey_responded/<id>`, can keep it hidden.
  result.distinctId = await tab.evaluate(() => window.posthog.get_distinct_id());
  const fresh = await newContext();
  const elsewhere = await fresh.newPage();
  watch(elsewhere);
  before = flagAnswers();
  await elsewhere.goto(`${url}?distinct_id=${encodeURIComponent(result.distinctId)}`);
  step("same person, fresh browser");
  await settleAfterFlags(before);
  result.shownInFreshBrowser = await shown(elsewhere, survey);
  step(`fresh browser shown=${result.shownInFreshBrowser}`);

  // Another person, in a browser of their own: shown unless the survey stopped (its limit).
  if (env.OTHER_PERSON) {
    const other = await (await newContext(env.OTHER_LOCALE)).newPage();
    watch(other);
    before = flagAnswers();
    await other.goto(`${url}?distinct_id=${encodeURIComponent(env.OTHER_PERSON)}`);
    step("another person");
    await settleAfterFlags(before);
    result.shownToAnotherPerson = await waitFor("the popover", () => shown(other, survey), 8_000)
      .then(() => true)
      .catch(() => false);
    step(`another person shown=${result.shownToAnotherPerson}`);
    if (result.shownToAnotherPerson) result.textsShownToAnotherPerson = await shownTexts(other, survey);
  }
}

/** Whether SURVEY shows, within a few display rounds after the page's flags arrive, to the
 * person `distinctId` opening the page in a browser of their own (no localStorage). */
async function shownInOwnBrowser(newContext, url, distinctId, what) {
  const tab = await (await newContext()).newPage();
  watch(tab);
  const before = flagAnswers();
  await tab.goto(`${url}?distinct_id=${encodeURIComponent(distinctId)}`);
  step(what);
  await settleAfterFlags(before);
  const shownThere = await waitFor("the popover", () => shown(tab, env.SURVEY), 4_000)
    .then(() => true)
    .catch(() => false);
  step(`${what}: shown=${shownThere}`);
  return shownThere;
}

/** A survey with a wait period, shown to a person on one device and left there: the same
 * person on another device (a fresh browser, no localStorage: only the last-seen date Burrow
 * keeps on the person can hold it) is not shown it; another person is. */
async function waitMode(newContext, url) {
  const survey = env.SURVEY;
  const first = await (await newContext()).newPage();
  watch(first);
  await first.goto(`${url}?distinct_id=${encodeURIComponent(env.PERSON_ID)}`);
  step("first device loaded");
  result.webdriver = await first.evaluate(() => navigator.webdriver);
  await waitFor(`the popover of survey ${survey}`, () => shown(first, survey), 30_000);
  result.shown = true;
  step("popover shown on the first device");
  await sleep(500);
  await first.screenshot({ path: env.SCREENSHOT });
  await waitFor(
    "a `survey shown` event in a capture request",
    () => sentEvents().some((event) => event.event === "survey shown"),
    20_000,
  );
  step("survey shown captured");
  result.shownOnSecondDevice = await shownInOwnBrowser(newContext, url, env.PERSON_ID, "same person, second device");
  result.shownToAnotherPerson = await shownInOwnBrowser(newContext, url, env.OTHER_PERSON, "another person");
}

/** The feed's `current_iteration` of SURVEY. */
async function feedIteration() {
  const feed = await (await fetch(`${env.BURROW_URL}/api/surveys/?token=${encodeURIComponent(env.TOKEN)}`)).json();
  return feed.surveys.find((survey) => survey.id === env.SURVEY)?.current_iteration ?? null;
}

/** A recurring survey answered in its first iteration is not shown again in it; once its
 * second iteration begins (its launch moved a week back, Burrow's schedule round moves it on),
 * the same browser (localStorage and all) is shown it again. */
async function recurringMode(context, url) {
  const survey = env.SURVEY;
  const tab = await context.newPage();
  watch(tab);
  await tab.goto(url);
  step(`loaded ${url}`);
  result.webdriver = await tab.evaluate(() => navigator.webdriver);
  await waitFor(`the popover of survey ${survey}`, () => shown(tab, survey), 30_000);
  result.shown = true;
  const root = tab.locator(`div.PostHogSurvey-${survey}`);
  await root.locator("textarea").fill(env.ANSWER);
  await root.locator("button.form-submit").click();
  await waitFor(
    "a `survey sent` event in a capture request",
    () => sentEvents().some((event) => event.event === "survey sent"),
    20_000,
  );
  result.answeredIteration = sentEvents().find((event) => event.event === "survey sent").properties.$survey_iteration ?? null;
  step(`answered iteration ${result.answeredIteration}`);
  let before = flagAnswers();
  await tab.reload();
  await settleAfterFlags(before);
  result.shownAgainInSameIteration = await shown(tab, survey);
  step(`same iteration: shown=${result.shownAgainInSameIteration}`);

  const launched = new Date(Date.now() - (7 * 24 * 60 + 1) * 60 * 1000).toISOString();
  const moved = await fetch(`${env.BURROW_URL}/api/projects/${env.PROJECT}/surveys/${survey}/`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${env.KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ start_date: launched }),
  });
  result.launchMoved = moved.status;
  await waitFor("the second iteration in the feed", async () => (await feedIteration()) === 2, 30_000);
  step("second iteration in the feed");
  before = flagAnswers();
  await tab.reload();
  await settleAfterFlags(before);
  result.shownInNextIteration = await waitFor("the popover", () => shown(tab, survey), 15_000)
    .then(() => true)
    .catch(() => false);
  step(`next iteration: shown=${result.shownInNextIteration}`);
  if (result.shownInNextIteration) await tab.screenshot({ path: env.SCREENSHOT });
}

/** A hosted survey's page on Burrow itself: rendered full page, answered, submitted. */
async function hostedMode(context) {
  const tab = await context.newPage();
  watch(tab);
  const url = `${env.BURROW_URL}${env.PAGE}`;
  await tab.goto(url);
  step(`loaded ${url}`);
  result.webdriver = await tab.evaluate(() => navigator.webdriver);
  const form = tab.locator("#posthog-survey-container textarea");
  await waitFor("the hosted survey's form", async () => (await form.count()) > 0, 30_000);
  result.shown = true;
  step("hosted survey shown");
  await form.first().fill(env.ANSWER);
  await tab.screenshot({ path: env.SCREENSHOT, fullPage: true });
  await tab.locator("#posthog-survey-container button.form-submit").first().click();
  step("submitted");
  await waitFor(
    "a `survey sent` event in a capture request",
    () => sentEvents().some((event) => event.event === "survey sent"),
    20_000,
  );
  step("survey sent captured");
  result.cspViolations = result.console.filter((line) => line.includes("Content Security Policy"));
}

/** `cargo xtask dev`'s demo page on its own origin: the demo survey's two questions answered. */
async function demoMode(context) {
  const tab = await context.newPage();
  watch(tab);
  await tab.goto(env.PAGE_URL);
  step(`loaded ${env.PAGE_URL}`);
  await waitFor(`the popover of survey ${env.SURVEY}`, () => shown(tab, env.SURVEY), 30_000);
  result.shown = true;
  step("popover shown");
  await sleep(500); // the popover's entrance
  await tab.screenshot({ path: env.SCREENSHOT });
  const root = tab.locator(`div.PostHogSurvey-${env.SURVEY}`);
  await root.locator(`button.ratings-number[aria-label="Rate 9"]`).click();
  await root.locator("button.form-submit").click();
  step("rated");
  await root.locator("textarea").fill(env.ANSWER);
  await root.locator("button.form-submit").click();
  step("submitted");
  await waitFor(
    "a `survey sent` event in a capture request",
    () => sentEvents().some((event) => event.event === "survey sent"),
    20_000,
  );
  step("survey sent captured");
}

async function targetingMode(context, url) {
  const tab = await context.newPage();
  watch(tab);
  await tab.goto(url);
  step(`loaded ${url}`);
  result.webdriver = await tab.evaluate(() => navigator.webdriver);
  await waitFor(`the popover of survey ${env.SURVEY}`, () => shown(tab, env.SURVEY), 30_000);
  result.shown = true;
  step("included survey shown");
  await sleep(500);
  await tab.screenshot({ path: env.SCREENSHOT });
  const lists = () =>
    tab.evaluate(
      () =>
        new Promise((resolve) => {
          window.posthog.getSurveys((all) => {
            window.posthog.getActiveMatchingSurveys((matching) => {
              resolve({ all: all.map((s) => s.id), matching: matching.map((s) => s.id) });
            });
          });
        }),
    );
  result.surveys = await lists();
  // Close the shown one: the other would take the focus next if its targeting let it.
  await tab.locator(`div.PostHogSurvey-${env.SURVEY} button.form-cancel`).first().click().catch((error) => step(`no close button: ${error.message}`));
  await sleep(6_000);
  result.hiddenShown = await shown(tab, env.HIDDEN);
  result.surveysAfterClose = await lists();
  step(`hidden survey shown=${result.hiddenShown}`);
}

const site = await startSite();
const siteUrl = `http://127.0.0.1:${site.address().port}`;
result.site = siteUrl;
let browser;
let failed = false;
try {
  browser = await chromium.launch({
    executablePath: onPath(env.CHROMIUM),
    headless: true,
    // posthog-js drops every event when navigator.webdriver is true.
    args: ["--disable-blink-features=AutomationControlled", "--no-sandbox", "--disable-dev-shm-usage"],
    timeout: 60_000,
  });
  const major = browser.version().split(".")[0];
  // A plain Chrome user agent: posthog-js drops every event from `HeadlessChrome`.
  const userAgent = `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;
  const newContext = (locale = env.LOCALE) =>
    browser.newContext({ userAgent, locale, viewport: { width: 1000, height: 700 } });
  const url = `${siteUrl}/${env.BUNDLE}.html`;
  if (env.MODE === "targeting") await targetingMode(await newContext(), url);
  else if (env.MODE === "hosted") await hostedMode(await newContext());
  else if (env.MODE === "demo") await demoMode(await newContext());
  else if (env.MODE === "wait") await waitMode(newContext, url);
  else if (env.MODE === "recurring") await recurringMode(await newContext(), url);
  else await answerMode(await newContext(), url, newContext);
} catch (error) {
  failed = true;
  result.error = String(error?.stack ?? error);
} finally {
  await browser?.close().catch(() => {});
  site.close();
}
process.stdout.write(JSON.stringify(result));
process.exit(failed ? 1 : 0);
