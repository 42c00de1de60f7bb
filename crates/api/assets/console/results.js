// One survey's results: its state with Launch / Stop (`lifecycle.js`), the shown → dismissed /
// sent funnel and rates (`stats`), then one chart per question from the `results` aggregate
// (ratings as a distribution with the NPS of 0–10 scales, choices as bars with counts and
// percentages) with the stats API's per-question counts beside it, open questions' answers a
// page at a time from the responses list with a text filter, and the responses as a table
// (`responses.js`) — never every response at once. Each chart has the same numbers beside it as
// a table, which is also what people using a screen reader, and the browser test, read.

import { download, get } from "./api.js";
import { allows, count, fill, h, lacking, percent, problem, when } from "./dom.js";
import { lifecycleControls } from "./lifecycle.js";
import { responsesTable } from "./responses.js";
import { status } from "./surveys.js";

const ANSWERS_PAGE = 20;

/** Charts on the page, destroyed before the next render so none outlives its canvas. */
let charts = [];

/** The NPS of a 0–10 rating's counts: promoters 9–10, passives 7–8, detractors 0–6, and the
 * score, % promoters − % detractors, as text with one decimal as PostHog shows it ("20.0").
 * `null` with no 0–10 answer. */
export function nps(counts) {
  let promoters = 0;
  let passives = 0;
  let detractors = 0;
  for (const { value, count: n } of counts) {
    const score = Number(value);
    if (!/^\d+$/.test(value) || score > 10) continue;
    if (score >= 9) promoters += n;
    else if (score >= 7) passives += n;
    else detractors += n;
  }
  const total = promoters + passives + detractors;
  if (!total) return null;
  const score = (((promoters - detractors) / total) * 100).toFixed(1);
  return { promoters, passives, detractors, total, score };
}

/** `YYYY-MM-DD` (a date input's value) as the start or end of that day in UTC. */
function dayBound(day, end) {
  return day ? `${day}T${end ? "23:59:59" : "00:00:00"}Z` : null;
}

export async function renderResults({ project, scopes, params, main }, surveyId) {
  for (const chart of charts) chart.destroy();
  charts = [];
  const base = `/api/projects/${encodeURIComponent(project.id)}/surveys/${encodeURIComponent(surveyId)}`;
  const back = h("p", {}, h("a", { href: `#/projects/${encodeURIComponent(project.id)}/surveys` }, "← All surveys"));
  if (!allows(scopes, "survey:read")) return fill(main, back, lacking("survey:read"));

  const from = params.get("from") || "";
  const to = params.get("to") || "";
  const withArchived = params.get("archived") === "include";
  const range = {
    date_from: dayBound(from, false),
    date_to: dayBound(to, true),
    exclude_archived: withArchived ? null : "true",
  };
  let survey;
  let stats;
  let results;
  try {
    [survey, stats, results] = await Promise.all([
      get(`${base}/`),
      get(`${base}/stats/`, {
        date_from: range.date_from, date_to: range.date_to,
        exclude_archived: range.exclude_archived, include_per_question_stats: "true",
      }),
      get(`${base}/results/`, range),
    ]);
  } catch (error) {
    return fill(main, back, problem(error));
  }

  const fromInput = h("input", { id: "date-from", type: "date", value: from, "data-testid": "date-from" });
  const toInput = h("input", { id: "date-to", type: "date", value: to, "data-testid": "date-to" });
  const archivedInput = h("input", { id: "with-archived", type: "checkbox", checked: withArchived });
  const apply = (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    if (fromInput.value) next.set("from", fromInput.value);
    if (toInput.value) next.set("to", toInput.value);
    if (archivedInput.checked) next.set("archived", "include");
    const text = next.toString();
    location.hash = `#/projects/${encodeURIComponent(project.id)}/surveys/${surveyId}${text ? `?${text}` : ""}`;
  };
  const exportStatus = h("span", { class: "help", "aria-live": "polite" });
  const exportCsv = async () => {
    exportStatus.textContent = "Preparing the file…";
    try {
      await download(`${base}/responses/export/`, { ...range, format: "csv" },
        `survey-${surveyId}-responses.csv`);
      exportStatus.textContent = "";
    } catch (error) {
      fill(exportStatus, problem(error));
    }
  };

  // The survey's name, state and Launch / Stop, drawn again with the survey a launch or stop
  // answers; focus moves to what replaced the button, the outcome is announced.
  const header = h("div", {});
  const announcement = h("p", { class: "help", role: "status", "data-testid": "lifecycle-outcome" });
  const showSurvey = (current) => fill(header,
    h("h1", { "data-testid": "survey-name", tabindex: "-1" }, current.name),
    h("p", { class: "meta" },
      h("span", { class: `status ${status(current)}`, "data-testid": "survey-status" }, status(current)), " ",
      `${current.type} · started ${when(current.start_date)} · ended ${when(current.end_date)}`),
    lifecycleControls(current, {
      base, scopes, onChange: (changed, outcome) => {
        showSurvey(changed);
        announcement.textContent = outcome;
        (header.querySelector("button") || header.querySelector("h1")).focus();
      },
    }));
  showSurvey(survey);
  const perQuestion = new Map((stats.per_question_stats || []).map((entry) => [entry.question_id, entry]));

  fill(main,
    back,
    header,
    announcement,
    h("form", { class: "toolbar", onsubmit: apply, "aria-label": "Date range" },
      h("label", { for: "date-from" }, "From (UTC)"), fromInput,
      h("label", { for: "date-to" }, "To (UTC)"), toInput,
      h("span", { class: "check" }, archivedInput,
        h("label", { for: "with-archived" }, "Include archived responses")),
      h("button", { type: "submit", "data-testid": "apply-range" }, "Apply")),
    h("p", { class: "toolbar" },
      h("button", { type: "button", class: "secondary", onclick: exportCsv, "data-testid": "export-csv" },
        "Download responses (CSV)"), exportStatus),
    funnel(stats),
    h("h2", {}, "Questions"),
    h("p", { class: "help" },
      h("span", { "data-testid": "results-responses" }, count(results.responses)),
      ` response${results.responses === 1 ? "" : "s"} from `,
      `${when(results.date_from)} to ${when(results.date_to)}`,
      withArchived ? " (archived ones included)." : " (archived ones left out)."),
    results.questions.length ? null : h("p", { class: "help" }, "This survey has no questions."),
    results.questions.map((question, index) =>
      questionSection(question, index, perQuestion.get(question.id), { base, range, window: results })),
    responsesTable({ base, range, window: results }));
}

function funnel(stats) {
  const events = stats.stats || {};
  const row = (label, key) => {
    const event = events[key] || { total_count: 0, unique_persons: 0 };
    return h("tr", {},
      h("th", { scope: "row" }, label),
      h("td", { class: "number", "data-testid": `funnel-${key.split(" ")[1]}` }, count(event.total_count)),
      h("td", { class: "number", "data-testid": `unique-${key.split(" ")[1]}` }, count(event.unique_persons)));
  };
  const rates = stats.rates;
  return h("section", { class: "card", "aria-labelledby": "funnel-heading", "data-testid": "funnel" },
    h("h2", { id: "funnel-heading" }, "Shown, dismissed and sent"),
    h("div", { class: "split" },
      h("table", {},
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, "Event"),
          h("th", { scope: "col", class: "number" }, "Total"),
          h("th", { scope: "col", class: "number" }, "Persons"))),
        h("tbody", {},
          row("Shown", "survey shown"), row("Dismissed", "survey dismissed"), row("Sent", "survey sent"))),
      h("dl", { class: "rates" },
        h("dt", {}, "Response rate"),
        h("dd", { "data-testid": "rate-response" }, `${rates.response_rate}%`),
        h("dt", {}, "Dismissal rate"),
        h("dd", { "data-testid": "rate-dismissal" }, `${rates.dismissal_rate}%`),
        h("dt", {}, "Persons who responded"),
        h("dd", { "data-testid": "rate-unique-response" }, `${rates.unique_users_response_rate}%`))));
}

function questionSection(question, index, stats, context) {
  const headingId = `question-${index}`;
  const section = h("section", {
    class: "card question", "aria-labelledby": headingId, "data-testid": "question",
    "data-question-id": question.id, "data-question-type": question.type,
  },
  h("h3", { id: headingId }, `${index + 1}. ${question.question}`),
  h("p", { class: "help" }, h("span", { "data-testid": "answered" }, count(question.answered)),
    ` answered · ${question.type.replace("_", " ")}`),
  stats ? questionStats(stats, index) : null);
  if (question.type === "open" || question.type === "link") {
    section.append(openAnswers(question, index, context));
  } else {
    section.append(distribution(question, index));
  }
  return section;
}

/** The stats API's numbers for a question (PostHog's per-question stats): how many responses
 * answered it, a rating's average, and each answer's count, most given first. They count
 * archived responses and the range as sent, so they may differ from the results above. */
function questionStats(stats, index) {
  // Sorted here: JavaScript orders an object's integer-like keys ("0"–"10") numerically.
  const answers = Object.entries(stats.distribution).sort(([, a], [, b]) => b - a);
  const summary = [
    h("span", { "data-testid": "stats-responses" }, count(stats.response_count)),
    ` response${stats.response_count === 1 ? "" : "s"} in the stats API`,
    stats.average === null ? null
      : [" · average ", h("span", { "data-testid": "stats-average" }, stats.average.toFixed(2))],
    " (archived responses included)",
  ];
  if (!answers.length) return h("p", { class: "help", "data-testid": "question-stats" }, summary);
  return h("details", { class: "question-stats", "data-testid": "question-stats" },
    h("summary", {}, summary),
    h("table", { class: "counts" },
      h("caption", { class: "visually-hidden" }, `Answers to question ${index + 1} as the stats API counts them`),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Answer"),
        h("th", { scope: "col", class: "number" }, "Count"))),
      h("tbody", {}, answers.map(([answer, n]) => h("tr", { "data-testid": "stats-row", "data-value": answer },
        h("th", { scope: "row" }, answer === "<other>" ? "Other answers" : answer),
        h("td", { class: "number", "data-testid": "stats-count" }, count(n)))))));
}

/** A rating's or choice's counts: a bar chart and the same numbers as a table; for a 0–10
 * rating, the NPS. */
function distribution(question, index) {
  const total = question.answered;
  const labels = question.counts.map((c) => c.value);
  const values = question.counts.map((c) => c.count);
  const canvas = h("canvas", {
    role: "img",
    "aria-label": `Bar chart of the answers to “${question.question}”; the table beside it holds the same numbers.`,
  });
  const table = h("table", { class: "counts" },
    h("caption", { class: "visually-hidden" }, `Answers to question ${index + 1}`),
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, question.type === "rating" ? "Rating" : "Choice"),
      h("th", { scope: "col", class: "number" }, "Count"),
      h("th", { scope: "col", class: "number" }, "Share"))),
    h("tbody", {}, question.counts.map((c) => h("tr", { "data-testid": "value-row", "data-value": c.value },
      h("th", { scope: "row" }, c.value),
      h("td", { class: "number", "data-testid": "value-count" }, count(c.count)),
      h("td", { class: "number", "data-testid": "value-percent" }, percent(c.count, total))))),
    question.others
      ? h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, "Other answers"),
        h("td", { class: "number" }, count(question.others)), h("td", {})))
      : null);
  const score = question.type === "rating" && labels.length === 11 && labels[0] === "0"
    ? nps(question.counts) : null;
  const block = h("div", {},
    score ? h("dl", { class: "nps", "data-testid": "nps" },
      h("dt", {}, "NPS"), h("dd", { "data-testid": "nps-score" }, score.score),
      h("dt", {}, "Promoters (9–10)"), h("dd", { "data-testid": "nps-promoters" }, count(score.promoters)),
      h("dt", {}, "Passives (7–8)"), h("dd", { "data-testid": "nps-passives" }, count(score.passives)),
      h("dt", {}, "Detractors (0–6)"), h("dd", { "data-testid": "nps-detractors" }, count(score.detractors)))
      : null,
    h("div", { class: "split" }, h("div", { class: "chart" }, canvas), table));
  // Drawn once the canvas is in the page, so Chart.js can size it.
  queueMicrotask(() => draw(canvas, labels, values, question.type !== "rating"));
  return block;
}

function draw(canvas, labels, values, horizontal) {
  if (!window.Chart || !canvas.isConnected) return;
  charts.push(new window.Chart(canvas, {
    type: "bar",
    data: { labels, datasets: [{ label: "Answers", data: values, backgroundColor: "#2456c9" }] },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      indexAxis: horizontal ? "y" : "x",
      plugins: { legend: { display: false } },
      scales: {
        x: { ticks: { color: "#1f2937", precision: 0 }, beginAtZero: true },
        y: { ticks: { color: "#1f2937", precision: 0 }, beginAtZero: true },
      },
    },
  }));
}

/** An open question's answers, newest first, a page at a time, with a text filter: the
 * responses list narrowed to those that answered it, over the window the results read. */
function openAnswers(question, index, { base, range, window: read }) {
  const inputId = `search-${index}`;
  const input = h("input", { id: inputId, type: "search", "data-testid": "answer-search" });
  const list = h("div", { "aria-live": "polite" });
  let offset = 0;
  const load = async () => {
    fill(list, h("p", { class: "help" }, "Loading…"));
    let page;
    try {
      page = await get(`${base}/responses/browse/`, {
        question: question.id,
        search: input.value,
        date_from: read.date_from,
        date_to: read.date_to,
        exclude_archived: range.exclude_archived,
        limit: ANSWERS_PAGE,
        offset,
      });
    } catch (error) {
      return fill(list, problem(error));
    }
    const text = (answer) => Array.isArray(answer) ? answer.join(", ") : String(answer ?? "");
    fill(list,
      h("p", { class: "help" }, h("span", { "data-testid": "open-count" }, count(page.count)),
        ` answer${page.count === 1 ? "" : "s"}${input.value ? " matching" : ""}`,
        page.count ? ` · ${offset + 1}–${offset + page.results.length}` : ""),
      h("ol", { class: "answers", start: offset + 1 }, page.results.map((response) =>
        h("li", { "data-testid": "open-answer" },
          h("p", {}, text(response.answers[question.id])),
          h("p", { class: "help" }, `${response.distinct_id} · ${when(response.timestamp)}`)))),
      h("p", { class: "pager" },
        h("button", {
          type: "button", class: "secondary", disabled: offset === 0,
          onclick: () => { offset = Math.max(0, offset - ANSWERS_PAGE); load(); },
        }, "Newer"),
        h("button", {
          type: "button", class: "secondary", disabled: offset + ANSWERS_PAGE >= page.count,
          "data-testid": "older-answers",
          onclick: () => { offset += ANSWERS_PAGE; load(); },
        }, "Older")));
  };
  const form = h("form", {
    class: "toolbar", role: "search", onsubmit: (event) => {
      event.preventDefault();
      offset = 0;
      load();
    },
  }, h("label", { for: inputId }, "Filter answers"), input,
  h("button", { type: "submit", "data-testid": "answer-filter" }, "Filter"));
  load();
  return h("div", {}, form, list);
}
