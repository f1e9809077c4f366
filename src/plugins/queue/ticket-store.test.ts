// Unit tests of the in-process ticket store: a ticket is good once, until it expires, and never dropped while live.
import { describe, expect, it } from 'vitest';
import { memoryTicketStore } from './ticket-store.js';

describe('memoryTicketStore', () => {
  it('redeems a ticket once, for its operation, before it expires', async () => {
    let now = 0;
    const store = memoryTicketStore({ now: () => now });
    const first = await store.issue('Page', 1_000);
    expect(first.expiresAt.getTime()).toBe(1_000);
    expect(await store.redeem(first.ticket, 'Other')).toBe(false);
    expect(await store.redeem(first.ticket, 'Page')).toBe(true);
    expect(await store.redeem(first.ticket, 'Page')).toBe(false);
    const late = await store.issue('Page', 1_000);
    now = 1_000;
    expect(await store.redeem(late.ticket, 'Page')).toBe(false);
  });

  it('at maxEntries live tickets issues none, and every ticket given out stays good', async () => {
    let now = 0;
    const store = memoryTicketStore({ maxEntries: 2, now: () => now });
    const a = await store.issue('Page', 1_000);
    const b = await store.issue('Page', 5_000);
    await expect(store.issue('Page', 1_000)).rejects.toThrow(/2 live tickets/);
    expect(await store.redeem(a.ticket, 'Page')).toBe(true);
    // Redeemed or expired tickets make room.
    const c = await store.issue('Page', 1_000);
    now = 1_000;
    const d = await store.issue('Page', 1_000);
    expect(await store.redeem(b.ticket, 'Page')).toBe(true);
    expect(await store.redeem(c.ticket, 'Page')).toBe(false);
    expect(await store.redeem(d.ticket, 'Page')).toBe(true);
  });
});
