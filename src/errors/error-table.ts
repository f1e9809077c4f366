// Renders the error catalogue as the README's Markdown table (kept in sync by a test, never written by hand).
import { COMPOSITION_CODES, ERROR_CODES } from './codes.js';

const TABLE_START = '<!-- error-codes:start (generated from src/errors/codes.ts by `npm run docs:errors`) -->';
const TABLE_END = '<!-- error-codes:end -->';

function renderErrorTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, info]) => `| \`${code}\` | ${info.status} | ${info.retryable ? 'yes' : 'no'} | ${info.description} |`);
  const compositionRows = Object.entries(COMPOSITION_CODES).map(([code, info]) => `| \`${code}\` | ${info.description} |`);
  return [
    '| code | HTTP status | retryable | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    'When a publish, a removal or `switchyard supergraph` would not compose, the CLI prints each problem as `[CODE] message` and exits with status 1. Besides the composer’s own rule codes (e.g. `INVALID_FIELD_SHARING`), these are Switchyard’s:',
    '',
    '| code | meaning |',
    '|---|---|',
    ...compositionRows,
  ].join('\n');
}

/** Replaces the table between the markers in `text`; throws if the markers are missing. */
export function replaceErrorTable(text: string): string {
  const start = text.indexOf(TABLE_START);
  const end = text.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error('the error table markers are missing');
  return `${text.slice(0, start + TABLE_START.length)}\n${renderErrorTable()}\n${text.slice(end)}`;
}
