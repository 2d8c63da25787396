/**
 * Cuts the model's streamed text into pieces to synthesize (docs/voice.md "Turn-taking, barge-in and
 * endings"). The first piece of a reply ends early, at a clause (`,` `;` `:`) once it holds `minFirstChars`,
 * or at a word boundary once it reaches `maxFirstChars`, so the first audio starts sooner; later pieces are
 * whole sentences (`.` `?` `!` followed by a space). A period inside a number (`3.5`) or after a known
 * abbreviation (`Dr.`, `e.g.`, a single initial) does not end a sentence. A sentence running past
 * `maxChars` is cut at its last clause or word boundary. Pure; one chunker per reply.
 */
export interface SentenceChunkerOptions {
  /** A clause boundary ends the first piece once it holds this many characters. Default 12. */
  minFirstChars?: number;
  /** The first piece ends at a word boundary once this long, punctuation or not. Default 60. */
  maxFirstChars?: number;
  /** Any piece is cut (clause or word boundary) past this length. Default 250. */
  maxChars?: number;
}

const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'mt', 'ave', 'no', 'vs', 'etc', 'e.g', 'i.e', 'a.m', 'p.m',
  'approx', 'dept', 'inc', 'ltd', 'co', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct',
  'nov', 'dec', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun', 'u.s',
]);

export class SentenceChunker {
  private buffer = '';
  private emitted = 0;
  private readonly minFirst: number;
  private readonly maxFirst: number;
  private readonly maxChars: number;

  constructor(options: SentenceChunkerOptions = {}) {
    this.minFirst = options.minFirstChars ?? 12;
    this.maxFirst = options.maxFirstChars ?? 60;
    this.maxChars = options.maxChars ?? 250;
  }

  /** Adds streamed text; returns the pieces it completed (trimmed, never empty). */
  push(text: string): string[] {
    this.buffer += text;
    const out: string[] = [];
    for (;;) {
      const cut = this.nextCut();
      if (cut === undefined) break;
      const piece = this.buffer.slice(0, cut).trim();
      this.buffer = this.buffer.slice(cut).replace(/^\s+/u, '');
      if (piece !== '') {
        out.push(piece);
        this.emitted++;
      }
    }
    return out;
  }

  /** The rest of the reply (the stream ended): at most one piece. */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = '';
    if (rest === '') return [];
    this.emitted++;
    return [rest];
  }

  /** Where the next piece ends (exclusive), or undefined when more text is needed. */
  private nextCut(): number | undefined {
    const b = this.buffer;
    const first = this.emitted === 0;
    for (let i = 0; i < b.length - 1; i++) {
      const c = b[i];
      if (!/\s/u.test(b[i + 1])) continue;
      if ((c === '.' || c === '?' || c === '!') && !(c === '.' && this.isAbbreviation(i))) return i + 1;
      if (first && (c === ',' || c === ';' || c === ':') && b.slice(0, i).trim().length >= this.minFirst) return i + 1;
    }
    const limit = first ? this.maxFirst : this.maxChars;
    if (b.length > limit) {
      const head = b.slice(0, limit);
      const clause = Math.max(head.lastIndexOf(', '), head.lastIndexOf('; '), head.lastIndexOf(': '));
      if (clause >= (first ? this.minFirst : 1)) return clause + 1;
      const space = head.lastIndexOf(' ');
      if (space > 0) return space;
    }
    return undefined;
  }

  /** Whether the period at `i` closes an abbreviation or an initial rather than a sentence. */
  private isAbbreviation(i: number): boolean {
    const before = this.buffer.slice(0, i);
    const word = /([\p{L}.]+)$/u.exec(before)?.[1] ?? '';
    if (word === '') return false;
    if (/^\p{Lu}$/u.test(word)) return true; // an initial: "J. Smith"
    return ABBREVIATIONS.has(word.toLowerCase());
  }
}

/**
 * The part of `text` heard when `fraction` (0..1) of its audio played: the words whose end falls within that
 * share of the characters (a word cut in the middle was not heard). Pure.
 */
export function heardPrefix(text: string, fraction: number): string {
  if (fraction >= 1) return text.trim();
  if (!(fraction > 0)) return '';
  const limit = Math.round(text.length * fraction);
  let end = 0;
  for (const m of text.matchAll(/\S+/gu)) {
    const wordEnd = (m.index ?? 0) + m[0].length;
    if (wordEnd > limit) break;
    end = wordEnd;
  }
  return text.slice(0, end).trim();
}
