import { describe, expect, it } from '@jest/globals';
import { HmacUrlSigner } from '../../adapters/crypto/node-crypto.js';
import { CallUrls, inboundWebhookUrl } from './call-urls.js';
import { MediaTokens } from './media-token.js';

describe('CallUrls: the one builder of the URLs a provider is given', () => {
  const tokens = new MediaTokens(new HmacUrlSigner('call-urls-test-secret-0123456789abcdef!!'), { now: () => new Date('2026-11-24T10:00:00Z') }, 900);
  const urls = new CallUrls('https://cp.example.test/', tokens);

  it('builds inbound, status and answer URLs under /api/v1/telephony/<provider> (a trailing slash of the public URL dropped)', () => {
    expect(urls.inbound('twilio')).toBe('https://cp.example.test/api/v1/telephony/twilio/inbound');
    expect(inboundWebhookUrl('https://cp.example.test//', 'twilio')).toBe('https://cp.example.test/api/v1/telephony/twilio/inbound');
    expect(urls.status('vonage', 42)).toBe('https://cp.example.test/api/v1/telephony/vonage/status/42');
    expect(urls.answer('plivo', 42)).toBe('https://cp.example.test/api/v1/telephony/plivo/answer/42');
  });

  it('gives every media URL a token valid for exactly that provider and run', () => {
    const media = new URL(urls.media('telnyx', 42));
    expect(`${media.origin}${media.pathname}`).toBe('wss://cp.example.test/api/v1/telephony/telnyx/media/42');
    const token = media.searchParams.get('token');
    expect(tokens.verify('telnyx', 42, token)).toBe('valid');
    expect(tokens.verify('telnyx', 43, token)).toBe('invalid');
    expect(tokens.verify('vonage', 42, token)).toBe('invalid');
    const all = urls.forCall('vonage', 7);
    expect(all.statusCallbackUrl).toBe('https://cp.example.test/api/v1/telephony/vonage/status/7');
    expect(all.answerUrl).toBe('https://cp.example.test/api/v1/telephony/vonage/answer/7');
    expect(tokens.verify('vonage', 7, new URL(all.mediaUrl).searchParams.get('token'))).toBe('valid');
    expect(new CallUrls('http://localhost:8080', tokens).media('simulator', 1)).toMatch(/^ws:\/\/localhost:8080\/api\/v1\/telephony\/simulator\/media\/1\?token=\d+\.[0-9a-f]{64}$/);
  });
});
