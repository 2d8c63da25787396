import { describe, expect, it } from '@jest/globals';
import { InputError } from '../../core/errors.js';
import { LibphonenumberNormalizer } from './libphonenumber-normalizer.js';

const normalizer = new LibphonenumberNormalizer();

function rejects(address: string, countryCode?: string | null, n = normalizer): string {
  try {
    n.normalize(address, countryCode);
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).code).toBe('invalid_phone_number');
    return (error as InputError).detail;
  }
  throw new Error(`expected ${address} to be refused`);
}

describe('LibphonenumberNormalizer: pstn', () => {
  it.each([
    ['+14155550100', null, '+14155550100'],
    ['+1 (415) 555-0100', undefined, '+14155550100'],
    ['  +44 20 7946 0018 ', null, '+442079460018'],
    ['+33.1.23.45.67.89', null, '+33123456789'],
    ['+91 98765/43210', null, '+919876543210'],
    ['4155550100', 'US', '+14155550100'],
    ['(415) 555-0100', 'us', '+14155550100'],
    ['020 7946 0018', 'GB', '+442079460018'],
    ['0049 30 123456', 'DE', '+4930123456'],
    ['011 44 20 7946 0018', 'US', '+442079460018'],
    ['98765 43210', 'IN', '+919876543210'],
    ['+4930123456', 'US', '+4930123456'], // a + number ignores country_code
    ['tel:+1-415-555-0100', null, '+14155550100'],
    ['TEL:+1-415-555-0100;phone-context=example.com', null, '+14155550100'],
    ['tel:415-555-0100', 'US', '+14155550100'],
  ])('%s (country %s) → %s', (address, country, expected) => {
    expect(normalizer.normalize(address, country)).toEqual({ addressType: 'pstn', addressNormalized: expected, extension: null });
  });

  it('accepts fictional but possible numbers by default, refuses them when strict', () => {
    expect(normalizer.normalize('+1 415 555 0123').addressNormalized).toBe('+14155550123');
    expect(normalizer.normalize('+15555550123').addressNormalized).toBe('+15555550123');
    const strict = new LibphonenumberNormalizer({ strictness: 'valid' });
    expect(strict.normalize('+44 20 7946 0018').addressNormalized).toBe('+442079460018');
    expect(rejects('+15555550123', null, strict)).toMatch(/not a valid phone number/);
  });

  it('refuses numbers that are not possible', () => {
    expect(rejects('+1234')).toBe('"+1234" is not a valid phone number');
    expect(rejects('+')).toMatch(/not a valid phone number/);
    expect(rejects('+999 123456789')).toMatch(/not a valid phone number/); // no such country code
    expect(rejects('+1 415 555 0100 1234 5678')).toMatch(/not a valid phone number/);
    expect(rejects('12345678901234', 'US')).toBe('"12345678901234" is not a valid phone number for country US');
  });

  it('needs a known country_code for numbers without +', () => {
    expect(rejects('4155550100')).toMatch(/no country prefix.*country_code/);
    expect(rejects('415 555 0100', '  ')).toMatch(/no country prefix/);
    expect(rejects('4155550100', 'ZZ')).toBe('unknown country_code "ZZ"');
    expect(rejects('4155550100', 'USA')).toBe('unknown country_code "USA"');
    expect(rejects('tel:4155550100')).toMatch(/no country prefix/);
  });

  it('is idempotent on its output', () => {
    for (const [address, country] of [['(415) 555-0100', 'US'], ['+44 20 7946 0018', null]] as const) {
      const once = normalizer.normalize(address, country).addressNormalized;
      expect(normalizer.normalize(once).addressNormalized).toBe(once);
    }
  });
});

describe('LibphonenumberNormalizer: what starts like a phone number is parsed as one (issue 10)', () => {
  it.each([
    ['+1 650 253 0000 ext. 1234', null, '+16502530000', '1234'],
    ['+1 (650) 253-0000 x77', null, '+16502530000', '77'],
    ['+44 20 7946 0018 #12', null, '+442079460018', '12'],
    ['+1 650 253 0000 extension 55', null, '+16502530000', '55'],
    ['+1 650 253 0000;ext=9', null, '+16502530000', '9'],
    ['tel:+1-650-253-0000;ext=456', null, '+16502530000', '456'],
    ['TEL:+1-650-253-0000;ext=456;phone-context=example.com', null, '+16502530000', '456'],
    ['650 253 0000 ext. 1234', 'US', '+16502530000', '1234'],
    ['+1 650 253 0000', null, '+16502530000', null],
  ])('%s (country %s) keeps its extension: %s + %s', (address, country, e164, extension) => {
    expect(normalizer.normalize(address, country)).toEqual({ addressType: 'pstn', addressNormalized: e164, extension });
  });

  it('converts vanity letters and digits of other scripts as libphonenumber does', () => {
    expect(normalizer.normalize('+1 800 FLOWERS')).toEqual({ addressType: 'pstn', addressNormalized: '+18003569377', extension: null });
    expect(normalizer.normalize('+1-800-flowers ext. 7')).toEqual({ addressType: 'pstn', addressNormalized: '+18003569377', extension: '7' });
    // Arabic-Indic and Extended Arabic-Indic (Persian) digits, a full-width plus
    expect(normalizer.normalize('+١ ٦٥٠ ٢٥٣ ٠٠٠٠').addressNormalized).toBe('+16502530000');
    expect(normalizer.normalize('+۴۴ ۲۰ ۷۹۴۶ ۰۰۱۸').addressNormalized).toBe('+442079460018');
    expect(normalizer.normalize('٠٢٠ ٧٩٤٦ ٠٠١٨', 'GB')).toEqual({ addressType: 'pstn', addressNormalized: '+442079460018', extension: null });
    expect(normalizer.normalize('＋1 650 253 0000').addressNormalized).toBe('+16502530000');
  });

  it('refuses what starts like a phone number but does not parse, instead of keeping it as an extension', () => {
    expect(rejects('+1abc')).toBe('"+1abc" is not a valid phone number');
    expect(rejects('+1 800 FL')).toMatch(/not a valid phone number/);
    expect(rejects('tel:+1-650;ext=456')).toMatch(/not a valid phone number/);
    expect(rejects('+١٢٣')).toMatch(/not a valid phone number/);
    expect(rejects('٦٥٠ ٢٥٣ ٠٠٠٠')).toMatch(/no country prefix/);
  });

  it('keeps PBX extensions as sip_extension', () => {
    for (const x of ['1001', 'desk-abc', '*97', 'Reception-2', '10-01']) {
      expect(normalizer.normalize(x, 'US').addressType).toBe('sip_extension');
    }
  });
});

describe('LibphonenumberNormalizer: sip_uri', () => {
  it.each([
    ['sip:Alice@Example.COM', 'sip:Alice@example.com'],
    ['SIP:alice@example.com:5060', 'sip:alice@example.com'],
    ['sips:Bob@Example.com:5061', 'sips:Bob@example.com'],
    ['sips:bob@example.com:5060', 'sips:bob@example.com:5060'],
    ['sip:bob@example.com:5061', 'sip:bob@example.com:5061'],
    ['sip:bob@example.com:05080', 'sip:bob@example.com:5080'],
    ['sip:+14155550100@Trunk.Example.com;user=phone', 'sip:+14155550100@trunk.example.com;user=phone'],
    ['sip:1001@10.0.0.5:5060;transport=TCP?Subject=Hi', 'sip:1001@10.0.0.5;transport=TCP?Subject=Hi'],
    ['sip:Example.com', 'sip:example.com'],
    ['sip:alice@[2001:DB8::1]:5060', 'sip:alice@[2001:db8::1]'],
    ['sip:alice@[2001:db8::1]:5070', 'sip:alice@[2001:db8::1]:5070'],
    ['sip:alice:secret@example.com', 'sip:alice:secret@example.com'],
    ['  sip:alice@example.com  ', 'sip:alice@example.com'],
  ])('%s → %s', (address, expected) => {
    expect(normalizer.normalize(address)).toEqual({ addressType: 'sip_uri', addressNormalized: expected, extension: null });
  });

  it('is idempotent on its output', () => {
    const once = normalizer.normalize('SIPS:Carol@Example.org:5061;transport=tls').addressNormalized;
    expect(once).toBe('sips:Carol@example.org;transport=tls');
    expect(normalizer.normalize(once).addressNormalized).toBe(once);
  });

  it.each([
    ['sip:', /host is missing/],
    ['sip:@example.com', /user part/],
    ['sip:alice@', /host is missing/],
    ['sip:alice@exa mple.com', /whitespace/],
    ['sip:alice@example.com:99999', /port/],
    ['sip:alice@example.com:abc', /port/],
    ['sip:alice@-bad-.com', /host/],
    ['sip:alice@[2001:db8::1', /IPv6/],
    ['sip:alice@[zz::1]', /IPv6/],
  ])('refuses %s', (address, message) => {
    expect(rejects(address)).toMatch(message);
  });
});

describe('LibphonenumberNormalizer: sip_extension', () => {
  it.each([
    ['1001', '1001'],
    ['100', '100'],
    ['123456', '123456'], // 6 digits: still an extension
    [' Reception-2 ', 'reception-2'],
    ['Alice', 'alice'],
    ['alice@Example.com', 'alice@example.com'],
    ['*97', '*97'],
    ['10-01', '10-01'],
  ])('%s → %s', (address, expected) => {
    expect(normalizer.normalize(address, 'US')).toEqual({ addressType: 'sip_extension', addressNormalized: expected, extension: null });
  });

  it('treats 7 or more digits as pstn', () => {
    expect(normalizer.normalize('555 1234', 'IS')).toEqual({ addressType: 'pstn', addressNormalized: '+3545551234', extension: null });
    // a 7-digit US local number is pstn-looking, but not possible without its area code
    expect(rejects('555-0100', 'US')).toBe('"555-0100" is not a valid phone number for country US');
    expect(rejects('5550100')).toMatch(/country_code/);
  });

  it('refuses an empty address', () => {
    expect(rejects('')).toBe('address is empty');
    expect(rejects('   ')).toBe('address is empty');
  });
});
