// The console's shell: signing in with a personal key, the project picker and navigation, and
// the routes (the URL's fragment: `#/projects/1/surveys/<uuid>`) that pick a view.

import { ApiError, forgetKey, get, keepKey, storedKey } from "./api.js";
import { allows, fill, h, lacking, problem } from "./dom.js";
import { renderPlugins } from "./plugins.js";
import { renderResults } from "./results.js";
import { renderSurveys } from "./surveys.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");
const signOutButton = document.getElementById("sign-out");

/** What the signed-in key is: its scopes and the projects it reaches. `null` signed out. */
let session = null;

signOutButton.addEventListener("click", () => {
  forgetKey();
  session = null;
  location.hash = "#/";
  showSignIn();
});

window.addEventListener("hashchange", route);
start();

async function start() {
  if (!storedKey()) return showSignIn();
  try {
    session = await loadSession();
  } catch (error) {
    forgetKey();
    return showSignIn(error);
  }
  route();
}

/** The key's scopes (a key may always read itself) and the projects it reaches: the project
 * list with `project:read`, else the key's current project. */
async function loadSession() {
  const key = await get("/api/personal_api_keys/@current/");
  const scopes = key.scopes || [];
  let projects = [{ id: "@current", name: "Current project" }];
  if (allows(scopes, "project:read")) {
    const page = await get("/api/projects/", { limit: 1000 });
    if (page.results.length) projects = page.results;
  }
  return { label: key.label, mask: key.mask_value, scopes, projects };
}

function showSignIn(error) {
  nav.replaceChildren();
  who.textContent = "";
  signOutButton.hidden = true;
  const input = h("input", {
    id: "key", name: "key", type: "password", autocomplete: "off", spellcheck: "false",
    required: true, "aria-describedby": "key-help", "data-testid": "key-input",
  });
  const status = h("div", { "aria-live": "polite" },
    error ? h("p", { class: "notice error", role: "alert", "data-testid": "sign-in-error" },
      error instanceof ApiError && error.status === 401
        ? "This key was refused: it is unknown, expired or of an inactive user."
        : error.message) : null);
  const form = h("form", { class: "card sign-in", "data-testid": "sign-in", onsubmit: signIn },
    h("h1", {}, "Sign in"),
    h("label", { for: "key" }, "Personal API key"),
    input,
    h("p", { id: "key-help", class: "help" },
      "Kept in this tab only (sessionStorage) until you sign out or close it. ",
      "Make one with ", h("code", {}, "burrow admin create-key"), "."),
    h("button", { type: "submit" }, "Sign in"),
    status);
  fill(main, form);
  input.focus();

  async function signIn(event) {
    event.preventDefault();
    keepKey(input.value.trim());
    try {
      session = await loadSession();
    } catch (failure) {
      forgetKey();
      return showSignIn(failure);
    }
    route();
  }
}

/** Renders the view the fragment names. */
function route() {
  if (!session) return showSignIn();
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  signOutButton.hidden = false;
  who.textContent = session.label ? `Key: ${session.label} (${session.mask})` : "";
  if (parts[0] !== "projects" || parts.length < 3) return showProjects();
  const project = session.projects.find((p) => String(p.id) === parts[1]) ||
    { id: parts[1], name: `Project ${parts[1]}` };
  showNav(project, parts[2]);
  const context = { project, scopes: session.scopes, params, main };
  main.replaceChildren();
  const view = parts[2] === "surveys" && parts[3] ? renderResults(context, parts[3])
    : parts[2] === "surveys" ? renderSurveys(context)
    : parts[2] === "plugins" ? renderPlugins(context)
    : showProjects();
  Promise.resolve(view).catch((error) => fill(main, problem(error)));
}

function showProjects() {
  const projects = session.projects;
  if (projects.length === 1) {
    location.replace(`#/projects/${encodeURIComponent(projects[0].id)}/surveys`);
    return;
  }
  nav.replaceChildren();
  fill(main,
    h("h1", {}, "Projects"),
    allows(session.scopes, "project:read") ? null : lacking("project:read"),
    h("ul", { class: "projects", "data-testid": "projects" },
      projects.map((p) => h("li", {},
        h("a", { href: `#/projects/${encodeURIComponent(p.id)}/surveys` }, p.name)))));
}

function showNav(project, section) {
  const link = (name, label) => h("a", {
    href: `#/projects/${encodeURIComponent(project.id)}/${name}`,
    "aria-current": section === name ? "page" : null,
  }, label);
  let picker = null;
  if (session.projects.length > 1) {
    const select = h("select", {
      id: "project", onchange: (event) => {
        location.hash = `#/projects/${encodeURIComponent(event.target.value)}/surveys`;
      },
    }, session.projects.map((p) => h("option", {
      value: p.id, selected: String(p.id) === String(project.id),
    }, p.name)));
    picker = [h("label", { for: "project", class: "inline" }, "Project"), select];
  } else {
    picker = h("span", { class: "project-name" }, project.name);
  }
  fill(nav, picker, link("surveys", "Surveys"), link("plugins", "Plugins"));
}
