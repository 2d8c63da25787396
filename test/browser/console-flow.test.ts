/**
 * The README walk-through in the web console, in a real browser (Debian's Chromium through playwright-core):
 * sign up, sign out and in → an openai AI service on the fake OpenAI server → an agent from the example, its model
 * picked, a node edited (a refused definition marks the node) → the test chat streamed to the endCall node with
 * will_attend extracted → a simulator telephony configuration → a campaign from examples/contacts.csv uploaded with
 * progress → started, counters live until completed → a run's page playing its recording. Screenshots of each step
 * go to test-artifacts/browser/.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import WebSocket from 'ws';
import { MediaTokens } from '../../core/calls/media-token.js';
import { packageRoot } from '../../plugins/version.js';
import { FakeOpenAiServer } from '../fakes/openai/fake-openai-server.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { artifactsDir, browserSkipReason, launchBrowser, type LaunchedBrowser } from './browser.js';

// page.evaluate callbacks run in the browser
declare const document: any;
declare const sessionStorage: any;
declare const HTMLAudioElement: any;

const skip = browserSkipReason();
const suite = skip ? describe.skip : describe;
if (skip) process.stderr.write(`browser tests skipped: ${skip}\n`);

const API_KEY = 'sk-browser-test-5a1c9e';
const EMAIL = 'ops@example.com';
const PASSWORD = 'console password';

/** One second of a 440 Hz tone as μ-law bytes (what a simulated caller's line carries). */
function mulawTone(ms: number): Buffer {
  const out = Buffer.alloc((8000 * ms) / 1000);
  for (let i = 0; i < out.length; i++) {
    const s = Math.round(Math.sin((2 * Math.PI * 440 * i) / 8000) * 8000);
    const sign = s < 0 ? 0x80 : 0;
    let m = Math.min(Math.abs(s), 32635) + 132;
    let exp = 7;
    for (let mask = 0x4000; (m & mask) === 0 && exp > 0; mask >>= 1) exp--;
    const mant = (m >> (exp + 3)) & 0x0f;
    out[i] = ~(sign | (exp << 4) | mant) & 0xff;
  }
  return out;
}

suite(`web console in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let svc: TestService;
  let fake: FakeOpenAiServer;
  let b: LaunchedBrowser;
  let page: Page;
  let dataDir: string;
  const shots = artifactsDir();
  const errors: string[] = [];
  let runId = 0; // the campaign run with a recording
  const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  /** A step: on failure the page is saved as FAILED-<n>.png beside the other screenshots. */
  let stepNo = 0;
  const step = (name: string, body: () => Promise<void>, timeout?: number) =>
    it(name, async () => {
      const n = ++stepNo;
      try {
        await body();
      } catch (e) {
        await shot(`FAILED-${n}`).catch(() => undefined);
        throw e;
      }
    }, timeout ?? 45_000);
  const api = async (path: string) => {
    const token = await page.evaluate(() => sessionStorage.getItem('callplane.token'));
    const r = await fetch(`${svc.url}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
    return (await r.json()) as any;
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'callplane-browser-'));
    fake = await FakeOpenAiServer.start({ apiKey: API_KEY });
    svc = await startTestService({ env: { CALLPLANE_ALLOW_PRIVATE_NETWORK: 'true', CALLPLANE_DATA_DIR: dataDir, LOG_LEVEL: 'warn' } });
    b = await launchBrowser();
    page = await b.context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('dialog', (d) => void d.accept()); // the confirm() before revoking or deleting
  }, 30_000);

  afterAll(async () => {
    await b?.close();
    await svc?.close();
    await fake?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  step('signs up, signs out and signs in again', async () => {
    await page.goto(svc.url + '/');
    await page.getByRole('heading', { name: 'Sign in to Callplane' }).waitFor();
    await page.getByRole('button', { name: 'New here? Create an account' }).click();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Organization name').fill('Brightsmile');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('heading', { name: 'Agents', exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/agents');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Callplane' }).waitFor();
    await page.getByLabel('Password').fill('wrong password');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'invalid_credentials' }).waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Agents', exact: true }).waitFor();
    await shot('01-signed-in');
  });

  step('creates an API key shown once, then revokes it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel('New API key').inputValue();
    expect(key).toMatch(/^cpk_[\w-]{43}$/);
    const row = page.locator('tr').filter({ hasText: key.slice(0, 12) });
    await row.getByText('active').waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByLabel('New API key').count()).toBe(0); // never shown again
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByText(/^revoked/).waitFor();
    expect((await fetch(`${svc.url}/api/v1/auth/me`, { headers: { 'x-api-key': key } })).status).toBe(401);
  });

  step('adds an openai AI service from the provider form (the key as a password field)', async () => {
    await page.getByRole('link', { name: 'AI services' }).click();
    await page.getByLabel('Provider').selectOption('openai');
    await page.locator('#ai-new-name').fill('Fake OpenAI');
    const key = page.locator('#ai-new-f-api_key');
    expect(await key.getAttribute('type')).toBe('password');
    await key.fill(API_KEY);
    await page.locator('#ai-new-f-base_url').fill(fake.baseUrl);
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.locator('.items li').filter({ hasText: 'Fake OpenAI' }).waitFor();
    // editing shows the key masked and saving it unchanged keeps it
    await page.getByRole('button', { name: 'Edit' }).click();
    expect(await page.locator('.items [id$="-f-api_key"]').inputValue()).toMatch(/^\*+1c9e$/);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Edit' }).waitFor();
    await shot('02-ai-service');
  });

  step('creates the example agent, picks its model, marks a refused node and saves a new version', async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByLabel('Name').fill('Dental reminders');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'Dental reminders' }).waitFor();
    expect(await page.locator('svg.graph g.node').count()).toBe(7);
    expect(await page.locator('svg.graph g.edge').count()).toBeGreaterThan(3);

    await page.getByRole('tab', { name: 'Configuration' }).click();
    await page.getByLabel('Service').first().selectOption({ label: 'Fake OpenAI (openai)' });
    await page.locator('#llm-model').fill('gpt-4o-mini');
    const [saved] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'PUT' && /\/api\/v1\/workflow\/\d+$/.test(r.url())),
      page.getByRole('button', { name: 'Save configuration' }).click(),
    ]);
    expect(saved.status()).toBe(200);
    expect((await saved.json()).workflow_configurations.llm).toMatchObject({ model: 'gpt-4o-mini' });

    await page.getByRole('tab', { name: 'Graph & test chat' }).click();
    await page.locator('g[data-node="confirm"]').click();
    await page.locator('#node-prompt').fill(' ');
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await page.locator('g[data-node="confirm"].invalid').waitFor();
    await page.getByRole('alert', { name: 'Problems with this node' }).waitFor();
    await shot('03-refused-node');
    await page.locator('#node-prompt').fill('Remind {{first_name}} of the cleaning on {{appointment_time}}; ask whether they can make it.');
    // an edge through the keyboard: focus it and press Enter
    await page.locator('g[data-edge]').first().focus();
    await page.keyboard.press('Enter');
    await page.locator('#edge-condition').waitFor();
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await page.getByText('v2 ·').waitFor();
    expect(await page.locator('g.node.invalid').count()).toBe(0);
    await page.getByRole('tab', { name: 'Versions' }).click();
    await page.getByText('superseded').waitFor();
    await page.getByRole('button', { name: 'Archive' }).click();
    await page.locator('.title-row .badge.archived').waitFor();
    await page.getByRole('button', { name: 'Restore' }).click();
    await page.locator('.title-row .badge.active').waitFor();
    await page.getByRole('tab', { name: 'Graph & test chat' }).click();
  });

  step('chats to the endCall node with streamed replies, the current node highlighted and will_attend extracted', async () => {
    await page.getByText('Context for the chat').click();
    expect(JSON.parse(await page.getByLabel(/^Initial context/).inputValue())).toEqual({ first_name: '', appointment_time: '' });
    await page.getByLabel(/^Initial context/).fill(JSON.stringify({ first_name: 'Dana', appointment_time: 'Tuesday at 3pm' }));
    await page.getByRole('button', { name: 'Start chat' }).click();
    await page.locator('.msg.assistant').filter({ hasText: 'Am I speaking with Dana?' }).waitFor();
    expect(await page.locator('g[data-node="start"].current').count()).toBe(1);

    fake.reply(
      { text: 'Thank you.', toolCalls: [{ name: 'identity_confirmed', arguments: '{}' }] },
      { text: 'Your cleaning is on Tuesday at 3pm. Can you still make it?', eventDelayMs: 15 },
    );
    await page.getByLabel('Your message').fill('Yes, this is Dana.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('g[data-node="confirm"].current').waitFor();
    await page.locator('.msg.assistant').filter({ hasText: 'Can you still make it?' }).waitFor();
    await shot('04-chat-confirm');

    fake.reply({ toolCalls: [{ name: 'will_attend', arguments: '{}' }] }, { text: 'Wonderful. Please arrive ten minutes early. Goodbye!' });
    fake.replyStructured({ text: '{"will_attend": true}' });
    await page.getByLabel('Your message').fill("Yes, I'll be there.");
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Ended · disposition appointment_confirmed').waitFor();
    const values = page.getByLabel('Extracted values');
    await values.getByText('will_attend').waitFor();
    expect(await values.locator('dd').first().textContent()).toBe('true');
    expect(await page.getByLabel('Your message').count()).toBe(0);
    await shot('05-chat-ended');
    // restart begins a new chat at the start node
    await page.getByRole('button', { name: 'Restart' }).click();
    await page.locator('g[data-node="start"].current').waitFor();
  });

  step('adds a simulator telephony configuration as the default for outbound calls', async () => {
    await page.getByRole('link', { name: 'Telephony' }).click();
    await page.getByLabel('Provider').selectOption('simulator');
    await page.locator('#tel-new-name').fill('Simulator');
    await page.locator('#tel-new-f-ring_ms').fill('100');
    await page.locator('#tel-new-f-talk_ms').fill('4000');
    await page.getByLabel('Default for outbound calls').check();
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const config = page.locator('.items li').filter({ hasText: 'default outbound' });
    await config.waitFor();
    // a number whose inbound calls reach the agent
    await config.getByText('Phone numbers (0)').click();
    await config.getByLabel('Number or SIP address').fill('+1 555 010 0099');
    await config.getByLabel('Inbound agent').selectOption({ label: 'Dental reminders' });
    await config.getByRole('button', { name: 'Add number' }).click();
    const number = config.getByLabel('Inbound agent of +15550100099');
    await number.waitFor();
    expect(await number.locator('option:checked').textContent()).toBe('Dental reminders');
    expect(await config.getByRole('alert').count()).toBe(0); // the simulator's provider_sync is ok
    await shot('06-telephony');
  });

  step('uploads the CSV, starts the campaign, follows its counters to completed and plays a recorded run', async () => {
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByLabel('Name *').fill('Reminders');
    await page.getByLabel('Agent *').selectOption({ label: 'Dental reminders' });
    await page.getByLabel(/^Contacts/).setInputFiles(join(packageRoot(), 'examples', 'contacts.csv'));
    await page.getByLabel('Retry calls that did not connect').uncheck();
    await page.getByRole('button', { name: 'Upload and create' }).click();
    await page.getByRole('heading', { name: 'Reminders' }).waitFor();
    expect(await page.locator('[data-counter="total_rows"]').textContent()).toBe('5');
    await page.getByRole('button', { name: 'Start' }).click();
    await page.locator('.badge.running').first().waitFor();

    // a simulated caller's audio on one answered call's media stream, so the run has a recording
    const campaignId = Number(new URL(page.url()).pathname.split('/').pop());
    runId = 0;
    for (let i = 0; i < 100 && !runId; i++) {
      const runs = await api(`/campaign/${campaignId}/runs?limit=20`);
      runId = runs.runs?.find((r: any) => r.initial_context?.phone_number?.endsWith('10') && r.status !== 'queued')?.id ?? 0;
      if (!runId) await new Promise((r) => setTimeout(r, 50));
    }
    expect(runId).toBeGreaterThan(0);
    const token = svc.container.get(MediaTokens).issue('simulator', runId);
    const ws = new WebSocket(`${svc.url.replace(/^http/, 'ws')}/api/v1/telephony/simulator/media/${runId}?token=${encodeURIComponent(token)}`);
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    ws.send(JSON.stringify({ event: 'start' }));
    const tone = mulawTone(1200);
    for (let at = 0; at < tone.length; at += 160) ws.send(tone.subarray(at, at + 160), { binary: true });
    ws.send(JSON.stringify({ event: 'stop' }));
    ws.close();

    // pause while calls are in flight, change a setting, resume
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.locator('.title-row .badge.paused').waitFor();
    await page.getByLabel('Calls at once (1–100)').fill('3');
    const [patched] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'PATCH'),
      page.getByRole('button', { name: 'Save settings' }).click(),
    ]);
    expect((await patched.json()).max_concurrency).toBe(3);
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('.title-row .badge.running, .title-row .badge.completed').first().waitFor();

    await page.locator('.badge.completed').first().waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-counter="processed_rows"]').textContent()).toBe('5');
    expect(await page.getByLabel('Contacts done').getAttribute('value')).toBe('5');
    await page.getByText('campaign_completed').first().waitFor();
    for (const event of ['campaign_paused', 'campaign_resumed']) await page.getByLabel('Campaign log').getByText(event).first().waitFor();
    await shot('07-campaign-completed');

    // the player streams the recording from its signed link on the page's origin, in byte ranges (206)
    const recordingAnswers: number[] = [];
    const onResponse = (r: { url(): string; status(): number }) => {
      if (new URL(r.url()).pathname.endsWith('/recording.wav')) recordingAnswers.push(r.status());
    };
    page.on('response', onResponse);
    await page.getByRole('link', { name: `#${runId}`, exact: true }).click();
    await page.getByRole('heading', { name: new RegExp(`Run #${runId}`) }).waitFor();
    const audio = page.getByLabel('Call recording');
    await audio.waitFor();
    await page.waitForFunction(() => document.querySelector('audio')?.readyState >= 1);
    const duration = await page.evaluate(() => document.querySelector('audio')!.duration);
    expect(duration).toBeGreaterThan(1);
    expect(await audio.getAttribute('src')).toMatch(/^\/api\/v1\/files\/runs\/\d+\/\d+\/recording\.wav\?expires=\d+&signature=/);
    page.off('response', onResponse);
    expect(recordingAnswers).toContain(206);
    await page.evaluate(() => document.querySelector('audio')!.play());
    await page.waitForFunction(() => document.querySelector('audio')!.currentTime > 0.2);
    await shot('08-run-recording');
  }, 60_000);

  step('shows the transcript beside the recording, seeks to a clicked turn and shows each reply latency', async () => {
    // this simulator run has no voice agent, so its transcript and turn logs are given to the page as the API
    // documents them (API.md 13): the run answer gains a transcript_url and `turn` log entries
    const turns = [
      { role: 'assistant', text: 'Hi, this is Ava from Brightsmile Dental.', node_id: 'start', start_ms: 0, end_ms: 400, interrupted: false },
      { role: 'user', text: 'Yes, speaking.', node_id: 'start', start_ms: 450, end_ms: 700, interrupted: false },
      { role: 'assistant', text: 'Your cleaning is on Tuesday.', node_id: 'confirm', start_ms: 900, end_ms: 1150, interrupted: false },
    ];
    await page.route(`**/api/v1/workflow/*/runs/${runId}`, async (route) => {
      const res = await route.fetch();
      const run = await res.json();
      run.transcript_url = `${svc.url}/api/v1/files/runs/test/${runId}/transcript.json?signature=x`;
      run.logs.entries.push({ ts: new Date().toISOString(), event: 'turn', message: 'Agent replied', details: { end_of_speech_to_first_audio: 640, stt: 120, llm_first_token: 310, tts_first_audio: 150 } });
      await route.fulfill({ response: res, json: run });
    });
    await page.route('**/api/v1/files/runs/test/**', (route) => route.fulfill({ json: { turns } }));
    try {
      await page.reload();
      const transcript = page.getByLabel('Transcript');
      await transcript.getByText('Your cleaning is on Tuesday.').waitFor();
      await transcript.getByText('replied in 640 ms (stt 120 · llm 310 · tts 150)').waitFor();
      await page.waitForFunction(() => document.querySelector('audio')?.readyState >= 1);
      await page.getByRole('button', { name: 'Play from 0:00: caller' }).click();
      await page.waitForFunction(() => Math.abs(document.querySelector('audio').currentTime - 0.45) < 0.3);
      // the turn under the playhead is outlined (paused inside the caller's turn so the check cannot race it)
      await page.evaluate(() => {
        const audio = document.querySelector('audio');
        audio.pause();
        audio.currentTime = 0.5;
      });
      await page.locator('.turn.user.playing').waitFor();
      await shot('08b-run-transcript');
    } finally {
      await page.unrouteAll();
    }
  });

  step('lists the runs with usage totals and filters them', async () => {
    await page.getByRole('link', { name: 'Runs & usage' }).click();
    await page.locator('[data-total="count"]').filter({ hasText: '5' }).waitFor();
    await page.getByLabel('Dispositions (comma separated)').fill('busy');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('[data-total="count"]').filter({ hasText: /^1$/ }).waitFor();
    await page.getByText('Page 1 of 1 · 1 in all').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = readFileSync((await download.path())!, 'utf8').trim().split('\n');
    expect(csv).toHaveLength(2); // the header and the one busy run
    expect(csv[1]).toContain('busy');
    await shot('09-runs');
  });

  step('labels every form control on every screen (inputs, selects, text areas, buttons)', async () => {
    const screens = ['/agents', '/campaigns', '/runs', '/telephony', '/ai-services', '/webhooks', '/api-keys'];
    const agentId = (await api('/workflow')).workflows[0].id;
    for (const path of [...screens, `/agents/${agentId}`]) {
      await page.goto(svc.url + path);
      await page.locator('main h1').first().waitFor();
      await page.waitForFunction(() => !document.body.textContent.includes('Loading…'));
      const unlabeled = await page.evaluate(() =>
        [...document.querySelectorAll('input, select, textarea, button')]
          .filter((el: any) => !el.hidden && el.type !== 'hidden')
          .filter((el: any) => !(el.labels?.length || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') || (el.tagName === 'BUTTON' && el.textContent.trim())))
          .map((el: any) => el.outerHTML.slice(0, 120)),
      );
      expect({ path, unlabeled }).toEqual({ path, unlabeled: [] });
    }
  });

  step('subscribes a webhook endpoint, sends a test event, sees it fail and retries it to delivered', async () => {
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        received.push(body);
        res.statusCode = received.length === 1 ? 500 : 200; // the first attempt fails
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    try {
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByLabel('URL *').fill(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`);
      await page.getByLabel('campaign.completed').check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      expect(await page.getByLabel('Signing secret').inputValue()).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'Deliveries' }).click();
      await page.getByRole('button', { name: 'Send a test event' }).click();
      const row = page.locator('.deliveries tbody tr').first();
      await row.getByText('500').waitFor();
      await row.getByRole('button', { name: 'Retry' }).click();
      await row.locator('.badge.delivered').waitFor();
      expect(received.length).toBe(2);
      expect(JSON.parse(received[1]!).type).toBe('webhook.test');
      await shot('10-webhooks');
    } finally {
      await new Promise((r) => receiver.close(r));
    }
    expect(errors).toEqual([]);
  });
});
