import { describe, expect, it } from '@jest/globals';
import { heardPrefix, SentenceChunker } from './sentence-chunker.js';

/** Streams `text` in pieces of `size` characters and returns the chunks, flush included. */
function chunk(text: string, size = 3, chunker = new SentenceChunker()): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(...chunker.push(text.slice(i, i + size)));
  out.push(...chunker.flush());
  return out;
}

describe('SentenceChunker', () => {
  it('ends the first piece at a clause, then cuts whole sentences', () => {
    expect(chunk('Thanks for calling Brightsmile, this is Ava. Your cleaning is Tuesday. Can you make it?')).toEqual([
      'Thanks for calling Brightsmile,',
      'this is Ava.',
      'Your cleaning is Tuesday.',
      'Can you make it?',
    ]);
  });

  it('does not cut a short opening clause, and later clauses stay inside their sentence', () => {
    expect(chunk('Yes, I can. Well, Tuesday, at three, works.')).toEqual(['Yes, I can.', 'Well, Tuesday, at three, works.']);
  });

  it('cuts a long first piece without punctuation at a word boundary near 60 characters', () => {
    const text = 'I am looking at the calendar for the office and the next free slot that we have is Friday.';
    const pieces = chunk(text, 5);
    expect(pieces[0].length).toBeLessThanOrEqual(60);
    expect(pieces[0].length).toBeGreaterThan(40);
    expect(pieces.join(' ')).toBe(text);
  });

  it('keeps decimals, abbreviations and initials inside a sentence', () => {
    expect(chunk('It costs 3.50 dollars. Dr. Smith and J. Doe see you at 3 p.m. on Tuesday. Bye!', 2)).toEqual([
      'It costs 3.50 dollars.',
      'Dr. Smith and J. Doe see you at 3 p.m. on Tuesday.',
      'Bye!',
    ]);
  });

  it('waits for the character after a period before deciding', () => {
    const c = new SentenceChunker();
    expect(c.push('The price is 3.')).toEqual([]);
    expect(c.push('5 dollars. Ok')).toEqual(['The price is 3.5 dollars.']);
    expect(c.flush()).toEqual(['Ok']);
    expect(c.flush()).toEqual([]);
  });

  it('cuts a run-on sentence past maxChars at a clause', () => {
    const c = new SentenceChunker({ maxChars: 40 });
    const pieces = chunk('Hello there. We have openings on Monday, Tuesday and Wednesday, and also on Friday morning', 4, c);
    expect(pieces[0]).toBe('Hello there.');
    expect(pieces.slice(1).every((p) => p.length <= 40)).toBe(true);
    expect(pieces[1]).toBe('We have openings on Monday,');
  });
});

describe('heardPrefix', () => {
  const text = 'Your cleaning is on Tuesday at three.';
  it('keeps only the words whose end was played', () => {
    expect(heardPrefix(text, 0.45)).toBe('Your cleaning is');
    expect(heardPrefix(text, 0.52)).toBe('Your cleaning is on');
    expect(heardPrefix(text, 0)).toBe('');
    expect(heardPrefix(text, 1)).toBe(text);
    expect(heardPrefix(text, 0.1)).toBe('Your');
    expect(heardPrefix(text, 0.05)).toBe('');
  });
});
