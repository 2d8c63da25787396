/**
 * CSV encoding for exports (RFC 4180 quoting) that is safe to open in a spreadsheet: a cell starting with
 * `=`, `+`, `-`, `@`, a tab or a carriage return would be read as a formula (CSV/formula injection, OWASP), so it
 * gets a leading `'`, which spreadsheets show as text. Then a cell containing a comma, a double quote, CR or LF
 * is wrapped in double quotes with inner quotes doubled.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell: null/undefined is empty, objects are JSON, everything else its string form; then made safe and quoted. */
export function csvCell(value: unknown): string {
  let s: string;
  if (value === null || value === undefined) s = '';
  else if (typeof value === 'object') s = JSON.stringify(value);
  else s = String(value);
  if (FORMULA_START.test(s)) s = `'${s}`;
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One line, CRLF-terminated (RFC 4180). */
export const csvLine = (cells: readonly unknown[]): string => `${cells.map(csvCell).join(',')}\r\n`;
