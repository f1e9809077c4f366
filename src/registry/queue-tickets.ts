// Waiting tickets (table `queue_tickets`): issued by a full queue, redeemed once, on any router instance, before they expire.
import { randomBytes } from 'node:crypto';
import type { Queryable } from './database.js';

export interface IssuedTicket {
  ticket: string;
  expiresAt: Date;
}

/** 128 random bits, URL-safe: unguessable, so a ticket cannot be forged or enumerated. */
function newTicket(): string {
  return randomBytes(16).toString('base64url');
}

/** Stores a ticket for `operation`, valid for `validMs`. Also sweeps tickets expired for a while (cheap, indexed). */
export async function issueTicket(db: Queryable, operation: string, validMs: number): Promise<IssuedTicket> {
  const ticket = newTicket();
  const { rows } = await db.query<{ expires_at: Date }>(
    `with swept as (delete from queue_tickets where expires_at < now() - interval '1 hour')
     insert into queue_tickets (ticket, operation_name, expires_at) values ($1, $2, now() + ($3::int * interval '1 millisecond'))
     returning expires_at`,
    [ticket, operation, Math.round(validMs)],
  );
  return { ticket, expiresAt: rows[0].expires_at };
}

/**
 * Marks the ticket used if it is valid for this operation and was never used: true exactly once
 * per ticket, whichever router instance asks first (one conditional UPDATE).
 */
export async function redeemTicket(db: Queryable, ticket: string, operation: string): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(ticket)) return false;
  const { rowCount } = await db.query(
    'update queue_tickets set used_at = now() where ticket = $1 and operation_name = $2 and used_at is null and expires_at > now()',
    [ticket, operation],
  );
  return (rowCount ?? 0) === 1;
}
