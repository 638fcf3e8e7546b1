// The portal's only way to the REST API: same-origin fetch with the key as
// a Bearer header, no cookies and no Referer, and API errors turned into
// ApiError with the message to show.

import { clearKey, storedKey } from "./session";

/** ApiError is a failed call: the HTTP status (0 when unreachable), the envelope's code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** fields (or details) of the error envelope, e.g. required_scope. */
    readonly fields: Record<string, unknown> = {},
    readonly requestId: string | null = null,
  ) {
    super(message);
    this.name = "ApiError";
  }

  /** requiredScope is the scope a 403 insufficient_scope names. */
  get requiredScope(): string | null {
    const s = this.fields["required_scope"];
    return typeof s === "string" ? s : null;
  }
}

/** unreachable is the message when no answer came back at all. */
export const unreachable = "The service could not be reached. Try again in a moment.";

type UnauthorizedListener = () => void;
let onUnauthorized: UnauthorizedListener = () => {};

/** whenUnauthorized registers what happens when the stored key stops being accepted. */
export function whenUnauthorized(listener: UnauthorizedListener): void {
  onUnauthorized = listener;
}

export interface CallOptions {
  body?: unknown;
  signal?: AbortSignal;
  /** key overrides the stored key (sign-in checks a key before storing it). */
  key?: string;
}

/**
 * call sends one request to the API and parses the JSON answer (undefined
 * for 204). A 401 for the stored key forgets it and tells the app, which
 * shows the sign-in form; the caller still gets the ApiError.
 */
export async function call<T>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
  // The key must never reach another origin: only relative API paths.
  if (!path.startsWith("/v1/")) throw new Error("api: refusing to send the key to " + path);
  const key = opts.key ?? storedKey();
  const headers: Record<string, string> = { Accept: "application/json" };
  if (key) headers["Authorization"] = "Bearer " + key;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      credentials: "omit",
      referrerPolicy: "no-referrer",
      cache: "no-store",
      redirect: "error",
      signal: opts.signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError(0, "unreachable", unreachable);
  }
  if (res.ok) {
    if (res.status === 204) return undefined as T;
    try {
      return (await res.json()) as T;
    } catch (err) {
      if (err instanceof DOMException && err.name === "AbortError") throw err;
      throw new ApiError(res.status, "bad_response", "The service sent an answer the portal could not read (HTTP " + res.status + ").");
    }
  }
  const error = await errorOf(res);
  if (res.status === 401 && opts.key === undefined && key !== null) {
    clearKey();
    onUnauthorized();
  }
  throw error;
}

/** errorOf reads the error envelope, the 422 detail list, or falls back to the status. */
async function errorOf(res: Response): Promise<ApiError> {
  const requestId = res.headers.get("X-Request-ID");
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    // Not JSON (a proxy's page, say): the status has to do.
  }
  if (isRecord(body) && isRecord(body["error"])) {
    const e = body["error"];
    const fields = isRecord(e["fields"]) ? e["fields"] : isRecord(e["details"]) ? e["details"] : {};
    const message = typeof e["message"] === "string" && e["message"] ? e["message"] : "HTTP " + res.status;
    return new ApiError(res.status, typeof e["code"] === "string" ? e["code"] : "error", message, fields, requestId);
  }
  if (isRecord(body) && Array.isArray(body["detail"])) {
    const parts = body["detail"].map(detailText).filter((s) => s !== "");
    return new ApiError(res.status, "validation_error", parts.length ? parts.join("; ") : "The request was refused as invalid.", {}, requestId);
  }
  const statusText = res.statusText ? " (" + res.statusText + ")" : "";
  return new ApiError(res.status, "http_" + res.status, "The service answered HTTP " + res.status + statusText + ".", {}, requestId);
}

/** detailText writes one pydantic-style detail as "name: Field required". */
function detailText(d: unknown): string {
  if (!isRecord(d)) return "";
  const msg = typeof d["msg"] === "string" ? d["msg"] : "";
  const loc = Array.isArray(d["loc"]) ? d["loc"].filter((p, i) => !(i === 0 && (p === "body" || p === "query" || p === "path"))) : [];
  return loc.length ? loc.join(".") + ": " + msg : msg;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** isAbort tells an aborted request (the page was left) from a failure. */
export function isAbort(err: unknown): boolean {
  return err instanceof DOMException && err.name === "AbortError";
}
