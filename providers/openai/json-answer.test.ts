import { describe, expect, it } from '@jest/globals';
import { parseJsonAnswer } from './json-answer.js';

describe('parseJsonAnswer', () => {
  it('reads a plain JSON object', () => {
    expect(parseJsonAnswer('{"will_attend": true, "n": 2}')).toEqual({ will_attend: true, n: 2 });
    expect(parseJsonAnswer('  \n{"a": "b"}\n ')).toEqual({ a: 'b' });
  });

  it('reads the object inside a code fence, with or without a language tag', () => {
    expect(parseJsonAnswer('Here you go:\n```json\n{"name": "Ann"}\n```\nAnything else?')).toEqual({ name: 'Ann' });
    expect(parseJsonAnswer('```\n{"name": "Bo"}\n```')).toEqual({ name: 'Bo' });
    expect(parseJsonAnswer('```json {"inline": 1}```')).toEqual({ inline: 1 });
  });

  it('takes the first balanced object out of prose, ignoring braces inside strings', () => {
    expect(parseJsonAnswer('The values are {"note": "use {curly} braces \\" here", "x": {"y": [1, 2]}} as asked. {"b": 2}'))
      .toEqual({ note: 'use {curly} braces " here', x: { y: [1, 2] } });
  });

  it('skips a balanced span that is not JSON and keeps looking', () => {
    expect(parseJsonAnswer('In {this} case: {"ok": true}')).toEqual({ ok: true });
  });

  it('answers null when there is no JSON object', () => {
    expect(parseJsonAnswer('I could not find any values.')).toBeNull();
    expect(parseJsonAnswer('[1, 2, 3]')).toBeNull();
    expect(parseJsonAnswer('"just a string"')).toBeNull();
    expect(parseJsonAnswer('{"unterminated": true')).toBeNull();
    expect(parseJsonAnswer('')).toBeNull();
  });
});
