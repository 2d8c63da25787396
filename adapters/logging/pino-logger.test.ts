import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { PinoLogger } from './pino-logger.js';

function capture(extra: string[] = []) {
  const lines: string[] = [];
  const destination = new Writable({ write(c, _e, cb) { lines.push(String(c)); cb(); } });
  return { lines, log: PinoLogger.create({ level: 'debug', extraSensitive: extra, destination }) };
}

describe('PinoLogger redaction', () => {
  it('redacts secrets at the top level, nested, in headers and in provider configs', () => {
    const { lines, log } = capture(['webhook_public_key_secret']);
    log.child({ request_id: 'r1' }).info(
      {
        password: 'p1', token: 't1', api_key: 'k1',
        req: { headers: { authorization: 'Bearer t2', 'x-api-key': 'k2', 'x-twilio-signature': 's1' } },
        body: { auth_token: 'a1' },
        config: { app_password: 'ap1', account_sid: 'ACvisible' },
        nested: { credentials: { auth_token: 'a2' } },
        webhook_public_key_secret: 'extra1',
      },
      'hello',
    );
    const out = lines.join('');
    for (const secret of ['p1', 't1', 'k1', 't2', 'k2', 's1', 'a1', 'ap1', 'a2', 'extra1']) expect(out).not.toContain(`"${secret}"`);
    expect(out).toContain('ACvisible');
    expect(JSON.parse(out)).toMatchObject({ level: 'info', msg: 'hello', request_id: 'r1', password: '[redacted]' });
  });
});
