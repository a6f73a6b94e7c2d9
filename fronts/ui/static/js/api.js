// Every call of the dashboard goes to memwarden's own API, /warden/v1, with the key the person gave
// (Authorization: Bearer; kept in this tab's sessionStorage; never a cookie).

const KEY = "memwarden.key";

export class ApiError extends Error {
  constructor(status, detail, path) {
    super(describe(status, detail));
    this.status = status;
    this.detail = detail;
    this.path = path;
  }
}

function text(detail) {
  if (detail === undefined || detail === null) return "";
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) return detail.map((d) => (typeof d === "string" ? d : d.msg ? `${(d.loc || []).join(".")}: ${d.msg}` : JSON.stringify(d))).join("; ");
  return JSON.stringify(detail);
}

function describe(status, detail) {
  const said = text(detail);
  if (status === 0) return `memwarden is not answering (${said || "network error"}). Is it running?`;
  if (status === 401) return `A key is needed: ${said}`;
  if (status === 403) return `Not allowed: ${said}`;
  if (status >= 500) return `The server failed (${status}): ${said}`;
  return said || `HTTP ${status}`;
}

export const key = {
  get: () => sessionStorage.getItem(KEY) || "",
  set: (value) => (value ? sessionStorage.setItem(KEY, value) : sessionStorage.removeItem(KEY)),
};

export function headers(extra = {}) {
  const out = { Accept: "application/json", ...extra };
  const k = key.get();
  if (k) out.Authorization = `Bearer ${k}`;
  return out;
}

export function url(path, query = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, one);
  }
  const qs = params.toString();
  return `${path}${qs ? `?${qs}` : ""}`;
}

export const bankPath = (bank, rest = "") => `/warden/v1/banks/${encodeURIComponent(bank)}${rest}`;

const listeners = new Set();
export const onUnauthorized = (fn) => listeners.add(fn);

// Calls the API; resolves to the answer's JSON, throws ApiError (status 0: unreachable).
export async function api(path, { method = "GET", body, query, signal } = {}) {
  let sent;
  try {
    sent = new Headers(headers(body !== undefined ? { "Content-Type": "application/json" } : {}));
  } catch {  // the key holds a character no header can carry (a pasted "…", a non-Latin letter): not the network
    const error = new ApiError(401, "the key holds a character no API key has; give the key again", path);
    listeners.forEach((fn) => fn(error));
    throw error;
  }
  let response;
  try {
    response = await fetch(url(path, query), {
      method,
      headers: sent,
      body: body !== undefined ? JSON.stringify(body) : undefined,
      credentials: "omit",
      cache: "no-store",
      signal,
    });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ApiError(0, String(err.message || err), path);
  }
  let payload = null;
  const raw = await response.text();
  try { payload = raw ? JSON.parse(raw) : null; } catch { payload = { detail: raw.slice(0, 500) }; }
  if (!response.ok) {
    const error = new ApiError(response.status, payload && payload.detail !== undefined ? payload.detail : payload, path);
    error.body = payload;
    if (response.status === 401) listeners.forEach((fn) => fn(error));
    throw error;
  }
  return payload;
}
