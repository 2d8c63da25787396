/**
 * Turns the `address` of a telephony configuration's phone number into the normalized form used for
 * uniqueness and inbound matching (API.md section 5): `pstn` → E.164, `sip_uri` → lower-cased scheme and host
 * with the default port dropped, `sip_extension` → lower-cased text.
 *
 * How an address is classified (first rule that applies):
 * 1. starts with `sip:` or `sips:` (any case) → `sip_uri`;
 * 2. starts with `tel:` → `pstn` (the URI's parameters are dropped);
 * 3. after removing spaces, dashes, dots, slashes and parentheses it is `+` and digits, or 7 or more
 *    digits → `pstn`;
 * 4. anything else (`1001`, `alice`, `Reception-2`) → `sip_extension`.
 */
export const PhoneAddressNormalizer = Symbol.for('callplane.PhoneAddressNormalizer');

export type AddressType = 'pstn' | 'sip_uri' | 'sip_extension';

export interface NormalizedAddress {
  addressType: AddressType;
  addressNormalized: string;
}

export interface PhoneAddressNormalizer {
  /**
   * Classifies and normalizes `address`. `countryCode` (ISO 3166-1 alpha-2, any case) is used only for a
   * `pstn` address written without `+` (national or `00`/`011`-prefixed form) and is required then.
   * Pure and idempotent: normalizing a normalized address gives it back unchanged.
   *
   * Throws `InputError('invalid_phone_number', detail)` when the address is empty, when a `pstn` address is
   * not a possible number (or needs a country code that is missing or unknown), or when a `sip:`/`sips:`
   * address is not a well-formed SIP URI. Never throws for an extension.
   */
  normalize(address: string, countryCode?: string | null): NormalizedAddress;
}
