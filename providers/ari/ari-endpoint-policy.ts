/**
 * Which `ari_endpoint` URLs the server may connect to (SSRF). Cloud metadata services are refused always;
 * loopback, private, link-local and other non-public addresses only when the private-network setting
 * (`CALLPLANE_ALLOW_PRIVATE_NETWORK`) is off. Checks the URL as written: IP literals (in every form the WHATWG
 * URL parser accepts, e.g. `http://2852039166/`) and well-known metadata host names. A DNS name that resolves
 * to a private address is not caught here (that needs a resolver at connect time).
 */
import { isIPv4, isIPv6 } from 'node:net';

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

/** Issues as `[field, message]` (empty when the endpoint is acceptable). */
export function checkAriEndpoint(endpoint: unknown, opts: { allowPrivateNetwork: boolean }): Array<[string, string]> {
  if (typeof endpoint !== 'string' || endpoint.trim() === '') return [['ari_endpoint', 'ari_endpoint is required']];
  let url: URL;
  try {
    url = new URL(endpoint.trim());
  } catch {
    return [['ari_endpoint', 'ari_endpoint must be a valid http(s) URL']];
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return [['ari_endpoint', 'ari_endpoint must use http or https']];
  if (url.username || url.password) return [['ari_endpoint', 'ari_endpoint must not carry credentials; use app_name and app_password']];
  const host = bareHost(url.hostname);
  if (!host) return [['ari_endpoint', 'ari_endpoint has no host']];
  if (isMetadataHost(host)) return [['ari_endpoint', 'ari_endpoint must not point at a cloud metadata service']];
  if (!opts.allowPrivateNetwork && isPrivateHost(host)) {
    return [['ari_endpoint', 'ari_endpoint points at a private or loopback address, which this server does not allow (CALLPLANE_ALLOW_PRIVATE_NETWORK)']];
  }
  return [];
}

function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

export function isMetadataHost(host: string): boolean {
  const h = bareHost(host);
  const v4 = embeddedIPv4(h);
  if (v4 && METADATA_HOSTS.includes(v4)) return true;
  if (isIPv6(h)) return METADATA_HOSTS.some((m) => isIPv6(m) && expandIPv6(m) === expandIPv6(h));
  return METADATA_HOSTS.includes(h);
}

export function isPrivateHost(host: string): boolean {
  const h = bareHost(host);
  if (h === 'localhost' || h.endsWith('.localhost') || h.endsWith('.local') || h.endsWith('.internal')) return true;
  const v4 = embeddedIPv4(h);
  if (v4) return isPrivateIPv4(v4);
  if (isIPv6(h)) return isPrivateIPv6(h);
  return false;
}

/** The IPv4 address of a literal, including IPv4-mapped/compatible IPv6 (`::ffff:10.0.0.1`, `::ffff:a00:1`). */
function embeddedIPv4(h: string): string | undefined {
  if (isIPv4(h)) return h;
  if (!isIPv6(h)) return undefined;
  const groups = expandIPv6(h).split(':');
  const prefixZero = groups.slice(0, 5).every((g) => g === '0000');
  if (prefixZero && (groups[5] === 'ffff' || groups[5] === '0000') && !(groups[5] === '0000' && groups[6] === '0000')) {
    const a = parseInt(groups[6], 16);
    const b = parseInt(groups[7], 16);
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
  }
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

function isPrivateIPv6(ip: string): boolean {
  const full = expandIPv6(ip);
  if (full === '0000:0000:0000:0000:0000:0000:0000:0001' || full === '0000:0000:0000:0000:0000:0000:0000:0000') return true;
  const first = parseInt(full.slice(0, 4), 16);
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xff00) === 0xff00 || // multicast
    full.startsWith('0064:ff9b:0000:0000:0000:0000') // NAT64 of a v4 address: treat as not public
  );
}

/** `fd00:ec2::254` → `fd00:0ec2:0000:0000:0000:0000:0000:0254` (IPv4 tails converted). */
function expandIPv6(ip: string): string {
  let text = ip.toLowerCase();
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
