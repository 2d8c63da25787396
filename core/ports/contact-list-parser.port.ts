/**
 * Reads a campaign's contact list (an uploaded CSV, or a Google Sheet's CSV export) into contacts to dial,
 * with the rules of API.md section 4: UTF-8 (a BOM is fine), a header row whose names are trimmed and
 * matched case-insensitively, a required `phone_number` column, at least one data row, phone numbers `+`
 * and 8..15 digits once spaces, dashes, dots and parentheses are removed. Repeated numbers are kept once
 * (the first row wins) and counted.
 */
export const ContactListParser = Symbol.for('callplane.ContactListParser');

export interface ParsedContact {
  /**
   * Row number as a spreadsheet shows it: the header is row 1, the first data row is row 2. Every CSV
   * record counts, blank ones included (a quoted value spanning lines is one row).
   */
  row: number;
  /** Normalized: `+` then 8..15 digits. */
  phoneNumber: string;
  /**
   * The row's other columns keyed by header name (trimmed, lower-cased), values as strings, trimmed
   * (empty cells give `""`). Never holds `phone_number`; columns with an empty header are left out.
   */
  context: Record<string, string>;
}

export interface ContactListParseResult {
  /** In file order, one per distinct phone number; never empty. */
  contacts: ParsedContact[];
  /** Data rows left out because their number already appeared on an earlier row. */
  duplicatesSkipped: number;
  /** The row numbers of those rows, ascending. */
  duplicateRows: number[];
  /** Header names (trimmed, lower-cased) in file order, `phone_number` included, empty ones left out. */
  columns: string[];
  /** Blank rows (every cell empty) that were ignored. */
  blankRowsSkipped: number;
}

export interface ContactListParser {
  /**
   * Streams `source` (UTF-8 bytes in chunks of any size, or already-decoded strings) and returns the
   * contacts. Reads the whole source once; never buffers it as one string.
   *
   * Throws `InputError('invalid_source', detail)` when the file breaks a rule: not UTF-8, malformed CSV
   * (an unclosed quote, text after a closing quote, a row over 1 MB), no header row, no `phone_number`
   * column, a header repeated, no data row, rows with a different column count than the header, invalid or
   * empty phone numbers. The detail names every kind of problem found, each with up to 5 row numbers, e.g.
   * `invalid phone_number in rows 3, 7, 9, 12, 15 (and 4 more)`. Rejects with the source's own error when
   * reading the source fails. Pure with respect to its input: the same bytes give the same result.
   */
  parse(source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>): Promise<ContactListParseResult>;
}
