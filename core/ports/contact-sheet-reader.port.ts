/**
 * Reads a Google Sheet's contact list through its CSV export (API.md section 4, `source_type: google-sheet`).
 * The export's base URL is a setting, so tests point it at a local server.
 */
export const ContactSheetReader = Symbol.for('callplane.ContactSheetReader');
export interface ContactSheetReader {
  /**
   * The CSV bytes of the sheet at `sheetUrl` (`.../spreadsheets/d/<id>/...`, the `gid` of the URL picks the tab),
   * streamed. Throws `InputError('invalid_source', detail)` when the URL is not a sheet URL, the export cannot be
   * fetched (not shared publicly, not found, network), or it is larger than the upload limit (10 MB, while streaming).
   */
  open(sheetUrl: string): Promise<AsyncIterable<Uint8Array>>;
}
