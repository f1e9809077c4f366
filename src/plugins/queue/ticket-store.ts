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

/** For a router serving a supergraph file (no database): tickets are honoured by this instance only. */
export function memoryTicketStore(options: { maxEntries?: number; now?: () => number } = {}): TicketStore {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 100_000;
  const tickets = new Map<string, { operation: string; expiresAt: number }>();
  return {
    async issue(operation, validMs) {
      const ticket = randomBytes(16).toString('base64url');
      const expiresAt = now() + validMs;
      tickets.set(ticket, { operation, expiresAt });
      // Map order is insertion order: the oldest tickets go first when the map is full.
      while (tickets.size > maxEntries) tickets.delete(tickets.keys().next().value as string);
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
