/**
 * PhoneAddressNormalizer over libphonenumber-js (its default, "min" metadata).
 *
 * A `pstn` number must be *possible* (right length for its country) by default, not *valid* (a known
 * allocated range): fictional numbers such as +1 415 555 01xx, which tests, demos and the simulator use, are
 * possible but not valid, and a provider knows better than a metadata snapshot whether a new range exists.
 * `{ strictness: 'valid' }` asks for the stricter check.
 */
import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { InputError } from '../../core/errors.js';
import type { NormalizedAddress, PhoneAddressNormalizer } from '../../core/ports/phone-address-normalizer.port.js';

export interface LibphonenumberNormalizerOptions {
  /** `possible` (default): right length for the country; `valid`: also inside a known number range. */
  strictness?: 'possible' | 'valid';
}

const SIP_SCHEME = /^(sips?):/i;
const TEL_SCHEME = /^tel:/i;
/** Punctuation people write inside phone numbers. */
const PHONE_PUNCTUATION = /[\s\-.()/\u00a0]/g;
const MIN_PSTN_DIGITS = 7;
const DEFAULT_PORT: Record<string, string> = { sip: '5060', sips: '5061' };
/** RFC 3261 hostname or IPv4 address. */
const HOSTNAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.?$/i;
const IPV6_REFERENCE = /^\[[0-9a-f:.]+\]$/i;

function invalid(detail: string): InputError {
  return new InputError('invalid_phone_number', detail);
}

export class LibphonenumberNormalizer implements PhoneAddressNormalizer {
  private readonly strictness: 'possible' | 'valid';

  constructor(options: LibphonenumberNormalizerOptions = {}) {
    this.strictness = options.strictness ?? 'possible';
  }

  normalize(address: string, countryCode?: string | null): NormalizedAddress {
    const text = typeof address === 'string' ? address.trim() : '';
    if (text === '') throw invalid('address is empty');

    const sip = SIP_SCHEME.exec(text);
    if (sip) return { addressType: 'sip_uri', addressNormalized: normalizeSipUri(sip[1].toLowerCase(), text.slice(sip[0].length), text) };

    if (TEL_SCHEME.test(text)) {
      const number = text.slice(4).split(';')[0];
      return { addressType: 'pstn', addressNormalized: this.toE164(number, countryCode, text) };
    }

    const compact = text.replace(PHONE_PUNCTUATION, '');
    if (/^\+\d*$/.test(compact) || (/^\d+$/.test(compact) && compact.length >= MIN_PSTN_DIGITS)) {
      return { addressType: 'pstn', addressNormalized: this.toE164(compact, countryCode, text) };
    }
    return { addressType: 'sip_extension', addressNormalized: text.toLowerCase() };
  }

  private toE164(number: string, countryCode: string | null | undefined, original: string): string {
    const compact = number.replace(PHONE_PUNCTUATION, '');
    let parsed;
    if (compact.startsWith('+')) {
      parsed = parsePhoneNumberFromString(compact);
    } else {
      if (countryCode === undefined || countryCode === null || countryCode.trim() === '') {
        throw invalid(
          `${JSON.stringify(original)} has no country prefix: start it with + (E.164, e.g. +14155550100) or set country_code`,
        );
      }
      const country = countryCode.trim().toUpperCase();
      if (!/^[A-Z]{2}$/.test(country) || !isSupportedCountry(country)) {
        throw invalid(`unknown country_code ${JSON.stringify(countryCode)}`);
      }
      parsed = parsePhoneNumberFromString(compact, { defaultCountry: country as CountryCode });
    }
    const acceptable = parsed && (this.strictness === 'valid' ? parsed.isValid() : parsed.isPossible());
    if (!parsed || !acceptable) {
      const where = compact.startsWith('+') ? '' : ` for country ${countryCode!.trim().toUpperCase()}`;
      throw invalid(`${JSON.stringify(original)} is not a valid phone number${where}`);
    }
    return parsed.number;
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
