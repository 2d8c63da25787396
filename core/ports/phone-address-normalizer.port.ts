/**
 * Turns the `address` of a telephony configuration's phone number into the normalized form used for
 * uniqueness and inbound matching (API.md section 5): `pstn` → E.164, `sip_uri` → lower-cased scheme and host
 * with the default port dropped, `sip_extension` → lower-cased text.
 *
 * How an address is classified (first rule that applies):
 * 1. starts with `sip:` or `sips:` (any case) → `sip_uri`;
 * 2. starts like a phone number → `pstn`, and must then parse as one: `+` (or full-width `＋`), `tel:` (its
 *    `;ext=` kept, other parameters dropped), or 7 or more digits (of any script: Arabic-Indic digits count)
 *    before an optional extension (`ext. 12`, `x12`, `#12`). Digits of other scripts become 0-9 and vanity letters
 *    of a `+` number become keypad digits (`+1 800 FLOWERS`), as libphonenumber does;
 * 3. anything else (`1001`, `alice`, `Reception-2`) → `sip_extension`.
 */
export const PhoneAddressNormalizer = Symbol.for('callplane.PhoneAddressNormalizer');

export type AddressType = 'pstn' | 'sip_uri' | 'sip_extension';

export interface NormalizedAddress {
  addressType: AddressType;
  /** A `pstn` address: E.164 without its extension. */
  addressNormalized: string;
  /** The extension digits of a `pstn` address written with one (`+1 650 253 0000 ext. 1234` → `1234`); else null. */
  extension: string | null;
}

export interface PhoneAddressNormalizer {
  /**
   * Classifies and normalizes `address`. `countryCode` (ISO 3166-1 alpha-2, any case) is used only for a
   * `pstn` address written without `+` (national or `00`/`011`-prefixed form) and is required then.
   * Pure and idempotent: normalizing a normalized address gives it back unchanged.
   *
   * Throws `InputError('invalid_phone_number', detail)` when the address is empty, when an address that starts
   * like a phone number is not a possible number (or needs a country code that is missing or unknown), or when a `sip:`/`sips:`
   * address is not a well-formed SIP URI. Never throws for an extension.
   */
  normalize(address: string, countryCode?: string | null): NormalizedAddress;
}
