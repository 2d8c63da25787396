#!/usr/bin/env node
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Db } from 'mongodb';
import { DomainError } from '../core/errors.js';
import { silentLogger } from '../core/ports/logger.port.js';
import type { Lifecycle } from '../plugins/lifecycle.js';
import { ensureSecretKey, loadSettings, SettingsError, type Settings } from '../plugins/settings.js';
import { isMainModule } from './is-main.js';

const USAGE = `usage:
  callplane serve [--role api|worker|all]
  callplane users create --email EMAIL --password PASSWORD [--name NAME] [--organization NAME]
  callplane migrate --from sqlite --to mongodb [--sqlite PATH] [--mongodb-uri URI] [--force]
  callplane --help

Every command reads the same settings as the service (environment variables, docs/configuration.md):
CALLPLANE_DATA_DIR (default ./data, where the SQLite database callplane.db lives), CALLPLANE_STORAGE and
MONGODB_URI. Run it with the values the service runs with, or it works on another database.`;

const wantsHelp = (args: string[]) => args.some((a) => a === '--help' || a === '-h');

/** Where a command reads and writes, for people: the SQLite file, or the MongoDB database (no credentials). */
export function storageLocation(settings: Settings): string {
  if (settings.storage === 'mongodb' && settings.mongodbUri) {
    const m = /^mongodb(?:\+srv)?:\/\/(?:[^@/]*@)?([^/?]*)(?:\/([^?]*))?/.exec(settings.mongodbUri);
    const database = decodeURIComponent(m?.[2] ?? '') || 'callplane';
    return `MongoDB database "${database}" on ${m?.[1] || 'the configured server'}`;
  }
  return join(settings.dataDir, 'callplane.db');
}

/** What tests inject into the CLI (the migrate command's MongoDB connection). */
export interface CliDeps {
  openMongo?: (uri: string) => Promise<{ db: Db; close(): Promise<void> }>;
}

/** Runs one CLI command; returns the exit code. Output goes to the given writers (tests capture them). */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, out: (s: string) => void, err: (s: string) => void, deps: CliDeps = {}): Promise<number> {
  const [command, sub, ...rest] = argv;
  try {
    if (command === undefined || command === 'help' || wantsHelp(argv)) {
      if (command === undefined) {
        err(`${USAGE}\n`);
        return 2;
      }
      out(`${USAGE}\n`);
      return 0;
    }
    if (command === 'serve') {
      const { values } = parseArgs({ args: argv.slice(1), options: { role: { type: 'string' } }, strict: true });
      const { exitOnSignals, startService } = await import('./main.js');
      const started = startService(values.role ? { ...env, CALLPLANE_ROLE: values.role } : env);
      exitOnSignals(started);
      await started;
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
      const where = storageLocation(settings);
      // a data directory without a database is most likely not the one the service uses: say so, loudly
      const newDatabase = settings.storage === 'sqlite' && !existsSync(where);
      if (newDatabase) {
        err(`callplane: no database at ${where} yet: creating a new one. If the service runs with another ` +
          'CALLPLANE_DATA_DIR (or with MongoDB), run this command with the same settings.\n');
      }
      // loaded here, not at the top: --help and usage errors answer without loading the whole service
      const [{ buildContainer }, { CreateUser }, { LifecycleToken }] = await Promise.all([
        import('../plugins/composition-root.js'), import('../core/identity/sign-up.use-case.js'), import('../plugins/tokens.js'),
      ]);
      const container = buildContainer({ settings, secretKey: ensureSecretKey(settings), logger: silentLogger });
      try {
        const { user, organization } = await container.get(CreateUser).execute({
          email: values.email, password: values.password, name: values.name ?? null, organizationName: values.organization ?? null,
        });
        out(`created user ${user.id} <${user.email}> in organization ${organization.id} "${organization.name}" in ${where}\n`);
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
