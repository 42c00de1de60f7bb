// Small helpers every view uses: elements built from data (text is always set as text, never
// parsed as HTML), the messages shown for refused requests, and number formatting.

/** An element: `h("a", {href: "#/"}, "Home")`. Attributes starting with `on` are listeners;
 * `null`/`false` attributes are left out; children may be strings, nodes or arrays of them. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces what `element` holds. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** Whether granted scopes (`*`, `survey:read`, `survey:write`, …) allow `scope`. */
export function allows(scopes, scope) {
  const [object, action] = scope.split(":");
  return scopes.includes("*") || scopes.includes(scope) ||
    (action === "read" && scopes.includes(`${object}:write`));
}

/** The message shown when a key lacks `scope` for a section. */
export function lacking(scope) {
  return h("p", { class: "notice", role: "status", "data-testid": "missing-scope" },
    `This key lacks the ${scope} scope, so this section cannot be shown. `,
    "Sign in with a key that has it to see it.");
}

/** What to show for a failed request: a clear sentence, never a broken page. */
export function problem(error) {
  const scope = error.missingScope ? error.missingScope() : null;
  if (scope) return lacking(scope);
  return h("p", { class: "notice error", role: "alert", "data-testid": "error" }, error.message);
}

/** A whole number with separators. */
export function count(n) {
  return Number(n).toLocaleString("en");
}

/** `part` of `whole` as a percentage with one decimal, "0%" of nothing. */
export function percent(part, whole) {
  return whole ? `${Math.round((part / whole) * 1000) / 10}%` : "0%";
}

/** An ISO timestamp as a short local date and time, "—" when absent. */
export function when(iso) {
  return iso ? new Date(iso).toLocaleString("en", { dateStyle: "medium", timeStyle: "short" }) : "—";
}
