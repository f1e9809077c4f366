// Unit tests of the dashboard's drawing helpers: sparklines, number formats, the top-operations table.
import { describe, expect, it } from 'vitest';
import { formatCount, formatPercent, formatRate, formatSeconds, sparklinePath, topOperationRows } from './dashboard-script.js';
import { circuitLabel } from './prometheus-math.js';

describe('sparklinePath', () => {
  it('puts the newest point at the right edge and scales from 0 to the highest value', () => {
    expect(sparklinePath([0, 5, 10], 3, 100, 20)).toBe('M0 20 L50 10 L100 0');
    expect(sparklinePath([1, 2], 5, 100, 20)).toBe('M75 10 L100 0');
  });

  it('keeps a quiet series low against a floor, and breaks the line at missing values', () => {
    expect(sparklinePath([0.5, 0.5], 2, 10, 10, 1)).toBe('M0 5 L10 5');
    expect(sparklinePath([1, null, 1, 1], 4, 30, 10)).toBe('M0 0 M20 0 L30 0');
    expect(sparklinePath([], 4, 30, 10)).toBe('');
  });
});

describe('formats', () => {
  it('writes rates, shares, durations, counts and circuit states as ops read them', () => {
    expect([null, 0, 0.25, 12.4, 2500].map(formatRate)).toEqual(['–', '0.0/s', '0.3/s', '12/s', '2.5k/s']);
    expect([null, 0, 0.0004, 0.0123, 0.5].map(formatPercent)).toEqual(['–', '0%', '<0.1%', '1.2%', '50%']);
    expect([null, 0.0042, 0.0456, 1.5].map(formatSeconds)).toEqual(['–', '4.2 ms', '46 ms', '1.50 s']);
    expect([null, 3.2].map(formatCount)).toEqual(['–', '3']);
    expect([0, 1, 2, undefined, 7].map(circuitLabel)).toEqual(['closed', 'open', 'half-open', 'unknown', 'unknown']);
  });
});

describe('topOperationRows', () => {
  it('names each client on its first row with its total, and an anonymous operation by type and hash', () => {
    const rows = topOperationRows({
      windowHours: 24,
      clients: [
        {
          clientName: 'web',
          total: 7,
          operations: [
            { operationName: 'ProductPage', operationType: 'query', hash: 'aaaa', count: 5, lastSeen: '2026-12-01T10:00:00Z' },
            { operationName: null, operationType: 'mutation', hash: '0123456789abcdef', count: 2, lastSeen: '2026-12-01T10:00:00Z' },
          ],
        },
        { clientName: '', total: 1, operations: [{ operationName: 'Hello', operationType: 'query', hash: 'bbbb', count: 1, lastSeen: '2026-12-01T10:00:00Z' }] },
      ],
    });
    expect(rows.map(({ client, operation, count }) => [client, operation, count])).toEqual([
      ['web · 7', 'ProductPage', '5'],
      ['', '(anonymous mutation 01234567)', '2'],
      ['(unnamed) · 1', 'Hello', '1'],
    ]);
  });
});
