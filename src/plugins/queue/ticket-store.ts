// Where waiting tickets live: the database (every router instance honours them), or memory when there is no registry.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../registry/database.js';
import { issueTicket, redeemTicket, type IssuedTicket } from '../../registry/queue-tickets.js';

export interface TicketStore {
  issue(operation: string, validMs: number): Promise<IssuedTicket>;
  /** True exactly once per valid ticket of this operation. */
  redeem(ticket: string, operation: string): Promise<boolean>;
}

export function databaseTicketStore(db: Queryable): TicketStore {
  return {
    issue: (operation, validMs) => issueTicket(db, operation, validMs),
    redeem: (ticket, operation) => redeemTicket(db, ticket, operation),
  };
}

export interface MemoryTicketStoreOptions {
  /**
   * Live tickets held at most. Default 100000: far more than the refusals one router gives within a
   * ticket's life (its retry advice plus a grace period, at most a minute and a half), so a store that
   * is full is a flood, whose newest refusals then go without a ticket.
   */
  maxEntries?: number;
  /** Clock in ms. Default Date.now. */
  now?: () => number;
}

/**
 * For a router serving a supergraph file (no database): tickets are honoured by this instance only.
 * Not a cache (no size-capped map of decision 022): a ticket is a promise made to a waiting client, so
 * none is dropped before it expires.
 * 1. Tickets are kept in the order they were issued, which is nearly the order they expire in (their
 *    lives differ by at most the retry advice, a minute): each issue first drops the expired tickets
 *    at the front, stopping at the first live one (amortised constant time).
 * 2. Still full: every ticket is looked at once and the expired ones dropped; the earliest expiry of
 *    those left is noted, and no whole pass runs again before it: a flood that meets a full store
 *    pays for a pass once per expiry, not once per request.
 * 3. With `maxEntries` live tickets held, issue fails: the refusal goes out without a ticket, as when
 *    the database cannot store one, and every ticket already given out stays good.
 * 4. A ticket is deleted when redeemed (once) and refused when expired.
 */
export function memoryTicketStore(options: MemoryTicketStoreOptions = {}): TicketStore {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 100_000;
  const tickets = new Map<string, { operation: string; expiresAt: number }>();
  /** No ticket held expires before this (epoch ms), as the last whole pass found. */
  let earliestExpiry = 0;
  function dropExpired(at: number): void {
    for (const [ticket, entry] of tickets) {
      if (entry.expiresAt > at) break;
      tickets.delete(ticket);
    }
    if (tickets.size < maxEntries || at < earliestExpiry) return;
    earliestExpiry = Infinity;
    for (const [ticket, entry] of tickets) {
      if (entry.expiresAt <= at) tickets.delete(ticket);
      else earliestExpiry = Math.min(earliestExpiry, entry.expiresAt);
    }
  }
  return {
    async issue(operation, validMs) {
      const at = now();
      dropExpired(at);
      if (tickets.size >= maxEntries) throw new Error(`queue tickets: ${maxEntries} live tickets held in this process; none is issued until one is redeemed or expires`);
      const ticket = randomBytes(16).toString('base64url');
      const expiresAt = at + validMs;
      tickets.set(ticket, { operation, expiresAt });
      return { ticket, expiresAt: new Date(expiresAt) };
    },
    async redeem(ticket, operation) {
      const entry = tickets.get(ticket);
      if (!entry || entry.operation !== operation || entry.expiresAt <= now()) return false;
      tickets.delete(ticket);
      return true;
    },
  };
}
