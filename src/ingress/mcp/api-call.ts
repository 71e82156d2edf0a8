/**
 * How the MCP tools reach the API: one request, answered with its status and JSON body. On the
 * daemon the request goes to the API's own app in the process, with the caller's credential, so
 * that every tool is the API's route itself: its validation, tenant scoping, fleet reach and audit.
 * `mailproxy mcp` (stdio) sends the same requests to a daemon over HTTP, as the CLI does.
 */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path, its parameters filled in. */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

export interface ApiAnswer {
  status: number;
  body: unknown;
}

export type CallApi = (request: ApiRequest) => Promise<ApiAnswer>;

/** A fetch-like handler: the API app's `fetch`, or global fetch against a daemon's URL. */
export type FetchLike = (request: Request) => Response | Promise<Response>;

/** Requests to `base` through `fetch`, with `authorization` (the caller's `Bearer …`). */
export function apiOver(fetch: FetchLike, base: string, authorization: string): CallApi {
  return async ({ method, path, query, body }) => {
    const url = new URL(path, base);
    for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, value);
    const headers: Record<string, string> = { authorization, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(
      new Request(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }),
    );
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      // Not JSON (an HTML page, a proxy's error): handed on as text.
    }
    return { status: response.status, body: parsed };
  };
}
