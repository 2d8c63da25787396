import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { packageRoot } from '../../plugins/version.js';

/** The built entry points (`npm test` builds before jest runs). */
export function distFile(rel: string): string {
  const file = join(packageRoot(), 'dist', rel);
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first (npm test does)`);
  return file;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface SpawnedService {
  child: ChildProcess;
  url: string;
  stdout: string[];
  stderr: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node dist/http/main.js` with `env` and waits until /health answers. */
export async function spawnService(env: Record<string, string>, timeoutMs = 20_000): Promise<SpawnedService> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, [distFile('http/main.js')], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'info', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout!.on('data', (d) => stdout.push(String(d)));
  child.stderr!.on('data', (d) => stderr.push(String(d)));
  // 'close', not 'exit': at 'exit' the child's last output may still be in its pipes (a busy machine made a
  // test that reads the final log line right after the exit miss it)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  let done = false;
  void exited.then(() => (done = true));
  while (Date.now() < deadline && !done) {
    try {
      const r = await fetch(`${url}/api/v1/health`);
      if (r.status === 200) return { child, url, stdout, stderr, exited };
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`service did not start: ${stderr.join('')}`);
}

/** Runs a built CLI command to completion. */
export function runNode(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.once('close', (code) => resolve({ code, stdout, stderr })); // after its output was read to the end
  });
}
