// The console's only way to the service: the public REST API (/api/v1), like any other client.
// The session token lives in memory and in sessionStorage (gone when the tab closes).

const BASE = '/api/v1';
const TOKEN_KEY = 'callplane.token';

let token: string | null = sessionStorage.getItem(TOKEN_KEY);
const listeners = new Set<() => void>();

export const session = {
  get token() {
    return token;
  },
  set(value: string | null) {
    token = value;
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
    listeners.forEach((l) => l());
  },
  subscribe(l: () => void) {
    listeners.add(l);
    return () => listeners.delete(l);
  },
};

export interface FieldIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** An answer other than 200: its status, `code` and a readable message; `issues` for 422 validation errors. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: FieldIssue[] = [],
  ) {
    super(message);
  }
}

async function toError(res: Response): Promise<ApiError> {
  let body: any = null;
  try {
    body = await res.json();
  } catch {
    /* not JSON */
  }
  if (res.status === 401 && token) session.set(null);
  if (Array.isArray(body?.detail)) {
    const issues = body.detail as FieldIssue[];
    return new ApiError(res.status, 'validation_error', issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '), issues);
  }
  const code = typeof body?.code === 'string' ? body.code : `http_${res.status}`;
  const detail = typeof body?.detail === 'string' ? body.detail : res.statusText || `HTTP ${res.status}`;
  return new ApiError(res.status, code, detail);
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json', ...extra };
  if (token) h.authorization = `Bearer ${token}`;
  return h;
}

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(BASE + path, {
    method,
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw await toError(res);
  return (await res.json()) as T;
}

export const get = <T = any>(path: string) => api<T>('GET', path);
export const post = <T = any>(path: string, body: unknown = {}) => api<T>('POST', path, body);
export const put = <T = any>(path: string, body: unknown) => api<T>('PUT', path, body);
export const patch = <T = any>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const del = <T = any>(path: string) => api<T>('DELETE', path);

/** A query string from the defined values of `params` (objects JSON-encoded). */
export function qs(params: Record<string, unknown>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'object' ? JSON.stringify(v) : String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

/** Downloads a CSV (or any) answer that needs the session's credentials, as a file the browser saves. */
export async function download(path: string, fileName: string): Promise<void> {
  const res = await fetch(BASE + path, { headers: headers({ accept: 'text/csv' }) });
  if (!res.ok) throw await toError(res);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** PUTs a file to a presigned URL with progress (fetch has no upload progress; XMLHttpRequest does). */
export function upload(url: string, file: Blob, onProgress: (fraction: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.setRequestHeader('content-type', file.type || 'text/csv');
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve();
        return;
      }
      let detail = `upload failed (HTTP ${xhr.status})`;
      try {
        detail = JSON.parse(xhr.responseText).detail ?? detail;
      } catch {
        /* not JSON (an S3 store answers XML) */
      }
      reject(new ApiError(xhr.status, 'upload_failed', detail));
    };
    xhr.onerror = () => reject(new ApiError(0, 'network_error', 'The upload could not reach the server'));
    xhr.send(file);
  });
}

export interface SseEvent {
  event: string;
  data: any;
}

/**
 * POSTs JSON asking for server-sent events and calls `onEvent` for each one as it arrives. Resolves when the
 * stream ends. A non-SSE answer (an error before streaming began) throws its ApiError.
 */
export async function postStream(path: string, body: unknown, onEvent: (e: SseEvent) => void): Promise<void> {
  const res = await fetch(BASE + path, {
    method: 'POST',
    headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
    body: JSON.stringify(body),
  });
  if (!res.ok) throw await toError(res);
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    onEvent({ event: 'chat', data: await res.json() });
    return;
  }
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length === 0) continue;
      let parsed: unknown = data.join('\n');
      try {
        parsed = JSON.parse(parsed as string);
      } catch {
        /* plain text data */
      }
      onEvent({ event, data: parsed });
    }
  }
}

/** Whether an error means "this build has no such endpoint" (a feature not available on this server). */
export const isMissingEndpoint = (e: unknown) => e instanceof ApiError && e.status === 404 && e.code === 'not_found';

/**
 * A signed URL of this service's own (an upload URL of the embedded store, a recording or transcript link) made
 * relative to the page's origin: the server builds them from CALLPLANE_PUBLIC_URL, which may name another host
 * or port than the one the browser reached (a proxy, localhost vs 127.0.0.1). The signature covers the path and
 * query, not the host. URLs elsewhere (an S3 store) are left as they are.
 */
export function ownUrl(url: string): string {
  try {
    const u = new URL(url, location.href);
    if (u.pathname.startsWith(`${BASE}/uploads/`) || u.pathname.startsWith(`${BASE}/files/`)) return u.pathname + u.search;
  } catch {
    /* not a URL: leave it */
  }
  return url;
}
