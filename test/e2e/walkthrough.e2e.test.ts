/**
 * The README walk-through as a new user runs it: examples/walkthrough.sh (curl + node) against the built service
 * (`node dist/http/main.js`, built by `npm test`) on a fresh data directory, on the simulator.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { packageRoot } from '../../plugins/version.js';
import { spawnService, type SpawnedService } from '../support/process.js';

const examples = join(packageRoot(), 'examples');

describe('README walk-through (examples/)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callplane-walkthrough-'));
  let service: SpawnedService | null = null;
  afterAll(async () => {
    if (service) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('ships agent.json as the example workflow and contacts.csv with simulator numbers', () => {
    const agent = JSON.parse(readFileSync(join(examples, 'agent.json'), 'utf8'));
    expect(agent.workflow_definition).toEqual(exampleWorkflowDefinition);
    const csv = readFileSync(join(examples, 'contacts.csv'), 'utf8');
    expect(csv.split('\n')[0]).toBe('phone_number,first_name,appointment_time');
  });

  it('runs end to end: agent, simulator configuration, upload, campaign completed, runs and usage', async () => {
    service = await spawnService({ CALLPLANE_DATA_DIR: dir, LOG_LEVEL: 'warn' });
    const result = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn('bash', [join(examples, 'walkthrough.sh')], {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CALLPLANE_URL: service!.url, WALKTHROUGH_TIMEOUT: '90' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += String(d)));
      child.stderr.on('data', (d) => (out += String(d)));
      child.once('close', (code) => resolve({ code, out })); // after its output was read to the end
    });
    expect(result.out).toContain('state=completed processed_rows=5/5');
    expect(result.code).toBe(0);
    for (const disposition of ['busy', 'no_answer', 'voicemail']) expect(result.out).toMatch(new RegExp(`completed ${disposition}\\n`));
    expect(result.out).toContain('runs in the usage report: 5');
  }, 120_000);
});
