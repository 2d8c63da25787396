/**
 * ContactListParser over csv-parse's streaming parser (API.md section 4).
 *
 * Decisions beyond API.md, also written in the port:
 * - Comma-separated, `"` quoting (RFC 4180); CRLF or LF line ends. Whitespace around cells and around quoted
 *   values is trimmed; whitespace inside quotes is kept. A stray quote inside an unquoted value is kept as
 *   text (`John "JJ" Smith`).
 * - Rows are numbered as a spreadsheet shows them (header = row 1), counting every CSV record, blank ones too.
 *   Blank rows (every cell empty) are skipped and counted; blank rows before the header are skipped.
 * - A row with more cells than the header is accepted when the extra cells are all empty (spreadsheet
 *   exports often add trailing commas); any other difference in cell count is an error for that row.
 * - A column whose header is empty is ignored (no context key can be empty); a repeated header is an error.
 * - Problems of data rows are collected over the whole file and reported together, each kind with up to 5
 *   row numbers and how many more; problems of the file itself (encoding, malformed CSV, header) stop at once.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, parse } from 'csv-parse';
import { InputError } from '../../core/errors.js';
import type {
  ContactListParseResult,
  ContactListParser,
  ParsedContact,
} from '../../core/ports/contact-list-parser.port.js';

const PHONE_COLUMN = 'phone_number';
/** Removed before checking a phone number: whitespace, dashes, dots, parentheses. */
const PHONE_SEPARATORS = /[\s\-.()]/g;
const VALID_PHONE = /^\+\d{8,15}$/;
/** Longest CSV record accepted, in characters (an unclosed quote otherwise swallows the rest of the file). */
export const MAX_ROW_CHARS = 1_000_000;
const ROWS_NAMED = 5;
/**
 * A large file never holds the event loop for long (issue 10: 1.8 s for 100,000 rows): the parser gets text in
 * slices of at most SLICE_CHARS (csv-parse handles a whole slice in one synchronous step), and the consumer gives
 * other work a turn once SLICE_MS have passed since the last one (checked every CHECK_EVERY records; while the code
 * is still cold, in the first few hundred milliseconds, a record costs ten times what it costs later).
 */
const SLICE_CHARS = 16_384;
const SLICE_MS = 8;
const CHECK_EVERY = 64;
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function invalidSource(detail: string): InputError {
  return new InputError('invalid_source', detail);
}

/** Decodes UTF-8 chunks (split multi-byte sequences handled, BOM dropped); strings pass through. */
async function* decodeUtf8(source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let first = true;
  const emit = (text: string): string => {
    if (first && text.length > 0) {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) return text.slice(1);
    }
    return text;
  };
  try {
    for await (const chunk of source) {
      const text =
        typeof chunk === 'string' ? decoder.decode() + chunk : decoder.decode(chunk, { stream: true });
      const out = emit(text);
      for (let i = 0; i < out.length; i += SLICE_CHARS) yield out.slice(i, i + SLICE_CHARS);
    }
    const rest = emit(decoder.decode());
    if (rest.length > 0) yield rest;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ERR_ENCODING_INVALID_ENCODED_DATA') {
      throw invalidSource('the file is not valid UTF-8 text (save it as "CSV UTF-8")');
    }
    throw error;
  }
}

/** One kind of row problem: the first few row numbers and how many rows in all. */
class RowProblem {
  readonly rows: number[] = [];
  count = 0;
  constructor(readonly what: string) {}
  add(row: number): void {
    this.count += 1;
    if (this.rows.length < ROWS_NAMED) this.rows.push(row);
  }
  describe(): string {
    const rows = `${this.rows.length === 1 ? 'row' : 'rows'} ${this.rows.join(', ')}`;
    const more = this.count > this.rows.length ? ` (and ${this.count - this.rows.length} more)` : '';
    return `${this.what} in ${rows}${more}`;
  }
}

function quoteNames(names: string[]): string {
  const shown = names.slice(0, 10).map((n) => JSON.stringify(n.length > 40 ? `${n.slice(0, 40)}…` : n));
  return shown.join(', ') + (names.length > 10 ? `, … (${names.length} columns)` : '');
}

function describeCsvError(error: CsvError): string {
  const records = typeof error.records === 'number' ? error.records : undefined;
  const lines = typeof error.lines === 'number' ? error.lines : undefined;
  const where = records !== undefined ? `row ${records + 1}` : lines !== undefined ? `line ${lines}` : 'the file';
  // For an unclosed quote csv-parse reports the last line of the file, which would only mislead.
  const line =
    records !== undefined && lines !== undefined && lines !== records + 1 && error.code !== 'CSV_QUOTE_NOT_CLOSED'
      ? ` (line ${lines})`
      : '';
  let problem: string;
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      problem = 'a quoted value is never closed';
      break;
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      problem = 'unexpected text after a closing quote';
      break;
    case 'INVALID_OPENING_QUOTE':
      problem = 'a quote inside an unquoted value';
      break;
    case 'CSV_MAX_RECORD_SIZE':
      problem = `the row is longer than ${MAX_ROW_CHARS} characters (an unclosed quote?)`;
      break;
    default:
      problem = error.message;
  }
  return `malformed CSV at ${where}${line}: ${problem}`;
}

const isBlank = (record: string[]): boolean => record.every((cell) => cell.trim() === '');

export class CsvContactListParser implements ContactListParser {
  async parse(
    source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  ): Promise<ContactListParseResult> {
    const parser = parse({
      delimiter: ',',
      quote: '"',
      trim: true,
      relax_quotes: true,
      relax_column_count: true, // checked here, per row, to report row numbers
      skip_empty_lines: false, // blank rows still count in row numbers
      max_record_size: MAX_ROW_CHARS,
    });

    let header: string[] | null = null;
    let phoneIndex = -1;
    let columns: string[] = [];
    let row = 0;
    let blankRowsSkipped = 0;
    let dataRows = 0;
    const contacts: ParsedContact[] = [];
    const seen = new Set<string>();
    const duplicateRows: number[] = [];
    const emptyPhone = new RowProblem('empty phone_number');
    const invalidPhone = new RowProblem('invalid phone_number (expected + and 8 to 15 digits)');
    let wrongWidth: RowProblem | null = null;
    const problems = (): RowProblem[] =>
      [emptyPhone, invalidPhone, wrongWidth].filter((p): p is RowProblem => p !== null && p.count > 0);

    const readHeader = (record: string[]): void => {
      header = record.map((name) => name.trim().toLowerCase());
      const named = header.filter((name) => name !== '');
      const repeated = named.filter((name, i) => named.indexOf(name) !== i);
      if (repeated.length > 0) {
        throw invalidSource(`the header row (row ${row}) repeats the column ${quoteNames([...new Set(repeated)])}`);
      }
      phoneIndex = header.indexOf(PHONE_COLUMN);
      if (phoneIndex === -1) {
        const lookalike = header.find((name) => name.replace(/[\s-]+/g, '_') === PHONE_COLUMN || name === 'phone');
        const hint = lookalike !== undefined ? ` (rename ${JSON.stringify(lookalike)} to "phone_number")` : '';
        throw invalidSource(
          `the header row (row ${row}) has no phone_number column${hint}; found ${quoteNames(named) || 'no names'}`,
        );
      }
      columns = named;
      wrongWidth = new RowProblem(`wrong number of cells (the header has ${header.length})`);
    };

    const readRow = (record: string[], head: string[]): void => {
      dataRows += 1;
      const widthOk =
        record.length === head.length ||
        (record.length > head.length && record.slice(head.length).every((cell) => cell.trim() === ''));
      if (!widthOk) {
        wrongWidth!.add(row);
        return;
      }
      const raw = record[phoneIndex];
      if (raw.trim() === '') {
        emptyPhone.add(row);
        return;
      }
      const phoneNumber = raw.replace(PHONE_SEPARATORS, '');
      if (!VALID_PHONE.test(phoneNumber)) {
        invalidPhone.add(row);
        return;
      }
      if (emptyPhone.count + invalidPhone.count + wrongWidth!.count > 0) return; // refused anyway: only count problems
      if (seen.has(phoneNumber)) {
        duplicateRows.push(row);
        return;
      }
      seen.add(phoneNumber);
      const entries: [string, string][] = [];
      for (let i = 0; i < head.length; i++) {
        if (i !== phoneIndex && head[i] !== '') entries.push([head[i], record[i]]);
      }
      // fromEntries defines own properties, so a column named "__proto__" is just a key.
      contacts.push({ row, phoneNumber, context: Object.fromEntries(entries) });
    };

    // A problem found by the consumer is kept here and the loop left, rather than thrown inside the pipeline:
    // a throw there makes the pipeline tear down the stages still writing, and it may then reject with that
    // teardown's AbortError instead of our error (a 500 instead of a 400 on files larger than one chunk).
    let refused: InputError | null = null;
    let recordCount = 0;
    let lastTurn = performance.now();
    try {
      await pipeline(Readable.from(decodeUtf8(source)), parser, async (records: AsyncIterable<string[]>) => {
        for await (const record of records) {
          row += 1;
          if (isBlank(record)) {
            if (header !== null) blankRowsSkipped += 1;
            continue;
          }
          try {
            if (header === null) readHeader(record);
            else readRow(record, header);
          } catch (error) {
            if (error instanceof InputError) {
              refused = error;
              return;
            }
            throw error;
          }
          if (++recordCount % CHECK_EVERY === 0 && performance.now() - lastTurn >= SLICE_MS) {
            await yieldToEventLoop();
            lastTurn = performance.now();
          }
        }
      });
    } catch (error) {
      if (refused !== null) throw refused;
      if (error instanceof CsvError) throw invalidSource(describeCsvError(error));
      throw error;
    }
    if (refused !== null) throw refused;

    if (header === null) {
      throw invalidSource('the file is empty: a header row with a phone_number column is required');
    }
    if (dataRows === 0) {
      throw invalidSource('the file has a header row but no data rows');
    }
    const found = problems();
    if (found.length > 0) {
      throw invalidSource(found.map((p) => p.describe()).join('; '));
    }
    return {
      contacts,
      duplicatesSkipped: duplicateRows.length,
      duplicateRows,
      columns,
      blankRowsSkipped,
    };
  }
}
