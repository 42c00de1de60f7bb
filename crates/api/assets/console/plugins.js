// The organization's installed plugins, read-only: name, type, installed version (`tag`), and
// whether a newer one is known (`latest_tag`, as the last `check_for_updates` stored it).

import { get } from "./api.js";
import { allows, count, fill, h, lacking, problem } from "./dom.js";

/** Whether the plugin's last update check found a version other than the installed one. */
export function updateAvailable(plugin) {
  return Boolean(plugin.latest_tag) && plugin.latest_tag !== plugin.tag;
}

export async function renderPlugins({ project, scopes, main }) {
  const body = h("div", { "aria-live": "polite" }, h("p", { class: "help" }, "Loading…"));
  fill(main, h("h1", {}, "Plugins"), body);
  if (!allows(scopes, "plugin:read")) return fill(body, lacking("plugin:read"));
  const organization = project.organization || "@current";
  let page;
  try {
    page = await get(`/api/organizations/${encodeURIComponent(organization)}/plugins/`, { limit: 1000 });
  } catch (error) {
    return fill(body, problem(error));
  }
  if (!page.results.length) {
    return fill(body, h("p", { class: "help" }, "The organization has no plugin installed."));
  }
  const rows = page.results.map((plugin) => h("tr", { "data-testid": "plugin-row" },
    h("th", { scope: "row" }, plugin.name || `Plugin ${plugin.id}`),
    h("td", {}, plugin.plugin_type),
    h("td", {}, h("code", {}, plugin.tag || "—")),
    h("td", {}, h("code", {}, plugin.latest_tag || "—")),
    h("td", { "data-testid": "plugin-update" }, updateAvailable(plugin)
      ? h("span", { class: "status running" }, "Update available")
      : "Up to date")));
  fill(body,
    h("div", { class: "scroll" },
      h("table", { "data-testid": "plugins" },
        h("caption", {}, `${count(page.count)} plugin${page.count === 1 ? "" : "s"} installed`),
        h("thead", {}, h("tr", {},
          ["Name", "Type", "Installed version", "Newest known version", "Update"].map((label) =>
            h("th", { scope: "col" }, label)))),
        h("tbody", {}, rows))),
    h("p", { class: "help" },
      "The newest version is the one the last update check found (",
      h("code", {}, "GET …/plugins/{id}/check_for_updates/"), ")."));
}
