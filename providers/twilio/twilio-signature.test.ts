import { describe, expect, it } from '@jest/globals';
import twilio from 'twilio';
import { computeTwilioSignature, twilioBodyHash, verifyTwilioRequest, verifyTwilioSignature } from './twilio-signature.js';

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

  it('accepts the URL with or without the default port, and a URL received on another port that was signed without it (Twilio\'s rule)', () => {
    expect(verifyTwilioSignature(TOKEN, 'https://mycompany.com:443/myapp.php?foo=1&bar=2', PARAMS, EXPECTED)).toBe(true);
    const signedWithPort = computeTwilioSignature(TOKEN, 'https://mycompany.com:443/myapp.php?foo=1&bar=2', PARAMS);
    expect(verifyTwilioSignature(TOKEN, URL_, PARAMS, signedWithPort)).toBe(true);
    // a proxy in front of us listening on 8443 while Twilio signed the URL as configured, without a port
    expect(verifyTwilioSignature(TOKEN, 'https://mycompany.com:8443/myapp.php?foo=1&bar=2', PARAMS, EXPECTED)).toBe(true);
    expect(twilio.validateRequest(TOKEN, EXPECTED, 'https://mycompany.com:8443/myapp.php?foo=1&bar=2', PARAMS)).toBe(true);
    // the port is never the only thing that changes what was signed: another host or path still fails
    expect(verifyTwilioSignature(TOKEN, 'https://mycompany.org:8443/myapp.php?foo=1&bar=2', PARAMS, EXPECTED)).toBe(false);
    expect(verifyTwilioSignature(TOKEN, 'https://mycompany.com:8443/other.php?foo=1&bar=2', PARAMS, EXPECTED)).toBe(false);
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

describe("Twilio's published validator vectors (helper-library test suites)", () => {
  // token 12345, the documentation's URL and call parameters; each expected signature is the published one
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  const params = { CallSid: 'CA1234567890ABCDE', Caller: '+14158675309', Digits: '1234', From: '+14158675309', To: '+18005551212' };
  const cases: Array<[string, string, Record<string, string | string[]>, string]> = [
    ['the documented request', url, params, 'RSOYDt4T1cUTdK1PDd93/VVr8B8='],
    ['a repeated parameter with duplicates', url, { Sid: 'CA123', SidAccount: 'AC123', Digits: ['5678', '1234', '1234'] }, 'IK+Dwps556ElfBT0I3Rgjkr1wJU='],
    ['https received on port 1234, signed without it', url.replace('.com', '.com:1234'), params, 'RSOYDt4T1cUTdK1PDd93/VVr8B8='],
    ['http received on port 1234, signed with it', url.replace('.com', '.com:1234').replace('https', 'http'), params, 'Zmvh+3yNM1Phv2jhDCwEM3q5ebU='],
    ['https signed with :443', url, params, 'kvajT1Ptam85bY51eRf/AJRuM3w='],
    ['http signed with :80', url.replace('https', 'http'), params, '0ZXoZLH/DfblKGATFgpif+LLRf4='],
    ['user and password in the URL', 'https://user:pass@mycompany.com/myapp.php?foo=1&bar=2', params, 'CukzLTc1tT5dXEDIHm/tKBanW10='],
    ['a user in the URL', 'https://user@mycompany.com/myapp.php?foo=1&bar=2', params, '2YRLlVAflCqxaNicjMpJcSTgzSs='],
    ['credentials in the URL, signed with :443', 'https://user:pass@mycompany.com/myapp.php?foo=1&bar=2', params, 'ZQFR1PTIZXF2MXB8ZnKCvnnA+rI='],
  ];
  it.each(cases)('%s', (_name, received, p, signature) => {
    expect(verifyTwilioSignature('12345', received, p, signature)).toBe(true);
    expect(twilio.validateRequest('12345', signature, received, p)).toBe(true);
    expect(verifyTwilioSignature('12345', received, { ...p, Extra: 'x' }, signature)).toBe(false);
  });

  it("a ' in the query matches %27 either way (the URL as received, WHATWG-normalized, or legacy-quoted)", () => {
    const quoted = "https://example.com/path?test=param'WithQuote";
    const escaped = 'https://example.com/path?test=param%27WithQuote';
    for (const [signedFor, received] of [[quoted, escaped], [escaped, quoted], [quoted, quoted], [escaped, escaped]] as const) {
      const sig = computeTwilioSignature('s3cr3t', signedFor, {});
      expect(verifyTwilioSignature('s3cr3t', received, {}, sig)).toBe(true);
      expect(twilio.validateRequest('s3cr3t', sig, received, {})).toBe(true);
    }
    const other = computeTwilioSignature('s3cr3t', 'https://example.com/path?test=param', {});
    expect(verifyTwilioSignature('s3cr3t', 'https://example.com/path?test=param2', {}, other)).toBe(false);
  });

  it('a JSON body: the signature covers the URL with bodySHA256 and no parameters, and the body must hash to it', () => {
    const body = '{"property": "value", "boolean": true}';
    const hash = '0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620';
    expect(twilioBodyHash(body)).toBe(hash);
    const signedUrl = `${url}&bodySHA256=${hash}`;
    const signature = 'a9nBmqA0ju/hNViExpshrM61xv4=';
    const check = (over: Partial<Parameters<typeof verifyTwilioRequest>[0]> = {}) =>
      verifyTwilioRequest({ authToken: '12345', url: signedUrl, params: {}, rawBody: Buffer.from(body), signature, ...over });
    expect(check()).toBe(true);
    expect(twilio.validateRequestWithBody('12345', signature, signedUrl, body)).toBe(true);
    // the body is checked: another body under the same signed URL is refused (Twilio's validator agrees)
    expect(check({ rawBody: Buffer.from('{"property": "forged", "boolean": true}') })).toBe(false);
    expect(twilio.validateRequestWithBody('12345', signature, signedUrl, '{"property": "forged", "boolean": true}')).toBe(false);
    expect(check({ rawBody: undefined })).toBe(false);
    // JSON fields never count as form parameters of a bodySHA256 request
    expect(check({ params: { property: 'value' } })).toBe(true);
    expect(check({ signature: 'RSOYDt4T1cUTdK1PDd93/VVr8B8=' })).toBe(false);
    // on a non-default port too, like any other request
    expect(check({ url: signedUrl.replace('.com', '.com:8443') })).toBe(true);
    // without bodySHA256 the request is a form request: the documented form signature still verifies
    expect(verifyTwilioRequest({ authToken: '12345', url, params, rawBody: Buffer.from('x=1'), signature: 'RSOYDt4T1cUTdK1PDd93/VVr8B8=' })).toBe(true);
  });
});

