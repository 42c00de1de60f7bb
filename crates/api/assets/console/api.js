// The API as the console calls it: the personal key kept in sessionStorage (never in a URL or a
// cookie), every request sent with it in the Authorization header, and error bodies
// ({"type","code","detail","attr"}) turned into ApiError values the views show.

const KEY = "burrow.personal_api_key";

export function storedKey() {
  return sessionStorage.getItem(KEY);
}

export function keepKey(key) {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY);
}

/** A refused request: its status and PostHog's error body. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body.detail || `The server answered ${status}.`);
    this.status = status;
    this.code = body.code || "error";
    this.attr = body.attr ?? null;
  }

  /** The scope a 403 names ("API key missing required scope 'survey:read'"), if any. */
  missingScope() {
    const match = /scope '([^']+)'/.exec(this.message);
    return this.status === 403 && match ? match[1] : null;
  }
}

function url(path, params = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") query.set(name, value);
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/** Sends a request (a GET unless `init` says otherwise) with the key; an answer that is not 2xx
 * becomes an ApiError. */
async function send(path, params, init = {}) {
  let response;
  try {
    response = await fetch(url(path, params), {
      ...init,
      headers: {
        Authorization: `Bearer ${storedKey()}`, Accept: "application/json", ...init.headers,
      },
      credentials: "omit",
      cache: "no-store",
    });
  } catch {
    throw new ApiError(0, { detail: "The server could not be reached." });
  }
  if (!response.ok) {
    let body = {};
    try {
      body = await response.json();
    } catch {
      // Not PostHog's error body (a proxy's page): the status says enough.
    }
    throw new ApiError(response.status, body);
  }
  return response;
}

/** GET `path` with `params` as its query, answered as JSON. */
export async function get(path, params) {
  return (await send(path, params)).json();
}

/** POST `body` as JSON to `path`, answered as JSON. */
export async function post(path, body = {}) {
  return (await send(path, {}, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  })).json();
}

/** GET a file and hand it to the browser as a download, through a blob: URL (the key stays in
 * the header, never in a link). */
export async function download(path, params, filename) {
  const blob = await (await send(path, params)).blob();
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}
