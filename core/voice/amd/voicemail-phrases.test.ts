import { describe, expect, it } from '@jest/globals';
import { findVoicemailPhrase, normalizeTranscript, wordCount } from './voicemail-phrases.js';

describe('voicemail phrases', () => {
  it.each([
    ['Please leave a message after the tone.', 'leave a message'],
    ['leave your name and number', 'leave a message'],
    ['Leave me a brief message', 'leave a message'],
    ['Record your message at the beep', 'after the tone'],
    ["Sam's not available right now", 'not available'],
    ['The subscriber is currently unavailable', 'not available'],
    ["I can't come to the phone", 'cannot take the call'],
    ['I’m unable to take your call', 'cannot take the call'],
    ['You have been forwarded to voice mail', 'voicemail'],
    ['The voicemail box is full', 'voicemail'],
    ['The mailbox is full and cannot accept messages', 'mailbox is full'],
    ['When you have finished recording, hang up', 'record your message'],
    ['The number you have dialed has been disconnected', 'the person you are calling'],
    ["The number you've dialed is not in service", 'the person you are calling'],
  ])('%s → %s (strong)', (text, label) => {
    const phrase = findVoicemailPhrase(text);
    expect(phrase?.label).toBe(label);
    expect(phrase?.strength).toBe('strong');
  });

  it('knows weak hints a business human says too', () => {
    expect(findVoicemailPhrase("Hi, you've reached Acme")).toMatchObject({ label: 'you have reached', strength: 'weak' });
    expect(findVoicemailPhrase('we will call you back')).toMatchObject({ label: 'get back to you', strength: 'weak' });
    // a strong phrase wins over a weak one that comes first
    expect(findVoicemailPhrase("You've reached Sam, leave a message")?.label).toBe('leave a message');
  });

  it.each(['Hello?', 'Hi, this is Sam', 'Yeah, hello', 'Who is calling?', 'Yes, I am available tomorrow', 'Can you leave it at the door?', ''])(
    'finds nothing in the human line %j',
    (text) => expect(findVoicemailPhrase(text)).toBeNull(),
  );

  it('normalizes case, punctuation and apostrophes; counts words', () => {
    expect(normalizeTranscript("  Can't   COME, to the phone… ")).toBe('cant come to the phone');
    expect(wordCount('Hi, this is Sam.')).toBe(4);
    expect(wordCount(' ... ')).toBe(0);
  });
});
