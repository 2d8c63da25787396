/**
 * Prompt templates (docs/conversation.md): `{{var}}`, nested paths, fallbacks. Pure; never throws.
 *
 * - `{{first_name}}`: a top-level value of the context (the initial context's own keys are top-level).
 * - `{{initial_context.phone}}`, `{{gathered_context.customer.city}}`: dotted paths into nested objects.
 *   `initial_context.x` that resolves to nothing falls back to the top-level `x`.
 * - `{{name | Friend}}` or the legacy `{{name | fallback:Friend}}`: the text after `|` when the value is
 *   missing, null or an empty string.
 * - Built-ins: `current_time` (ISO 8601, UTC), `current_weekday` (English, UTC), and the same with an IANA
 *   zone suffix: `current_time_Europe/Paris` (`YYYY-MM-DD HH:mm` in that zone), `current_weekday_America/New_York`.
 *   A value of the context with the same name wins over a built-in.
 * - Missing values without a fallback render as an empty string; strings as they are; numbers and booleans
 *   as text; objects and arrays as JSON. Spaces inside the braces are ignored.
 */

/** What templates are rendered with: `{...initial_context, initial_context, gathered_context}`. */
export type TemplateContext = Record<string, unknown>;

/** `{{ path }}` or `{{ path | fallback }}`; a path holds no braces or pipes. */
const TEMPLATE_PATTERN = /\{\{\s*([^{}|]*?)\s*(?:\|\s*([^{}]*?)\s*)?\}\}/gu;

/** The render context of a conversation: the initial context spread at the top level, plus both contexts by name. */
export function templateContextOf(
  initialContext: Record<string, unknown>,
  gatheredContext: Record<string, unknown>,
): TemplateContext {
  return { ...initialContext, initial_context: initialContext, gathered_context: gatheredContext };
}

/** Renders `template` with `context`; `now` feeds the time built-ins. */
export function renderTemplate(template: string, context: TemplateContext, now: Date = new Date()): string {
  return template.replace(TEMPLATE_PATTERN, (_match, rawPath: string, rawFallback: string | undefined) => {
    const value = resolvePath(rawPath, context) ?? builtin(rawPath, now);
    if (value === undefined || value === null || value === '') {
      return rawFallback === undefined ? '' : fallbackText(rawFallback);
    }
    return valueText(value);
  });
}

function fallbackText(raw: string): string {
  return raw.startsWith('fallback:') ? raw.slice('fallback:'.length).trim() : raw;
}

function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

function resolvePath(path: string, context: TemplateContext): unknown {
  if (path === '') return undefined;
  const direct = walk(context, path.split('.'));
  if (direct !== undefined && direct !== null) return direct;
  if (path.startsWith('initial_context.')) return walk(context, path.slice('initial_context.'.length).split('.'));
  return direct;
}

function walk(root: unknown, keys: string[]): unknown {
  let current: unknown = root;
  for (const key of keys) {
    if (typeof current !== 'object' || current === null) return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function builtin(name: string, now: Date): string | undefined {
  if (name === 'current_time') return now.toISOString();
  if (name === 'current_weekday') return WEEKDAYS[now.getUTCDay()];
  const zoned = /^current_(time|weekday)_(.+)$/u.exec(name);
  if (!zoned) return undefined;
  try {
    if (zoned[1] === 'weekday') {
      return new Intl.DateTimeFormat('en-US', { timeZone: zoned[2], weekday: 'long' }).format(now);
    }
    const parts = new Intl.DateTimeFormat('en-CA', {
      timeZone: zoned[2],
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(now);
    const part = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
    return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}`;
  } catch {
    return undefined; // not an IANA zone: a missing value
  }
}
