/**
 * PhoneAddressNormalizer over libphonenumber-js (its default, "min" metadata).
 *
 * A `pstn` number must be *possible* (right length for its country) by default, not *valid* (a known
 * allocated range): fictional numbers such as +1 415 555 01xx, which tests, demos and the simulator use, are
 * possible but not valid, and a provider knows better than a metadata snapshot whether a new range exists.
 * `{ strictness: 'valid' }` asks for the stricter check.
 */
import { isSupportedCountry, parseDigits, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { InputError } from '../../core/errors.js';
import type { NormalizedAddress, PhoneAddressNormalizer } from '../../core/ports/phone-address-normalizer.port.js';

export interface LibphonenumberNormalizerOptions {
  /** `possible` (default): right length for the country; `valid`: also inside a known number range. */
  strictness?: 'possible' | 'valid';
}

const SIP_SCHEME = /^(sips?):/i;
const TEL_SCHEME = /^tel:/i;
/** Plus signs libphonenumber accepts (ASCII and full-width); only ASCII reaches libphonenumber-js. */
const PLUS = /^[+\uff0b]/;
/** Punctuation people write inside phone numbers. */
const PHONE_PUNCTUATION = /[\s\-.()/\u00a0]/g;
/** How people write an extension after a number: `;ext=`, `ext.`, `extension`, `x`, `#` (libphonenumber's markers). */
const EXTENSION_SUFFIX = /^(.*?)\s*(?:;\s*ext\s*=|,?\s*(?:ext\.?|extension|x)|#)\s*(\d{1,20})\s*$/i;
const MIN_PSTN_DIGITS = 7;
/** Letters of a vanity number, on the ITU E.161 keypad (what libphonenumber's alpha conversion uses). */
const KEYPAD: Record<string, string> = Object.fromEntries(
  ['abc', 'def', 'ghi', 'jkl', 'mno', 'pqrs', 'tuv', 'wxyz'].flatMap((letters, i) => [...letters].map((l) => [l, String(i + 2)])),
);
const DEFAULT_PORT: Record<string, string> = { sip: '5060', sips: '5061' };
/** RFC 3261 hostname or IPv4 address. */
const HOSTNAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.?$/i;
const IPV6_REFERENCE = /^\[[0-9a-f:.]+\]$/i;

function invalid(detail: string): InputError {
  return new InputError('invalid_phone_number', detail);
}

/** Decimal digits of any script (Arabic-Indic, Devanagari, full-width, ...) become 0-9; the rest is left as written. */
function latinDigits(text: string): string {
  return text.replace(/\p{Nd}/gu, (d) => parseDigits(d) || d);
}

/** Vanity letters become keypad digits, e.g. `+1 800 FLOWERS` → `+1 800 3569377`; an extension suffix is kept. */
function vanityToDigits(text: string): string | null {
  const m = EXTENSION_SUFFIX.exec(text);
  const main = m ? m[1] : text;
  if ((main.match(/[a-z]/gi) ?? []).length < 3) return null; // libphonenumber's rule: an alpha number has 3+ letters
  const digits = main.replace(/[a-z]/gi, (l) => KEYPAD[l.toLowerCase()]);
  return m ? `${digits} ext. ${m[2]}` : digits;
}

/**
 * The port's classification, with libphonenumber doing the parsing:
 * - `sip:`/`sips:` → `sip_uri`;
 * - a value that starts like a phone number is parsed as one and must parse: `+` (or full-width `＋`), `tel:`, or
 *   digits (any script) of which 7 or more come before an extension marker (`ext.`, `x`, `#`, `;ext=`). Its
 *   extension is kept apart from the E.164 number; vanity letters (3 or more) become keypad digits;
 * - anything else (`1001`, `desk-abc`, `*97`) → `sip_extension`, lower-cased.
 */
export class LibphonenumberNormalizer implements PhoneAddressNormalizer {
  private readonly strictness: 'possible' | 'valid';

  constructor(options: LibphonenumberNormalizerOptions = {}) {
    this.strictness = options.strictness ?? 'possible';
  }

  normalize(address: string, countryCode?: string | null): NormalizedAddress {
    const text = typeof address === 'string' ? address.trim() : '';
    if (text === '') throw invalid('address is empty');

    const sip = SIP_SCHEME.exec(text);
    if (sip) return { addressType: 'sip_uri', addressNormalized: normalizeSipUri(sip[1].toLowerCase(), text.slice(sip[0].length), text), extension: null };

    const latin = latinDigits(text).replace(PLUS, '+');
    if (TEL_SCHEME.test(latin)) {
      // RFC 3966: libphonenumber reads `;ext=` and a numeric `;phone-context=+<code>`; other parameters are dropped
      const params = latin.slice(4).split(';');
      const kept = params.slice(1).map((p) => p.trim()).filter((p) => /^ext=/i.test(p) || /^phone-context=\+/i.test(p));
      return this.pstn(['tel:' + params[0], ...kept].join(';'), countryCode, text);
    }
    if (latin.startsWith('+')) return this.pstn(latin, countryCode, text);

    const main = (EXTENSION_SUFFIX.exec(latin)?.[1] ?? latin).replace(PHONE_PUNCTUATION, '');
    if (/^\d+$/.test(main) && main.length >= MIN_PSTN_DIGITS) return this.pstn(latin, countryCode, text);
    return { addressType: 'sip_extension', addressNormalized: text.toLowerCase(), extension: null };
  }

  private pstn(number: string, countryCode: string | null | undefined, original: string): NormalizedAddress {
    const international = number.startsWith('+') || /^tel:\+/i.test(number) || /;phone-context=\+/i.test(number);
    let country: CountryCode | undefined;
    if (!international) {
      if (countryCode === undefined || countryCode === null || countryCode.trim() === '') {
        throw invalid(
          `${JSON.stringify(original)} has no country prefix: start it with + (E.164, e.g. +14155550100) or set country_code`,
        );
      }
      const code = countryCode.trim().toUpperCase();
      if (!/^[A-Z]{2}$/.test(code) || !isSupportedCountry(code)) {
        throw invalid(`unknown country_code ${JSON.stringify(countryCode)}`);
      }
      country = code as CountryCode;
    }
    const parse = (text: string) => {
      const parsed = parsePhoneNumberFromString(text, country ? { defaultCountry: country } : undefined);
      return parsed && (this.strictness === 'valid' ? parsed.isValid() : parsed.isPossible()) ? parsed : undefined;
    };
    const vanity = /^tel:/i.test(number) ? null : vanityToDigits(number);
    const parsed = parse(number) ?? (vanity !== null ? parse(vanity) : undefined);
    if (!parsed) {
      const where = country ? ` for country ${country}` : '';
      throw invalid(`${JSON.stringify(original)} is not a valid phone number${where}`);
    }
    return { addressType: 'pstn', addressNormalized: parsed.number, extension: parsed.ext ?? null };
  }
}

/**
 * `sip:`/`sips:` URI → scheme and host lower-cased, the scheme's default port dropped, user part, parameters
 * and headers kept as written. `rest` is what follows `scheme:`.
 */
function normalizeSipUri(scheme: string, rest: string, original: string): string {
  const bad = (why: string) => invalid(`${JSON.stringify(original)} is not a valid SIP URI: ${why}`);
  if (/\s/.test(rest)) throw bad('it contains whitespace');

  const question = rest.indexOf('?');
  const beforeHeaders = question === -1 ? rest : rest.slice(0, question);
  const headers = question === -1 ? '' : rest.slice(question);

  const at = beforeHeaders.lastIndexOf('@');
  const user = at === -1 ? '' : beforeHeaders.slice(0, at);
  if (at !== -1 && user === '') throw bad('the user part before "@" is empty');
  const hostAndParams = at === -1 ? beforeHeaders : beforeHeaders.slice(at + 1);

  const semicolon = hostAndParams.indexOf(';');
  const hostPort = semicolon === -1 ? hostAndParams : hostAndParams.slice(0, semicolon);
  const params = semicolon === -1 ? '' : hostAndParams.slice(semicolon);

  let host: string;
  let port = '';
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close === -1) throw bad('an IPv6 address is not closed with "]"');
    host = hostPort.slice(0, close + 1);
    const after = hostPort.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) throw bad('unexpected text after the IPv6 address');
      port = after.slice(1);
    }
    if (!IPV6_REFERENCE.test(host)) throw bad('the IPv6 address is malformed');
  } else {
    const colon = hostPort.lastIndexOf(':');
    host = colon === -1 ? hostPort : hostPort.slice(0, colon);
    port = colon === -1 ? '' : hostPort.slice(colon + 1);
    if (host === '') throw bad('the host is missing');
    if (!HOSTNAME.test(host)) throw bad(`the host ${JSON.stringify(host)} is not a host name or IP address`);
  }
  if (port !== '') {
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) throw bad(`the port ${JSON.stringify(port)} is not 1..65535`);
    port = String(Number(port));
  }
  const portPart = port === '' || port === DEFAULT_PORT[scheme] ? '' : `:${port}`;
  return `${scheme}:${user === '' ? '' : `${user}@`}${host.toLowerCase()}${portPart}${params}${headers}`;
}
