import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidationIssue } from '../../core/errors.js';
import type { JsonSchema } from '../routing/route.js';

// ajv-formats ships CommonJS with `exports.default`; under NodeNext the default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

function makeAjv(coerce: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: true,
    discriminator: true,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

/** Bodies are validated as sent (no type coercion); query and path values arrive as strings and are coerced. */
const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

export type Where = 'body' | 'query' | 'path';

export interface CompiledValidator {
  /** Validates (and fills defaults / strips unknown fields in) `data`; returns the FastAPI-shaped issues. */
  (data: unknown): ValidationIssue[];
}

export function compileValidator(schema: JsonSchema, where: Where): CompiledValidator {
  const validate = (where === 'body' ? bodyAjv : paramAjv).compile(schema);
  return (data) => (validate(data) ? [] : toIssues(validate, where));
}

function toIssues(validate: ValidateFunction, where: Where): ValidationIssue[] {
  const errors = withoutLosingBranches(validate.errors ?? []);
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const issue = toIssue(e, where);
    const k = JSON.stringify(issue);
    if (!seen.has(k)) {
      seen.add(k);
      issues.push(issue);
    }
  }
  return issues;
}

/**
 * With `allErrors`, an `anyOf`/`oneOf` yields the errors of every branch plus a summary. A client wants the
 * one thing to fix, as FastAPI reports it: the `null` branch of a nullable field is dropped ("Input should be
 * a valid integer", not also "a valid null"); of the other failed branches the one whose errors reach deepest
 * into the value (the closest match) is kept, the first on a tie (an either-or of required fields names the
 * first); the summary goes when a branch's errors remain. Errors outside unions pass unchanged.
 */
function withoutLosingBranches(errors: ErrorObject[]): ErrorObject[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  if (unions.length === 0) return errors;
  const dropped = new Set<ErrorObject>();
  // innermost unions first, so an outer union weighs only what survived inside
  for (const union of [...unions].sort((a, b) => b.schemaPath.length - a.schemaPath.length)) {
    const prefix = `${union.schemaPath}/`;
    const branches = new Map<number, ErrorObject[]>();
    for (const e of errors) {
      if (e === union || dropped.has(e) || !e.schemaPath.startsWith(prefix)) continue;
      const branch = Number(e.schemaPath.slice(prefix.length).split('/')[0]);
      if (!branches.has(branch)) branches.set(branch, []);
      branches.get(branch)!.push(e);
    }
    if (branches.size === 0) continue;
    const isNullBranch = (list: ErrorObject[]) =>
      list.length === 1 && list[0]!.keyword === 'type' && list[0]!.params.type === 'null' && list[0]!.instancePath === union.instancePath;
    const candidates = [...branches.entries()].filter(([, list]) => !isNullBranch(list));
    const depth = (list: ErrorObject[]) => Math.max(...list.map((e) => e.instancePath.split('/').length + (e.keyword === 'required' ? 1 : 0)));
    let keep = candidates[0];
    for (const c of candidates) if (depth(c[1]) > depth(keep?.[1] ?? [])) keep = c;
    for (const [branch, list] of branches) if (branch !== keep?.[0]) for (const e of list) dropped.add(e);
    if (keep) dropped.add(union);
  }
  return errors.filter((e) => !dropped.has(e));
}

function pathSegments(instancePath: string): (string | number)[] {
  if (!instancePath) return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'int', number: 'float', string: 'string', boolean: 'bool', object: 'dict', array: 'list', null: 'none',
};

export function toIssue(e: ErrorObject, where: Where): ValidationIssue {
  const loc: (string | number)[] = [where, ...pathSegments(e.instancePath)];
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { loc: [...loc, String(p.missingProperty)], msg: 'Field required', type: 'missing' };
    case 'type': {
      const t = String(p.type).split(',')[0]!;
      return { loc, msg: `Input should be a valid ${t === 'integer' ? 'integer' : t === 'object' ? 'object' : t}`, type: `${TYPE_NAMES[t] ?? t}_type` };
    }
    case 'minLength':
      return { loc, msg: `String should have at least ${p.limit} character${p.limit === 1 ? '' : 's'}`, type: 'string_too_short' };
    case 'maxLength':
      return { loc, msg: `String should have at most ${p.limit} characters`, type: 'string_too_long' };
    case 'minimum':
      return { loc, msg: `Input should be greater than or equal to ${p.limit}`, type: 'greater_than_equal' };
    case 'exclusiveMinimum':
      return { loc, msg: `Input should be greater than ${p.limit}`, type: 'greater_than' };
    case 'maximum':
      return { loc, msg: `Input should be less than or equal to ${p.limit}`, type: 'less_than_equal' };
    case 'exclusiveMaximum':
      return { loc, msg: `Input should be less than ${p.limit}`, type: 'less_than' };
    case 'minItems':
      return { loc, msg: `List should have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`, type: 'too_short' };
    case 'maxItems':
      return { loc, msg: `List should have at most ${p.limit} items`, type: 'too_long' };
    case 'enum':
      return { loc, msg: `Input should be ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`, type: 'enum' };
    case 'const':
      return { loc, msg: `Input should be ${JSON.stringify(p.allowedValue)}`, type: 'literal_error' };
    case 'pattern':
      return { loc, msg: e.parentSchema && (e.parentSchema as { description?: string }).description
        ? `Invalid value: ${(e.parentSchema as { description: string }).description}`
        : `String should match pattern '${p.pattern}'`, type: 'string_pattern_mismatch' };
    case 'format':
      return { loc, msg: `Input should be a valid ${p.format}`, type: 'value_error' };
    case 'discriminator':
      return p.error === 'mapping'
        ? { loc: [...loc, String(p.tag)], msg: `Unknown value for '${p.tag}'`, type: 'union_tag_invalid' }
        : { loc: [...loc, String(p.tag)], msg: 'Field required', type: 'missing' };
    case 'additionalProperties':
      return { loc: [...loc, String(p.additionalProperty)], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' };
    default:
      return { loc, msg: e.message ?? 'Invalid value', type: e.keyword };
  }
}
