// The REST API from the browser: session cookie plus the CSRF token, JSON in and out.

export class ApiError extends Error {
  constructor(status, data) {
    super(ApiError.summary(status, data));
    this.status = status;
    this.data = data;
  }

  static summary(status, data) {
    if (data && typeof data === "object" && typeof data.detail === "string") return data.detail;
    if (status === 403) return "Your role does not allow this.";
    return `Request failed (${status}).`;
  }
}

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

export async function api(method, url, body = undefined, { text = false } = {}) {
  const headers = { Accept: "application/json" };
  const init = { method, headers, credentials: "same-origin" };
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
  if (body !== undefined) {
    headers["Content-Type"] = text ? "text/plain" : "application/json";
    init.body = text ? body : JSON.stringify(body);
  }
  const response = await fetch(url, init);
  const type = response.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const get = (url) => api("GET", url);
export const post = (url, body) => api("POST", url, body === undefined ? {} : body);
