import { describe, expect, it } from '@jest/globals';
import { isBackchannel, wordCount, wordsAfter } from './backchannel.js';

describe('isBackchannel', () => {
  it('accepts acknowledgements, in any case and punctuation, alone or in a row', () => {
    for (const text of ['Uh-huh.', 'uh huh', 'Mm-hmm', 'mhm', 'Yeah.', 'Okay!', 'OK', 'right', 'Sure.', 'I see.', 'Yeah, yeah, okay.', 'Mm… got it.', 'all right']) {
      expect([text, isBackchannel(text)]).toEqual([text, true]);
    }
  });

  it('refuses anything with another word, and nothing at all', () => {
    for (const text of ['', '  ', '...', 'Sorry, what day?', 'No.', 'wait', 'Yeah, but I cannot come.', 'I see a problem', 'okay stop', 'Dana']) {
      expect([text, isBackchannel(text)]).toEqual([text, false]);
    }
  });
});

describe('wordsAfter', () => {
  it('keeps the text after the heard words, with its punctuation', () => {
    const text = 'Your cleaning is on Tuesday at 3pm. Can you still make it?';
    expect(wordsAfter(text, wordCount('Your cleaning is on'))).toBe('Tuesday at 3pm. Can you still make it?');
    expect(wordsAfter(text, 0)).toBe(text);
    expect(wordsAfter(text, 99)).toBe('');
  });
});
