#!/usr/bin/env node
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import type { Db } from 'mongodb';
import { DomainError } from '../core/errors.js';
import { CreateUser } from '../core/identity/sign-up.use-case.js';
import { silentLogger } from '../core/ports/logger.port.js';
import { buildContainer } from '../plugins/composition-root.js';
import type { Lifecycle } from '../plugins/lifecycle.js';
import { ensureSecretKey, loadSettings, SettingsError } from '../plugins/settings.js';
import { LifecycleToken } from '../plugins/tokens.js';
import { isMainModule } from './is-main.js';

const USAGE = `usage:
  callplane serve [--role api|worker|all]
  callplane users create --email EMAIL --password PASSWORD [--name NAME] [--organization NAME]
  callplane migrate --from sqlite --to mongodb [--sqlite PATH] [--mongodb-uri URI] [--force]`;

/** What tests inject into the CLI (the migrate command's MongoDB connection). */
export interface CliDeps {
  openMongo?: (uri: string) => Promise<{ db: Db; close(): Promise<void> }>;
}

/** Runs one CLI command; returns the exit code. Output goes to the given writers (tests capture them). */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, out: (s: string) => void, err: (s: string) => void, deps: CliDeps = {}): Promise<number> {
  const [command, sub, ...rest] = argv;
  try {
    if (command === 'serve') {
      const { values } = parseArgs({ args: argv.slice(1), options: { role: { type: 'string' } }, strict: true });
      const { exitOnSignals, startService } = await import('./main.js');
      exitOnSignals(await startService(values.role ? { ...env, CALLPLANE_ROLE: values.role } : env));
      return -1; // keep running
    }
    if (command === 'users' && sub === 'create') {
      const { values } = parseArgs({
        args: rest,
        options: { email: { type: 'string' }, password: { type: 'string' }, name: { type: 'string' }, organization: { type: 'string' } },
        strict: true,
      });
      if (!values.email || !values.password) {
        err(`callplane: --email and --password are required\n${USAGE}\n`);
        return 2;
      }
      const settings = loadSettings(env);
      const container = buildContainer({ settings, secretKey: ensureSecretKey(settings), logger: silentLogger });
      try {
        const { user, organization } = await container.get(CreateUser).execute({
          email: values.email, password: values.password, name: values.name ?? null, organizationName: values.organization ?? null,
        });
        out(`created user ${user.id} <${user.email}> in organization ${organization.id} "${organization.name}"\n`);
        return 0;
      } finally {
        await container.get<Lifecycle>(LifecycleToken).stop();
      }
    }
    if (command === 'migrate') {
      const { runMigrateCommand } = await import('../adapters/migration/migrate.command.js');
      return await runMigrateCommand(argv.slice(1), env, out, err, deps);
    }
    err(`${USAGE}\n`);
    return 2;
  } catch (e) {
    if (e instanceof SettingsError || e instanceof DomainError) {
      err(`callplane: ${e instanceof DomainError ? e.detail : e.message}\n`);
      return 1;
    }
    if ((e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      err(`callplane: ${(e as Error).message}\n${USAGE}\n`);
      return 2;
    }
    throw e;
  }
}

if (isMainModule(import.meta.url)) {
  runCli(process.argv.slice(2), process.env, (s) => process.stdout.write(s), (s) => process.stderr.write(s)).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (e: unknown) => {
      process.stderr.write(`callplane: ${(e as Error)?.message ?? String(e)}\n`);
      process.exit(1);
    },
  );
}
