// The README's error table is the catalogue's: this fails when a code changes without `npm run docs:errors`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../config/paths.js';
import { ERROR_CODES } from './codes.js';
import { replaceErrorTable } from './error-table.js';
import { clientError, problemType } from './client-error.js';

describe('error catalogue', () => {
  it('is what the README shows', () => {
    const readme = readFileSync(path.join(PACKAGE_ROOT, 'README.md'), 'utf8');
    expect(replaceErrorTable(readme)).toBe(readme);
  });

  it('builds client errors with the code, the RFC 9457 members and the subgraph', () => {
    const error = clientError('SUBGRAPH_TIMEOUT', 'subgraph "reviews" did not answer in time', { subgraph: 'reviews' });
    expect(error.extensions).toEqual({
      code: 'SUBGRAPH_TIMEOUT',
      type: problemType('SUBGRAPH_TIMEOUT'),
      title: ERROR_CODES.SUBGRAPH_TIMEOUT.title,
      status: 504,
      detail: 'subgraph "reviews" did not answer in time',
      subgraph: 'reviews',
    });
  });
});
