#!/usr/bin/env node
// `npm test`'s type check and build in ONE TypeScript program, so the shipped code is type-checked once, not twice.
//
// `npm run typecheck` (tsc --noEmit -p tsconfig.json) checks everything, tests included; `npm run build` (tsc -p
// tsconfig.build.json) checks the shipped code again and writes it to dist/. The check is most of either run's time
// (about 30 s and 24 s of a 2-core machine), and the build's half of it repeats work the type check has just done.
// Here one program over tsconfig.json reports every diagnostic `tsc --noEmit -p tsconfig.json` would, and then emits
// from that same program exactly the files `tsc -p tsconfig.build.json` would emit (the build config's roots and
// what they import, less declaration files and packages), with the build config's options, into dist/, and writes
// dist/.buildstamp as scripts/ensure-build.mjs does. On any diagnostic nothing is written and the exit code is 1.
//
// The two configs must differ only in which files they take and in noEmit; anything else would make the emitted
// files differ from `npm run build`'s, so the script refuses (exit 1) and says which option differs.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { STAMP } from './ensure-build.mjs';
import { writeStamp } from './build-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function parse(configName) {
  const host = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  };
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, configName), {}, host);
  if (parsed.errors.length > 0) return { parsed, errors: parsed.errors };
  return { parsed, errors: [] };
}

/** The option names whose values differ between the two configs, other than the ones allowed to. */
function differingOptions(check, build) {
  const allowed = new Set(['noEmit', 'configFilePath']);
  const names = new Set([...Object.keys(check), ...Object.keys(build)]);
  return [...names].filter((n) => !allowed.has(n) && JSON.stringify(check[n]) !== JSON.stringify(build[n]));
}

const formatHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => root,
  getNewLine: () => ts.sys.newLine,
};

function report(diagnostics) {
  const text = process.stdout.isTTY
    ? ts.formatDiagnosticsWithColorAndContext(diagnostics, formatHost)
    : ts.formatDiagnostics(diagnostics, formatHost);
  process.stdout.write(text);
  process.stdout.write(`\nFound ${diagnostics.length} error${diagnostics.length === 1 ? '' : 's'}.\n`);
}

function main() {
  const started = new Date();
  const check = parse('tsconfig.json');
  const build = parse('tsconfig.build.json');
  const configErrors = [...check.errors, ...build.errors];
  if (configErrors.length > 0) {
    report(configErrors);
    return 1;
  }
  const differing = differingOptions(check.parsed.options, build.parsed.options);
  if (differing.length > 0) {
    process.stderr.write(`typecheck-and-build: tsconfig.json and tsconfig.build.json differ in ${differing.join(', ')}; `
      + 'one program cannot stand for both (run npm run typecheck and npm run build instead)\n');
    return 1;
  }

  // The type check: tsconfig.json's files with its options but for noEmit, so this program can also emit.
  const options = { ...build.parsed.options };
  const program = ts.createProgram({ rootNames: check.parsed.fileNames, options, projectReferences: check.parsed.projectReferences });
  const diagnostics = ts.sortAndDeduplicateDiagnostics(ts.getPreEmitDiagnostics(program));
  if (diagnostics.length > 0) {
    report(diagnostics);
    return 1;
  }

  // Which files the build would emit: its program's own source files. Built on the first program, it reuses
  // its parsed files and module resolutions and is never type-checked itself.
  const buildProgram = ts.createProgram({ rootNames: build.parsed.fileNames, options, oldProgram: program });
  const toEmit = buildProgram.getSourceFiles()
    .filter((sf) => !sf.isDeclarationFile && !buildProgram.isSourceFileFromExternalLibrary(sf))
    .map((sf) => sf.fileName);
  const emitDiagnostics = [];
  for (const fileName of toEmit) {
    const sf = program.getSourceFile(fileName);
    if (!sf) {
      process.stderr.write(`typecheck-and-build: ${fileName} is built but not type-checked (not in tsconfig.json)\n`);
      return 1;
    }
    const result = program.emit(sf);
    emitDiagnostics.push(...result.diagnostics);
  }
  if (emitDiagnostics.length > 0) {
    report(emitDiagnostics);
    return 1;
  }
  writeStamp(STAMP, started);
  return 0;
}

process.exitCode = main();
