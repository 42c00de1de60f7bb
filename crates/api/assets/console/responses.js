// A survey's responses as a table, newest first, a page at a time (the `browse` list, never
// every response at once): when each was given, by whom, in which language and whether it was
// completed.

import { get } from "./api.js";
import { count, fill, h, problem, when } from "./dom.js";

const RESPONSES_PAGE = 20;

/** The table over the window the results read (`read`), archived responses as `range` says. */
export function responsesTable({ base, range, window: read }) {
  const body = h("div", { "aria-live": "polite" });
  let offset = 0;
  const load = async () => {
    fill(body, h("p", { class: "help" }, "Loading…"));
    let page;
    try {
      page = await get(`${base}/responses/browse/`, {
        date_from: read.date_from,
        date_to: read.date_to,
        exclude_archived: range.exclude_archived,
        limit: RESPONSES_PAGE,
        offset,
      });
    } catch (error) {
      return fill(body, problem(error));
    }
    if (!page.count) return fill(body, h("p", { class: "help", "data-testid": "no-responses" }, "No response yet."));
    const completed = (response) => response.completed === null ? "—" : response.completed ? "Yes" : "No";
    fill(body,
      h("div", { class: "scroll" },
        h("table", { "data-testid": "responses" },
          h("caption", {}, `${count(page.count)} response${page.count === 1 ? "" : "s"}`,
            ` · ${offset + 1}–${offset + page.results.length}`),
          h("thead", {}, h("tr", {},
            ["Submitted", "Person", "Language", "Completed"].map((label) => h("th", { scope: "col" }, label)))),
          h("tbody", {}, page.results.map((response) =>
            h("tr", { "data-testid": "response-row", "data-response-id": response.uuid },
              h("td", {}, when(response.timestamp)),
              h("th", { scope: "row", "data-testid": "response-person" }, response.distinct_id),
              // The translation the person was shown ($survey_language); none: the base language.
              h("td", { "data-testid": "response-language" }, response.language || "—"),
              h("td", {}, completed(response))))))),
      h("p", { class: "pager" },
        h("button", {
          type: "button", class: "secondary", disabled: offset === 0,
          onclick: () => { offset = Math.max(0, offset - RESPONSES_PAGE); load(); },
        }, "Newer"),
        h("button", {
          type: "button", class: "secondary", disabled: offset + RESPONSES_PAGE >= page.count,
          "data-testid": "older-responses",
          onclick: () => { offset += RESPONSES_PAGE; load(); },
        }, "Older")));
  };
  load();
  return h("section", { class: "card", "aria-labelledby": "responses-heading", "data-testid": "responses-section" },
    h("h2", { id: "responses-heading" }, "Responses"), body);
}
