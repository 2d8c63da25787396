import { InputError } from '../../core/errors.js';
import type { ContactSheetReader } from '../../core/ports/contact-sheet-reader.port.js';

const MAX_BYTES = 10 * 1024 * 1024;

/**
 * Google Sheets through their CSV export: `<base>/spreadsheets/d/<id>/export?format=csv[&gid=<gid>]`, where
 * `<base>` is the `googleSheetsBaseUrl` setting (https://docs.google.com; tests serve a local one). The sheet must
 * be readable by anyone with the link. Streams the body, refusing it past 10 MB.
 */
export class GoogleSheetReader implements ContactSheetReader {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 15_000,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  /** The export URL of a sheet URL, or null when it is not one (pure). */
  exportUrl(sheetUrl: string): string | null {
    let url: URL;
    try {
      url = new URL(sheetUrl.trim());
    } catch {
      return null;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    const m = /\/spreadsheets\/d\/([A-Za-z0-9_-]{10,200})(?:\/|$)/.exec(url.pathname);
    if (!m) return null;
    const gid = url.searchParams.get('gid') ?? /(?:^|[#&])gid=(\d+)/.exec(url.hash)?.[1] ?? null;
    const base = this.baseUrl.replace(/\/+$/, '');
    return `${base}/spreadsheets/d/${m[1]}/export?format=csv${gid && /^\d+$/.test(gid) ? `&gid=${gid}` : ''}`;
  }

  async open(sheetUrl: string): Promise<AsyncIterable<Uint8Array>> {
    const target = this.exportUrl(sheetUrl);
    if (!target) throw new InputError('invalid_source', 'source_id is not a Google Sheets URL (https://docs.google.com/spreadsheets/d/<id>/...)');
    let res: Response;
    try {
      res = await this.fetchImpl(target, { redirect: 'follow', signal: AbortSignal.timeout(this.timeoutMs) });
    } catch {
      throw new InputError('invalid_source', 'The Google Sheet could not be fetched');
    }
    if (!res.ok || !res.body) {
      throw new InputError('invalid_source', `The Google Sheet could not be read (HTTP ${res.status}); share it as "anyone with the link can view"`);
    }
    const type = res.headers.get('content-type') ?? '';
    if (/text\/html/i.test(type)) throw new InputError('invalid_source', 'The Google Sheet is not shared publicly (a sign-in page came back)');
    const declared = Number(res.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > MAX_BYTES) throw new InputError('invalid_source', 'The Google Sheet export is larger than 10 MB');
    const body = res.body;
    return (async function* limited() {
      let total = 0;
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        total += chunk.byteLength;
        if (total > MAX_BYTES) throw new InputError('invalid_source', 'The Google Sheet export is larger than 10 MB');
        yield chunk;
      }
    })();
  }
}
