import { describe, expect, it } from '@jest/globals';
import twilio from 'twilio';
import { computeTwilioSignature, verifyTwilioSignature } from './twilio-signature.js';

const TOKEN = '12345';
const URL_ = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const PARAMS = {
  CallSid: 'CA1234567890ABCDE',
  Caller: '+12349013030',
  Digits: '1234',
  From: '+12349013030',
  To: '+18005551212',
};
const EXPECTED = '0/KCTR6DLpKmkAf8muzZqo1nDgQ=';

describe('Twilio request signature', () => {
  it("matches Twilio's published test vector", () => {
    expect(computeTwilioSignature(TOKEN, URL_, PARAMS)).toBe(EXPECTED);
  });

  it('does not depend on the order the parameters arrive in', () => {
    const reversed = Object.fromEntries(Object.entries(PARAMS).reverse());
    expect(computeTwilioSignature(TOKEN, URL_, reversed)).toBe(EXPECTED);
  });

  it('verifies the vector and rejects any change of token, url, parameter or signature', () => {
    expect(verifyTwilioSignature(TOKEN, URL_, PARAMS, EXPECTED)).toBe(true);
    expect(verifyTwilioSignature('54321', URL_, PARAMS, EXPECTED)).toBe(false);
    expect(verifyTwilioSignature(TOKEN, URL_.replace('foo=1', 'foo=2'), PARAMS, EXPECTED)).toBe(false);
    expect(verifyTwilioSignature(TOKEN, URL_, { ...PARAMS, Digits: '1235' }, EXPECTED)).toBe(false);
    expect(verifyTwilioSignature(TOKEN, URL_, { ...PARAMS, Extra: '' }, EXPECTED)).toBe(false);
    expect(verifyTwilioSignature(TOKEN, URL_, PARAMS, EXPECTED.slice(0, -2))).toBe(false);
    expect(verifyTwilioSignature(TOKEN, URL_, PARAMS, '')).toBe(false);
    expect(verifyTwilioSignature(TOKEN, URL_, PARAMS, undefined)).toBe(false);
    expect(verifyTwilioSignature('', URL_, PARAMS, EXPECTED)).toBe(false);
  });

  it('accepts the URL with or without the default port, but not another port', () => {
    expect(verifyTwilioSignature(TOKEN, 'https://mycompany.com:443/myapp.php?foo=1&bar=2', PARAMS, EXPECTED)).toBe(true);
    const signedWithPort = computeTwilioSignature(TOKEN, 'https://mycompany.com:443/myapp.php?foo=1&bar=2', PARAMS);
    expect(verifyTwilioSignature(TOKEN, URL_, PARAMS, signedWithPort)).toBe(true);
    expect(verifyTwilioSignature(TOKEN, 'https://mycompany.com:8443/myapp.php?foo=1&bar=2', PARAMS, EXPECTED)).toBe(false);
  });

  it('agrees with twilio.validateRequest, including repeated parameters and unicode', () => {
    const cases: [string, Record<string, string | string[]>][] = [
      [URL_, PARAMS],
      ['https://cp.example.org/webhooks/twilio/status?run=7', { CallStatus: 'ringing', CallSid: 'CA9', AnsweredBy: 'human' }],
      ['https://cp.example.org/hook', { StatusCallbackEvent: ['ringing', 'answered', 'initiated'], Name: 'Zoë – ☎' }],
      ['http://localhost:3000/t', {}],
    ];
    for (const [url, params] of cases) {
      const sig = computeTwilioSignature('token-abc', url, params);
      expect(twilio.validateRequest('token-abc', sig, url, params)).toBe(true);
      expect(verifyTwilioSignature('token-abc', url, params, sig)).toBe(true);
      expect(twilio.validateRequest('token-abd', sig, url, params)).toBe(false);
    }
  });
});
