// The surveys of a project: name, type, status, dates and responses, with a search and the
// archived tab as PostHog's list has them; a page of 50 at a time.

import { get } from "./api.js";
import { allows, count, fill, h, lacking, problem, when } from "./dom.js";

const PAGE = 50;

/** draft / running / stopped / archived, as PostHog names a survey's state. */
export function status(survey) {
  if (survey.archived) return "archived";
  if (!survey.start_date) return "draft";
  if (survey.end_date) return "stopped";
  return "running";
}

export async function renderSurveys({ project, scopes, params, main }) {
  const base = `/api/projects/${encodeURIComponent(project.id)}/surveys`;
  const archived = params.get("archived") === "true";
  const search = params.get("search") || "";
  const offset = Math.max(0, Number(params.get("offset")) || 0);
  const here = (changes) => {
    const next = new URLSearchParams({ archived, search, offset, ...changes });
    if (next.get("archived") === "false") next.delete("archived");
    if (!next.get("search")) next.delete("search");
    if (next.get("offset") === "0") next.delete("offset");
    const text = next.toString();
    return `#/projects/${encodeURIComponent(project.id)}/surveys${text ? `?${text}` : ""}`;
  };

  const input = h("input", {
    id: "survey-search", type: "search", value: search, "data-testid": "survey-search",
  });
  const body = h("div", { "aria-live": "polite" }, h("p", { class: "help" }, "Loading…"));
  fill(main,
    h("h1", {}, "Surveys"),
    h("div", { class: "tabs", role: "group", "aria-label": "Which surveys" },
      h("a", { href: here({ archived: false, offset: 0 }), "aria-current": archived ? null : "page" }, "Active"),
      h("a", { href: here({ archived: true, offset: 0 }), "aria-current": archived ? "page" : null,
        "data-testid": "archived-tab" }, "Archived")),
    h("form", {
      class: "toolbar", role: "search", onsubmit: (event) => {
        event.preventDefault();
        location.hash = here({ search: input.value, offset: 0 });
      },
    }, h("label", { for: "survey-search" }, "Search surveys"), input,
    h("button", { type: "submit" }, "Search")),
    body);
  if (!allows(scopes, "survey:read")) return fill(body, lacking("survey:read"));

  let page;
  let counts;
  try {
    [page, counts] = await Promise.all([
      get(`${base}/`, { archived, search, limit: PAGE, offset }),
      get(`${base}/responses_count/`),
    ]);
  } catch (error) {
    return fill(body, problem(error));
  }
  if (!page.results.length) {
    return fill(body, h("p", { class: "help", "data-testid": "no-surveys" },
      search ? "No survey matches this search." : archived ? "No archived survey." : "No survey yet."));
  }
  const rows = page.results.map((survey) => h("tr", { "data-testid": "survey-row", "data-survey-id": survey.id },
    h("th", { scope: "row" },
      h("a", { href: `#/projects/${encodeURIComponent(project.id)}/surveys/${survey.id}` }, survey.name)),
    h("td", {}, survey.type),
    h("td", {}, h("span", { class: `status ${status(survey)}`, "data-testid": "survey-status" }, status(survey))),
    h("td", {}, when(survey.created_at)),
    h("td", {}, when(survey.start_date)),
    h("td", {}, when(survey.end_date)),
    h("td", { class: "number", "data-testid": "survey-responses" }, count(counts[survey.id] || 0))));
  fill(body,
    h("div", { class: "scroll" },
      h("table", { "data-testid": "surveys" },
        h("caption", {}, `${count(page.count)} ${archived ? "archived " : ""}survey${page.count === 1 ? "" : "s"}`),
        h("thead", {}, h("tr", {},
          ["Name", "Type", "Status", "Created", "Started", "Ended", "Responses"].map((label) =>
            h("th", { scope: "col", class: label === "Responses" ? "number" : null }, label)))),
        h("tbody", {}, rows))),
    h("nav", { class: "pager", "aria-label": "Pages of surveys" },
      offset > 0 ? h("a", { href: here({ offset: Math.max(0, offset - PAGE) }) }, "Previous") : null,
      offset + PAGE < page.count ? h("a", { href: here({ offset: offset + PAGE }) }, "Next") : null));
}
