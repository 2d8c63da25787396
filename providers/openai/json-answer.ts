/**
 * Reads a JSON object out of a model's answer, tolerantly: servers without a JSON mode (and models that ignore
 * it) wrap the object in code fences or prose. Pure; used by the OpenAI-compatible client's structured
 * completion (docs/providers.md, "OpenAI and compatible servers").
 *
 * Order: the whole answer as JSON; then the body of each ``` fence; then the first balanced `{...}` in the
 * text (strings and escapes respected) that parses. Only a JSON object counts (not an array, not a scalar).
 */
export function parseJsonAnswer(text: string): Record<string, unknown> | null {
  const whole = asObject(text.trim());
  if (whole) return whole;
  for (const fenced of fenceBodies(text)) {
    const value = asObject(fenced.trim()) ?? firstBalancedObject(fenced);
    if (value) return value;
  }
  return firstBalancedObject(text);
}

function asObject(text: string): Record<string, unknown> | null {
  if (!text.startsWith('{')) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The contents of each ``` fenced block (an optional language tag after the opening fence is dropped). */
function fenceBodies(text: string): string[] {
  const out: string[] = [];
  const fence = /```[a-zA-Z0-9_-]*[ \t]*\r?\n?([\s\S]*?)```/g;
  for (let m = fence.exec(text); m; m = fence.exec(text)) out.push(m[1] ?? '');
  return out;
}

/** The first `{...}` span whose braces balance (ignoring braces inside strings) and that parses as an object. */
function firstBalancedObject(text: string): Record<string, unknown> | null {
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
    const end = balancedEnd(text, start);
    if (end < 0) continue;
    const value = asObject(text.slice(start, end + 1));
    if (value) return value;
  }
  return null;
}

/** Index of the `}` closing the `{` at `start`; -1 when it never closes. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}
