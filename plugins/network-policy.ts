/**
 * Outbound network policy (SSRF): the one check every URL the server itself connects to goes through
 * (ARI endpoints today; AI service `base_url`s and webhooks next). Exported from the provider SDK
 * (`plugins/sdk.ts`). Stable API:
 *
 * - `checkUrlShape(value, opts)` (sync, for validating configuration at save time): `[field, message][]`,
 *   empty when acceptable. Checks the URL as written: scheme (http/https by default; pass `protocols` for
 *   ws/wss), no credentials in the URL, and IP literals / well-known names against the rules below. It does not
 *   resolve names: a name is only proven safe by `assertConnectable` right before connecting.
 * - `assertConnectable(url, opts)` (async, right before connecting): the shape check, then the host is resolved
 *   (`dns.lookup`, all addresses; an answer is reused for `RESOLUTION_CACHE_MS`, see `cachingResolver`) and EVERY
 *   address must pass, on every call. Returns the checked addresses and a `lookup`
 *   function that answers only those addresses: give it to `http.request`/`https.request`/`new WebSocket(url,
 *   { lookup })` (ws passes it through to node's http) so the connection goes to the address that was checked
 *   (no DNS rebinding between check and connect). Throws `NetworkPolicyError`.
 * - `policyFetch(url, init, opts)`: `assertConnectable`, then one request over node's http(s) pinned to the
 *   checked address, returned as a WHATWG `Response` (streamed body). Redirects are never followed: any 3xx is
 *   a `NetworkPolicyError('redirect_refused')` ("<label> answered a redirect (302) to <location>; redirects are
 *   not followed"). Connection failures reject with the socket's error (e.g. ECONNREFUSED); `init.signal` aborts.
 *   Node 20's global `fetch` (undici) has no per-request `lookup`, so it is not used here.
 * - `classifyAddress(ip)`: 'metadata' | 'private' | 'public' for one resolved address.
 * - `PinnedPoster`: POSTs for many small requests to few receivers (webhooks): a check reused for at most 1 s
 *   per URL and only towards the addresses it checked, keep-alive pools per receiver and checked address set
 *   (undici clients, `PinnedConnections`), status only (the body drained), redirects refused, the whole exchange
 *   bounded by a timeout.
 *
 * Rules: cloud-metadata addresses and names (`METADATA_HOSTS`) are always refused, in every spelling: IPv4-mapped
 * or -compatible IPv6 (`::ffff:169.254.169.254`), NAT64 (`64:ff9b::a9fe:a9fe`), 6to4 (`2002:a9fe:a9fe::`), and the
 * decimal/octal/hex IPv4 forms (`2852039166`, `0251.0376.0251.0376`, `0xa9fea9fe`; the WHATWG URL parser already
 * rewrites them for http/https/ws/wss, and resolved addresses are parsed the same way). Loopback, private
 * (RFC 1918), link-local, CGNAT, ULA, multicast and other non-public ranges are refused unless
 * `allowPrivateNetwork` (the `CALLPLANE_ALLOW_PRIVATE_NETWORK` setting) is true.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIPv4, isIPv6, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { Client, type Dispatcher } from 'undici';

export const METADATA_HOSTS: readonly string[] = [
  '169.254.169.254', // AWS, GCP, Azure, DigitalOcean, OpenStack...
  '169.254.170.2', // AWS ECS task metadata
  '169.254.169.123', // AWS time sync
  'fd00:ec2::254', // AWS IMDS over IPv6
  '100.100.100.200', // Alibaba Cloud
  '192.0.0.192', // Oracle Cloud
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
];

export type AddressClass = 'metadata' | 'private' | 'public';

export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/** Resolves a host name to all its addresses (the default is `dns.lookup(host, { all: true })`). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface NetworkPolicyOptions {
  /** Loopback/private/link-local/CGNAT/ULA allowed (`CALLPLANE_ALLOW_PRIVATE_NETWORK`). Metadata never is. */
  allowPrivateNetwork: boolean;
  /** Configuration field the URL came from, used in `checkUrlShape` issues and messages. Default `url`. */
  field?: string;
  /** What the URL is, at the start of connect-time messages ("ARI endpoint"). Default: `field`. */
  label?: string;
  /** Accepted schemes with the colon. Default `['http:', 'https:']`. */
  protocols?: readonly string[];
  /** Name resolution (tests inject one). */
  resolve?: HostResolver;
}

export type NetworkPolicyErrorCode = 'invalid_url' | 'refused_address' | 'unresolvable' | 'redirect_refused';

/** A URL or address the policy refuses, or a redirect it will not follow. `message` is safe to show users. */
export class NetworkPolicyError extends Error {
  override readonly name = 'NetworkPolicyError';
  constructor(
    readonly code: NetworkPolicyErrorCode,
    message: string,
    readonly field: string,
    /** The redirect's status and Location, for `redirect_refused`. */
    readonly redirect?: { status: number; location: string },
  ) {
    super(message);
  }
}

export interface ConnectTarget {
  url: URL;
  /** Every address the host resolved to (all of them passed the policy); the literal for an IP host. */
  addresses: ResolvedAddress[];
  /** A `lookup` for node's net/http/tls/ws that answers only `addresses` (pins the connection). */
  lookup: LookupFunction;
}

// ---------------------------------------------------------------------------------------------------------
// Shape (sync)
// ---------------------------------------------------------------------------------------------------------

/** Issues as `[field, message]` (empty when the URL is acceptable as written). Never throws. */
export function checkUrlShape(value: unknown, opts: NetworkPolicyOptions): Array<[string, string]> {
  const field = opts.field ?? 'url';
  try {
    parseChecked(value, opts);
    return [];
  } catch (err) {
    if (err instanceof NetworkPolicyError) return [[field, err.message]];
    throw err;
  }
}

function parseChecked(value: unknown, opts: NetworkPolicyOptions): URL {
  const field = opts.field ?? 'url';
  const protocols = opts.protocols ?? ['http:', 'https:'];
  const schemes = protocols.map((p) => p.replace(/:$/, '')).join(' or ');
  const invalid = (message: string) => new NetworkPolicyError('invalid_url', message, field);
  if (value instanceof URL) value = value.href;
  if (typeof value !== 'string' || value.trim() === '') throw invalid(`${field} is required`);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw invalid(`${field} must be a valid ${schemes} URL`);
  }
  if (!protocols.includes(url.protocol)) throw invalid(`${field} must use ${schemes}`);
  if (url.username || url.password) throw invalid(`${field} must not carry credentials in the URL`);
  const host = bareHost(url.hostname);
  if (!host) throw invalid(`${field} has no host`);
  const refusal = refusalOf(host, hostClass(host), opts);
  if (refusal) throw refusal;
  return url;
}

function refusalOf(what: string, cls: AddressClass, opts: NetworkPolicyOptions, resolvedFrom?: string): NetworkPolicyError | undefined {
  const field = opts.field ?? 'url';
  const via = resolvedFrom ? ` (${resolvedFrom} resolves to ${what})` : '';
  if (cls === 'metadata') return new NetworkPolicyError('refused_address', `${field} must not point at a cloud metadata service${via}`, field);
  if (cls === 'private' && !opts.allowPrivateNetwork) {
    return new NetworkPolicyError(
      'refused_address',
      `${field} points at a private or loopback address${via}, which this server does not allow (CALLPLANE_ALLOW_PRIVATE_NETWORK)`,
      field,
    );
  }
  return undefined;
}

/** Class of a host as written: an IP literal in any form, a metadata name, a local-only name, or public. */
function hostClass(host: string): AddressClass {
  const h = bareHost(host);
  if (METADATA_HOSTS.includes(h)) return 'metadata';
  const ip = normalizeIp(h);
  if (ip) return classifyAddress(ip);
  if (h === 'localhost' || h.endsWith('.localhost') || h.endsWith('.local') || h.endsWith('.internal')) return 'private';
  return 'public';
}

/** True for a cloud-metadata host or address, in any spelling. */
export function isMetadataHost(host: string): boolean {
  return hostClass(host) === 'metadata';
}

/** True for a loopback/private/link-local/... host or address (metadata ones included), as written. */
export function isPrivateHost(host: string): boolean {
  return hostClass(host) !== 'public';
}

// ---------------------------------------------------------------------------------------------------------
// Addresses
// ---------------------------------------------------------------------------------------------------------

/**
 * 'metadata', 'private' (anything not publicly routable) or 'public' for one address. Accepts IPv4 in the
 * loose inet_aton forms and IPv6 with embedded IPv4; a string that is no address at all is 'private' (refused
 * unless private networks are allowed: never treat the unknown as public).
 */
export function classifyAddress(address: string): AddressClass {
  const ip = normalizeIp(bareHost(address));
  if (!ip) return 'private';
  if (isIPv4(ip)) return METADATA_HOSTS.includes(ip) ? 'metadata' : isPrivateIPv4(ip) ? 'private' : 'public';
  const full = expandIPv6(ip);
  if (METADATA_HOSTS.some((m) => isIPv6(m) && expandIPv6(m) === full)) return 'metadata';
  const v4 = embeddedIPv4(full);
  if (v4) {
    const inner = classifyAddress(v4);
    // An IPv6 spelling of a public IPv4 address (NAT64, 6to4, mapped) still goes through a translator: not public.
    return inner === 'metadata' ? 'metadata' : isIPv4MappedOrCompatible(full) ? inner : 'private';
  }
  return isPrivateIPv6(full) ? 'private' : 'public';
}

/** A canonical IPv4 (dotted decimal) or IPv6 text, or undefined when `h` is no IP address. */
function normalizeIp(h: string): string | undefined {
  if (isIPv4(h)) return h;
  if (isIPv6(h)) return h.toLowerCase();
  return looseIPv4(h);
}

/** inet_aton forms: 1 to 4 parts, each decimal, octal (leading 0) or hex (0x); the last part fills the rest. */
function looseIPv4(h: string): string | undefined {
  const parts = h.split('.');
  if (parts.length > 4 || parts.some((p) => p === '')) return undefined;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(p)) n = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) n = parseInt(p, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) n = Number(p);
    else return undefined;
    nums.push(n);
  }
  const last = nums.pop()!;
  if (nums.some((n) => n > 255) || last >= 256 ** (4 - nums.length)) return undefined;
  let value = last;
  nums.forEach((n, i) => (value += n * 256 ** (3 - i)));
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

function isIPv4MappedOrCompatible(full: string): boolean {
  const g = full.split(':');
  return g.slice(0, 5).every((x) => x === '0000') && (g[5] === 'ffff' || g[5] === '0000');
}

/** The IPv4 address inside a mapped/compatible (::ffff:a.b.c.d, ::a.b.c.d), NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address. */
function embeddedIPv4(full: string): string | undefined {
  const g = full.split(':');
  const quad = (hi: string, lo: string) => {
    const a = parseInt(hi, 16);
    const b = parseInt(lo, 16);
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
  };
  if (isIPv4MappedOrCompatible(full) && !(g[5] === '0000' && g[6] === '0000')) return quad(g[6], g[7]);
  if (g[0] === '0064' && g[1] === 'ff9b' && g.slice(2, 6).every((x) => x === '0000')) return quad(g[6], g[7]);
  if (g[0] === '2002') return quad(g[1], g[2]);
  return undefined;
}

function isPrivateIPv4(ip: string): boolean {
  const [a, b] = ip.split('.').map(Number);
  return (
    a === 0 || // this network
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) || // IETF protocol assignments, 192.0.0.0/24 (and 192.0.2.0/24 documentation)
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast, reserved, broadcast
  );
}

function isPrivateIPv6(full: string): boolean {
  if (full === '0000:0000:0000:0000:0000:0000:0000:0001' || full === '0000:0000:0000:0000:0000:0000:0000:0000') return true;
  const first = parseInt(full.slice(0, 4), 16);
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xffc0) === 0xfec0 || // site-local (deprecated) fec0::/10
    (first & 0xff00) === 0xff00 || // multicast
    full.startsWith('0064:ff9b:0001:') || // local-use NAT64 64:ff9b:1::/48
    full.startsWith('0100:0000:0000:0000:') || // discard 100::/64
    full.startsWith('2001:0000:') || // Teredo (tunnels to an IPv4 address)
    full.split(':').slice(0, 5).every((x) => x === '0000') // any other ::/80 form
  );
}

/** `fd00:ec2::254` → `fd00:0ec2:0000:0000:0000:0000:0000:0254` (IPv4 tails converted). */
function expandIPv6(ip: string): string {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    text = text.slice(0, -v4[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined ? (tail ? tail.split(':') : []) : [];
  const missing = tail !== undefined ? 8 - h.length - t.length : 0;
  return [...h, ...Array(Math.max(0, missing)).fill('0'), ...t].map((g) => g.padStart(4, '0')).join(':');
}

function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

// ---------------------------------------------------------------------------------------------------------
// Connect time (async)
// ---------------------------------------------------------------------------------------------------------

/**
 * `resolve` with each host's answer remembered for `ttlMs` (one lookup in flight per host is shared; a failed
 * lookup is not remembered; at most `maxHosts` hosts, the oldest forgotten first). Pinning stays exact: a
 * remembered answer is still checked address by address against the caller's policy on every use, and the
 * connection goes only to those addresses, so a name that changes its answer (DNS rebinding) can reach nothing
 * that was not checked; a change is merely seen up to `ttlMs` later.
 */
export function cachingResolver(
  resolve: HostResolver,
  options: { ttlMs: number; maxHosts?: number; now?: () => number },
): HostResolver {
  const now = options.now ?? Date.now;
  const maxHosts = options.maxHosts ?? 1000;
  const answers = new Map<string, { until: number; addresses: Promise<ResolvedAddress[]> }>();
  return (hostname) => {
    const t = now();
    const kept = answers.get(hostname);
    if (kept && kept.until > t) return kept.addresses.then((list) => list.map((a) => ({ ...a })));
    const addresses = resolve(hostname);
    answers.delete(hostname);
    if (answers.size >= maxHosts) answers.delete(answers.keys().next().value as string);
    const entry = { until: t + options.ttlMs, addresses };
    answers.set(hostname, entry);
    addresses.catch(() => {
      if (answers.get(hostname) === entry) answers.delete(hostname);
    });
    return addresses.then((list) => list.map((a) => ({ ...a })));
  };
}

/** How long the system resolver's answer for a host is reused (an AI service is asked on every chat turn). */
export const RESOLUTION_CACHE_MS = 5_000;

const systemResolver: HostResolver = cachingResolver(
  async (hostname) => dnsLookup(hostname, { all: true, verbatim: true }),
  { ttlMs: RESOLUTION_CACHE_MS },
);

/**
 * Checks `url` as written, resolves its host and checks every address. Call it right before connecting and
 * connect with the returned `lookup` (or to one of `addresses`). Throws `NetworkPolicyError`: `invalid_url`,
 * `refused_address` (naming the address a name resolved to), `unresolvable`.
 */
export async function assertConnectable(url: string | URL, opts: NetworkPolicyOptions): Promise<ConnectTarget> {
  const field = opts.field ?? 'url';
  const label = opts.label ?? field;
  const parsed = parseChecked(url, opts);
  const host = bareHost(parsed.hostname);
  let addresses: ResolvedAddress[];
  const literal = normalizeIp(host);
  if (literal) {
    addresses = [{ address: literal, family: isIPv6(literal) ? 6 : 4 }];
  } else {
    try {
      addresses = await (opts.resolve ?? systemResolver)(host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException)?.code;
      throw new NetworkPolicyError('unresolvable', `${label} host ${host} could not be resolved${code ? ` (${code})` : ''}`, field);
    }
    if (addresses.length === 0) throw new NetworkPolicyError('unresolvable', `${label} host ${host} resolved to no address`, field);
    for (const a of addresses) {
      const refusal = refusalOf(a.address, classifyAddress(a.address), opts, host);
      if (refusal) throw refusal;
    }
  }
  const pinned = addresses.map((a) => {
    const ip = normalizeIp(bareHost(a.address)) ?? a.address;
    return { address: ip, family: isIPv6(ip) ? 6 : 4 };
  });
  return { url: parsed, addresses: pinned, lookup: pinnedLookup(pinned) };
}

/** A node `lookup` that answers only `addresses` (filtered by a requested family when one is asked for). */
export function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return ((_hostname: string, options: unknown, callback?: unknown) => {
    const cb = (typeof options === 'function' ? options : callback) as (err: Error | null, address: unknown, family?: number) => void;
    const o = (typeof options === 'object' && options !== null ? options : {}) as { family?: number | string; all?: boolean };
    const family = o.family === 4 || o.family === 'IPv4' ? 4 : o.family === 6 || o.family === 'IPv6' ? 6 : 0;
    const list = family ? addresses.filter((a) => a.family === family) : addresses;
    if (list.length === 0) {
      const err = Object.assign(new Error(`no checked IPv${family} address`), { code: 'ENOTFOUND' });
      process.nextTick(() => cb(err, o.all ? [] : undefined));
      return;
    }
    process.nextTick(() => (o.all ? cb(null, list.map((a) => ({ ...a }))) : cb(null, list[0].address, list[0].family)));
  }) as LookupFunction;
}

export interface PolicyFetchInit {
  method?: string;
  headers?: Headers | Record<string, string> | Array<[string, string]>;
  body?: string | Uint8Array | ArrayBuffer | URLSearchParams | null;
  signal?: AbortSignal | null;
}

// Private keep-alive pools: every socket in them was opened through a checked, pinned lookup.
const agents = new Map<string, http.Agent>();
function agentFor(protocol: string, allowPrivate: boolean): http.Agent {
  const key = `${protocol}${allowPrivate}`;
  let agent = agents.get(key);
  if (!agent) {
    const options = { keepAlive: true, keepAliveMsecs: 1000, maxFreeSockets: 16, timeout: 30_000 };
    agent = protocol === 'https:' || protocol === 'wss:' ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

/** Statuses whose answer has no body (a `Response` refuses one). */
export const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

/**
 * What http.request's `signal` option does (the request, and with it its response, destroyed with an
 * `AbortError` whose cause is the signal's reason), with one listener removed when the request closes: node's
 * own wiring (an end-of-stream watcher per request) cost ~45 us per request here.
 */
export function abortWith(signal: AbortSignal, req: http.ClientRequest): void {
  const onAbort = (): void => {
    req.destroy(Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' }));
  };
  signal.addEventListener('abort', onAbort, { once: true });
  req.once('close', () => signal.removeEventListener('abort', onAbort));
}

/**
 * Request headers as one lower-case record, repeated names joined with `, ` (what a WHATWG `Headers` holds,
 * without building one per request). Node's http rejects invalid names and values when the request is made.
 */
function headerRecord(init: PolicyFetchInit['headers']): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (!init) return out;
  const add = (name: string, value: string): void => {
    const key = name.toLowerCase();
    const v = String(value).trim();
    out[key] = Object.prototype.hasOwnProperty.call(out, key) ? `${out[key]}, ${v}` : v;
  };
  if (init instanceof Headers) init.forEach((value, name) => add(name, value));
  else if (Array.isArray(init)) for (const [name, value] of init) add(name, value);
  else for (const name of Object.keys(init)) add(name, init[name]);
  return out;
}

/** The refusal of a 3xx answer (redirects are never followed): names where it pointed, resolved against `base`. */
/** The `Location` header of an undici answer's raw header list (name, value, name, value, ...), if any. */
export function locationOf(rawHeaders: Buffer[]): string | undefined {
  let location: string | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length === 8 && rawHeaders[i]!.toString('latin1').toLowerCase() === 'location') location = rawHeaders[i + 1]!.toString('latin1');
  }
  return location;
}

export function redirectRefused(label: string, status: number, raw: string | undefined, base: URL, field: string | undefined): NetworkPolicyError {
  let location = raw ?? '(no Location)';
  if (raw) {
    try {
      location = new URL(raw, base).href;
    } catch {
      // keep the raw header
    }
  }
  return new NetworkPolicyError('redirect_refused', `${label} answered a redirect (${status}) to ${location}; redirects are not followed`, field ?? 'url', { status, location });
}

/**
 * `assertConnectable`, then the request over node's http(s), connected to the checked address. Resolves with
 * the response for any status but 3xx (the caller judges 4xx/5xx); a 3xx rejects with
 * `NetworkPolicyError('redirect_refused')` and is never followed. Other failures reject with the socket's error
 * (or the abort reason when `init.signal` aborts).
 */
export async function policyFetch(url: string | URL, init: PolicyFetchInit = {}, opts: NetworkPolicyOptions): Promise<Response> {
  const target = await assertConnectable(url, opts);
  const label = opts.label ?? opts.field ?? 'url';
  const headers = headerRecord(init.headers);
  let body: Buffer | undefined;
  if (init.body instanceof URLSearchParams) {
    body = Buffer.from(init.body.toString());
    headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
  } else if (typeof init.body === 'string') {
    body = Buffer.from(init.body);
    headers['content-type'] ??= 'text/plain;charset=UTF-8';
  } else if (init.body instanceof ArrayBuffer) body = Buffer.from(init.body);
  else if (init.body) body = Buffer.from(init.body.buffer, init.body.byteOffset, init.body.byteLength);
  if (body) headers['content-length'] = String(body.length);
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  const u = target.url;
  const protocol = u.protocol === 'wss:' ? 'https:' : u.protocol === 'ws:' ? 'http:' : u.protocol;
  const requestFn = protocol === 'https:' ? https.request : http.request;
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = requestFn({
      protocol,
      hostname: bareHost(u.hostname),
      port: u.port || undefined,
      path: `${u.pathname}${u.search}`,
      method: (init.method ?? 'GET').toUpperCase(),
      headers,
      lookup: target.lookup,
      agent: agentFor(protocol, opts.allowPrivateNetwork),
      ...(protocol === 'https:' && !normalizeIp(bareHost(u.hostname)) ? { servername: bareHost(u.hostname) } : {}),
    });
    if (signal) abortWith(signal, req);
    req.once('response', resolve);
    req.once('error', (err) => reject(signal?.aborted ? signal.reason : err));
    req.end(body);
  });
  const status = res.statusCode ?? 0;
  if (status >= 300 && status < 400) {
    res.resume();
    throw redirectRefused(label, status, res.headers.location, u, opts.field);
  }
  const responseHeaders = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) responseHeaders.append(k, one);
  }
  const nullBody = NULL_BODY_STATUSES.has(status) || init.method?.toUpperCase() === 'HEAD';
  if (nullBody) res.resume();
  const webBody = nullBody ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
  const response = new Response(webBody, { status, statusText: res.statusMessage ?? '', headers: responseHeaders });
  Object.defineProperty(response, 'url', { value: u.href });
  return response;
}

// ---------------------------------------------------------------------------------------------------------
// A lean client for many small requests to few receivers (webhooks)
// ---------------------------------------------------------------------------------------------------------

export interface PinnedPostOptions {
  headers: Record<string, string>;
  body: string | Buffer;
  /** The whole exchange, connect to the end of the answer, is bounded by this; then it fails as `timeout`. */
  timeoutMs: number;
}

/** The answer's status; its body is read to the end (so the connection is reused) and dropped. */
export interface PinnedPostResult {
  status: number;
}

/** Raised when `timeoutMs` passed before the answer ended (the request is destroyed). */
export class PinnedPostTimeoutError extends Error {
  override readonly name = 'PinnedPostTimeoutError';
  readonly code = 'ETIMEDOUT';
}

/** A URL's check, with what every request to it repeats, worked out once per check. */
export interface CheckedTarget {
  until: number;
  target: ConnectTarget;
  agentKey: string;
  secure: boolean;
  host: string;
  port: string | undefined;
  path: string;
  servername: string | undefined;
  /** The Host header: the URL's host (IPv6 in brackets, the port unless the scheme's default), as node would write it. */
  hostHeader: string;
}

export interface PinnedConnectionsOptions {
  /** How long a URL's check is reused (ms). Default 1 000. */
  checkCacheMs?: number;
  /**
   * An idle connection is closed after this (ms), or sooner when the server's `Keep-Alive: timeout` hint says it
   * closes first (2 s before it, undici's `keepAliveTimeoutThreshold`). Default 15 000.
   */
  idleSocketMs?: number;
  /** Clock of the check cache (tests). Default `Date.now`. */
  now?: () => number;
}

/** A client's requests given and not yet ended (0: its connection is free). */
const kBusy = Symbol('busy');

/**
 * The connections of one origin and checked address set: one undici `Client` per connection (HTTP/1.1, one
 * request at a time). A request goes to the free client used last (its connection is the likeliest to be open),
 * else to a new one. Not undici's `Pool`: before reusing an idle connection undici lets one event-loop turn pass
 * (so a close or stray bytes the server sent meanwhile are seen first), and the `Pool` counts the connection busy
 * meanwhile and opens another: a second connection for sequential requests, 53 instead of 40 for two waves of
 * 40 (plugins/ai-fetch.test.ts). A client whose connection closed while it was free is dropped.
 */
export class PinnedPool {
  private readonly free: PinnedClient[] = [];
  private readonly all = new Set<PinnedClient>();
  private closing = false;

  constructor(private readonly create: () => PinnedClient) {}

  /** Sends `request` on a free connection (or a new one); `handler` must call `ended(handler.via)` once, at its end. */
  dispatch(request: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler & PinnedHandler): void {
    let c = this.free.pop();
    while (c && (c.closed || c.destroyed)) c = this.free.pop();
    if (!c) {
      const made = this.create();
      made.on('disconnect', () => {
        // closed while free: forget it (a new request opens a new connection on a new client)
        if (made[kBusy] === 0 && this.all.delete(made)) {
          const i = this.free.indexOf(made);
          if (i >= 0) this.free.splice(i, 1);
          made.close().catch(() => undefined);
        }
      });
      this.all.add(made);
      c = made;
    }
    c[kBusy]++;
    handler.via = c;
    handler.pool = this;
    c.dispatch(request, handler);
  }

  /** A request given to `c` ended (answered to its end, failed or aborted): its connection is free again. */
  ended(c: PinnedClient): void {
    c[kBusy]--;
    if (c[kBusy] > 0 || !this.all.has(c)) return;
    if (this.closing) {
      this.all.delete(c);
      c.close().catch(() => undefined);
    } else this.free.push(c);
  }

  /** Closes the free connections now, the busy ones when their request ends. */
  close(): void {
    this.closing = true;
    for (const c of this.free.splice(0)) {
      this.all.delete(c);
      c.close().catch(() => undefined);
    }
  }

  /** Closes every connection now, busy or not. */
  destroy(): void {
    this.closing = true;
    this.free.length = 0;
    for (const c of this.all) c.destroy().catch(() => undefined);
    this.all.clear();
  }
}

/** A connection's count of answers that ended on it (`PinnedConnections`: whether a request went out on a kept one). */
const kAnswered = Symbol('answered');

/** What the pinned clients' undici handlers share: the request's connection was kept from an earlier exchange. */
export interface PinnedClient extends Client {
  [kAnswered]: number;
  [kBusy]: number;
}

/**
 * What the pinned clients (the webhooks' `PinnedPoster`, the AI services' fetch in ai-fetch.ts) keep between
 * requests, and why that cannot be used for DNS rebinding (docs/security.md "Outbound connections"). The HTTP
 * client is undici's (`Client`s in a `PinnedPool`, HTTP/1.1, no pipelining), not node:http: about half the CPU per
 * webhook POST (docs/benchmarks.md section 8).
 *
 * - **The check of a URL, for `checkCacheMs` (default 1 s), per URL.** The cached value is the checked target:
 *   the addresses that passed `assertConnectable` (the host resolved, every address checked) and the pinned lookup
 *   answering only them. Within that second a request goes to one of those very addresses, never to a new
 *   answer of the name's DNS; after it, the host is resolved and checked again. A failed check is never kept.
 * - **Keep-alive connections, per origin and checked address set.** One `PinnedPool` per `protocol//host:port`
 *   and the exact addresses it was checked to, whose connections are opened through that pinned lookup
 *   (`connect.lookup`), with TLS `servername` and the `Host` header the URL's host. When a new check gives other
 *   addresses, requests go to a new pool (new connections to the new, checked addresses); the old pool is closed
 *   (idle connections now, busy ones when their request ends). A connection idle for `idleSocketMs` (default 15 s)
 *   is closed by undici's keep-alive timer (sooner when the server announces a shorter keep-alive).
 * - **No retries, no redirects by the client itself.** undici sends a request once (its retry handler is not
 *   used) and hands 3xx answers back like any other; callers refuse them (`redirectRefused`).
 */
export class PinnedConnections {
  private readonly checked = new Map<string, CheckedTarget>();
  private readonly pools = new Map<string, PinnedPool>();
  /** The pool key last used per origin, to retire an origin's pool when its addresses change. */
  private readonly originPool = new Map<string, string>();
  private readonly checkCacheMs: number;
  private readonly idleSocketMs: number;
  private readonly now: () => number;

  constructor(
    private readonly policy: NetworkPolicyOptions,
    options: PinnedConnectionsOptions = {},
  ) {
    this.checkCacheMs = options.checkCacheMs ?? 1_000;
    this.idleSocketMs = options.idleSocketMs ?? 15_000;
    this.now = options.now ?? Date.now;
  }

  /** The checked target of `url` while its check is fresh, else null (and the stale check is forgotten). */
  fresh(url: string): CheckedTarget | null {
    const kept = this.checked.get(url);
    if (!kept) return null;
    if (kept.until > this.now()) return kept;
    this.checked.delete(url);
    return null;
  }

  /** Checks `url` now and keeps the check. Throws `NetworkPolicyError`. */
  async check(url: string): Promise<CheckedTarget> {
    const t = this.now();
    const target = await assertConnectable(url, this.policy);
    const origin = `${target.url.protocol}//${bareHost(target.url.hostname)}:${target.url.port}`;
    const agentKey = `${origin}|${target.addresses.map((a) => a.address).join(',')}`;
    const previous = this.originPool.get(origin);
    if (previous !== undefined && previous !== agentKey) this.retire(previous);
    this.originPool.set(origin, agentKey);
    if (this.checked.size >= 1000) this.checked.delete(this.checked.keys().next().value as string);
    const u = target.url;
    const host = bareHost(u.hostname);
    const secure = u.protocol === 'https:';
    // what every request to this target repeats, worked out once per check
    const entry: CheckedTarget = {
      until: t + this.checkCacheMs, target, agentKey, secure, host, port: u.port || undefined, path: `${u.pathname}${u.search}`,
      servername: secure && !normalizeIp(host) ? host : undefined,
      hostHeader: u.host,
    };
    this.checked.set(url, entry);
    return entry;
  }

  /** The keep-alive pool of a checked target's origin and addresses. */
  pool(t: CheckedTarget): PinnedPool {
    let pool = this.pools.get(t.agentKey);
    if (!pool) {
      const options = this.clientOptions(t);
      pool = new PinnedPool(() => this.client(t.target.url.origin, options));
      this.pools.set(t.agentKey, pool);
    }
    return pool;
  }

  /** A client of one new connection to a checked target, for one request (the retry of a stale kept one); close it after. */
  single(t: CheckedTarget): PinnedClient {
    return this.client(t.target.url.origin, this.clientOptions(t));
  }

  private clientOptions(t: CheckedTarget): Client.Options {
    return {
      // the connection goes to the checked addresses only, named as the URL names its host (SNI)
      // (no connect timeout of undici's either: node:http had none, the callers' bounds cover it)
      connect: { lookup: t.target.lookup, timeout: 0, ...(t.servername ? { servername: t.servername } : {}) },
      keepAliveTimeout: this.idleSocketMs,
      keepAliveMaxTimeout: this.idleSocketMs,
      // no timers of undici's per request: callers bound or abort their requests themselves (a webhook's 10 s, an
      // AI request's signal), as with node:http before
      headersTimeout: 0,
      bodyTimeout: 0,
    };
  }

  /** An undici client that counts the answers ended on its current connection (0 again on each new one). */
  private client(origin: string | URL, opts: object): PinnedClient {
    const c = new Client(origin, opts) as PinnedClient;
    c[kAnswered] = 0;
    c[kBusy] = 0;
    c.on('connect', () => (c[kAnswered] = 0));
    return c;
  }

  /** Drops a pool whose addresses are no longer the checked ones: idle connections close now, busy ones when done. */
  private retire(key: string): void {
    const pool = this.pools.get(key);
    if (!pool) return;
    this.pools.delete(key);
    pool.close();
  }

  /** Closes every kept connection and forgets every check. */
  close(): void {
    for (const pool of this.pools.values()) pool.destroy();
    this.pools.clear();
    this.checked.clear();
    this.originPool.clear();
  }
}

/**
 * An undici failure as the node:http one it replaces (callers and their messages name node's codes): a connection
 * closed before the answer ended is node's `socket hang up` (ECONNRESET). Socket errors (ECONNREFUSED,
 * ECONNRESET, ...) come through as they are.
 */
export function nodeStyleError(err: Error): Error {
  if ((err as NodeJS.ErrnoException).code === 'UND_ERR_SOCKET') return Object.assign(new Error('socket hang up', { cause: err }), { code: 'ECONNRESET' });
  return err;
}

/** An undici handler of the pinned clients: `via` is the client (so the connection) its request was given to. */
export interface PinnedHandler {
  via?: PinnedClient;
  /** The pool that gave the request to `via` (absent for a one-off client). */
  pool?: PinnedPool;
}

/** Counts an answer that ended on `client`'s connection (it is now a kept one). */
export function answeredOn(client: PinnedClient): void {
  client[kAnswered]++;
}

/** True when `client`'s connection carried an earlier exchange (a kept one). */
export function isKeptConnection(client: PinnedClient): boolean {
  return client[kAnswered] > 0;
}

/**
 * POSTs over undici to addresses the policy checked, for callers that send many small requests to a few
 * receivers and need only the status (webhook deliveries; docs/security.md "Outbound connections"). Checks and
 * keep-alive connections are kept as `PinnedConnections` says (a check for 1 s towards its addresses only; as many
 * connections per origin and address set as were in flight together). Besides:
 *
 * - **One timer for every request's bound.** A request must end within its `timeoutMs` (counted from `post`,
 *   the check included); one timer armed for the earliest deadline in flight enforces them all, instead of a
 *   timer set and cleared per request.
 *
 * Never follows a redirect: a 3xx rejects with `NetworkPolicyError('redirect_refused')`. Refusals reject with
 * `NetworkPolicyError`, a timeout with `PinnedPostTimeoutError`, other failures with the socket's error.
 */
export class PinnedPoster {
  private readonly pins: PinnedConnections;
  /** The requests in flight with when each must have ended (performance.now() ms): one timer bounds them all. */
  private readonly deadlines = new Set<Deadline>();
  private deadlineTimer: ReturnType<typeof setTimeout> | null = null;
  private deadlineAt = Infinity;

  constructor(
    private readonly policy: NetworkPolicyOptions,
    options: PinnedConnectionsOptions = {},
  ) {
    this.pins = new PinnedConnections(policy, options);
  }

  /** The checked target of `url` (from the last check while it is fresh, else checked now). Throws `NetworkPolicyError`. */
  async target(url: string): Promise<{ target: ConnectTarget; agentKey: string }> {
    return this.pins.fresh(url) ?? this.pins.check(url);
  }

  /** Closes every kept connection and forgets every check. */
  close(): void {
    this.pins.close();
  }

  post(url: string, init: PinnedPostOptions): Promise<PinnedPostResult> {
    // the bound counts from here: a check that has to resolve the host is part of the exchange
    const deadline = performance.now() + init.timeoutMs;
    const kept = this.pins.fresh(url);
    return kept ? this.send(kept, init, deadline) : this.pins.check(url).then((t) => this.send(t, init, deadline));
  }

  private send(t: CheckedTarget, init: PinnedPostOptions, deadline: number): Promise<PinnedPostResult> {
    // (everything that can throw runs inside the executor: a failure is a rejection, as from an async function)
    return new Promise<PinnedPostResult>((resolve, reject) => {
      // the headers as a flat list with the checked URL's Host; undici adds the body's length and keep-alive
      const headers: string[] = ['host', t.hostHeader];
      for (const name in init.headers) {
        const lower = name.toLowerCase();
        if (lower !== 'host' && lower !== 'content-length') headers.push(name, init.headers[name]!);
      }
      const handler = new PostHandler(this, t, init.timeoutMs, resolve, reject);
      handler.bound = this.bound(deadline, () => handler.expire());
      this.pins.pool(t).dispatch({ path: t.path, method: 'POST', headers, body: init.body }, handler);
    });
  }

  /** A request's end: its deadline leaves the set (`PostHandler`). */
  unbound(d: Deadline): void {
    this.deadlines.delete(d);
  }

  /** The label of refusals (`PostHandler`). */
  get labels(): { label: string; field: string | undefined } {
    return { label: this.policy.label ?? this.policy.field ?? 'url', field: this.policy.field };
  }

  /**
   * Registers a request's deadline. One timer, armed for the earliest deadline in flight, bounds every request:
   * not a timer set and cleared per request (docs/benchmarks.md section 8). A request that ends leaves the set; the
   * timer, when it fires, expires what is due and re-arms for the earliest deadline left.
   */
  private bound(at: number, expire: () => void): Deadline {
    const d = { at, expire };
    this.deadlines.add(d);
    if (at < this.deadlineAt) this.armDeadlines(at);
    return d;
  }

  private armDeadlines(at: number): void {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineAt = at;
    this.deadlineTimer = setTimeout(() => this.expireDeadlines(), Math.max(0, at - performance.now()));
    // a request in flight holds its socket, which keeps the process alive; the bound alone does not
    this.deadlineTimer.unref();
  }

  private expireDeadlines(): void {
    this.deadlineTimer = null;
    this.deadlineAt = Infinity;
    // a timer may fire a fraction of a millisecond before the deadline it was armed for: that counts as due
    const t = performance.now() + 1;
    let next = Infinity;
    for (const d of this.deadlines) {
      if (d.at <= t) {
        this.deadlines.delete(d);
        d.expire();
      } else if (d.at < next) next = d.at;
    }
    if (next < Infinity) this.armDeadlines(next);
  }
}

/**
 * One POST's undici handler: the status decides, the body is read to its end and dropped (so the connection goes
 * back to the pool), a 3xx is refused, the deadline aborts the request. Settles once.
 */
class PostHandler implements Dispatcher.DispatchHandler, PinnedHandler {
  via?: PinnedClient;
  pool?: PinnedPool;
  bound: Deadline | undefined;
  private status: number | undefined;
  private settled = false;
  private abort: ((err: Error) => void) | undefined;

  constructor(
    private readonly poster: PinnedPoster,
    private readonly t: CheckedTarget,
    private readonly timeoutMs: number,
    private readonly resolve: (r: PinnedPostResult) => void,
    private readonly reject: (e: unknown) => void,
  ) {}

  private settle(err?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    if (this.bound) this.poster.unbound(this.bound);
    // a status that came counts, also when the body did not end (the connection is dropped)
    if (this.status !== undefined && !(this.status >= 300 && this.status < 400)) this.resolve({ status: this.status });
    else this.reject(err);
  }

  /** The deadline passed: a status that came in time counts though its body did not end. */
  expire(): void {
    const err = new PinnedPostTimeoutError(`no answer within ${this.timeoutMs} ms`);
    this.settle(err);
    this.abort?.(err);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.settled) abort(new PinnedPostTimeoutError(`no answer within ${this.timeoutMs} ms`));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.status = statusCode;
    if (statusCode >= 300 && statusCode < 400) {
      const { label, field } = this.poster.labels;
      this.settle(redirectRefused(label, statusCode, locationOf(rawHeaders), this.t.target.url, field));
    }
    return true;
  }

  onData(): boolean {
    return true;
  }

  onComplete(): void {
    if (this.via) this.pool?.ended(this.via);
    this.settle();
  }

  onError(err: Error): void {
    if (this.via) this.pool?.ended(this.via);
    this.settle(nodeStyleError(err));
  }
}

/** A request's deadline (`PinnedPoster.bound`). */
interface Deadline {
  at: number;
  expire: () => void;
}

/** A URL's check as `PinnedPoster` keeps it, with the request options it implies. */
