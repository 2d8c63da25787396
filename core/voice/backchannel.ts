/**
 * Backchannels: what a listener says to show they are following, not to take the turn (docs/voice.md
 * "Turn-taking, barge-in and endings"). While the agent speaks, caller speech whose words are only these does
 * not interrupt it, and a barge-in whose utterance turns out to be only these (or nothing: noise) is a false
 * interruption: the agent resumes what it was saying. Pure.
 *
 * Matching ignores case and punctuation; hyphens count as spaces ("Uh-huh." = "uh huh"), and any sequence of
 * the phrases counts ("Yeah, yeah, okay."). Words such as "no", "wait", "stop", "what" or a name are not
 * backchannels: they interrupt.
 */
export const BACKCHANNEL_PHRASES: readonly string[] = Object.freeze([
  'uh huh', 'uh-huh', 'mm hmm', 'mm-hmm', 'mhm', 'mmhmm', 'm hm', 'hmm', 'hm', 'mm', 'mmm', 'uh', 'um', 'ah', 'oh', 'aha',
  'yeah', 'yep', 'yup', 'yes', 'ya', 'okay', 'ok', 'alright', 'all right', 'right', 'sure', 'i see', 'got it', 'cool', 'great',
  'exactly', 'true', 'indeed', 'sounds good', 'oh okay', 'i know',
]);

const normalize = (text: string): string[] =>
  text
    .toLowerCase()
    .replace(/[-‐‑–—]/gu, ' ')
    .replace(/[^\p{L}\p{N}'\s]/gu, ' ')
    .split(/\s+/u)
    .filter(Boolean);

const PHRASES: string[][] = [...new Set(BACKCHANNEL_PHRASES.map((p) => normalize(p).join(' ')))]
  .map((p) => p.split(' '))
  .sort((a, b) => b.length - a.length);

/** True when `text` has words and all of them are backchannel phrases; false for '' (nothing was heard). */
export function isBackchannel(text: string): boolean {
  const words = normalize(text);
  if (words.length === 0) return false;
  let at = 0;
  while (at < words.length) {
    const phrase = PHRASES.find((p) => p.every((w, i) => words[at + i] === w));
    if (!phrase) return false;
    at += phrase.length;
  }
  return true;
}

/** The words of `text` after its first `heardWords` words, with their original spacing and punctuation. */
export function wordsAfter(text: string, heardWords: number): string {
  return textAfterWords(text, Math.max(0, heardWords)).trim();
}

/**
 * `text` from its word number `words` on (0: all of it, from its first word), trailing spaces kept (more
 * streamed text may follow them); past its last word, only those trailing spaces.
 */
export function textAfterWords(text: string, words: number): string {
  let count = 0;
  for (const m of text.matchAll(/\S+/gu)) {
    if (count === words) return text.slice(m.index);
    count++;
  }
  return /\s*$/u.exec(text)?.[0] ?? '';
}

/** How many words `text` has. */
export function wordCount(text: string): number {
  return (text.match(/\S+/gu) ?? []).length;
}
