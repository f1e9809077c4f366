-- Traffic control: waiting tickets handed out by full queues, and the cost rate limit of each policy.

-- A ticket lets its holder in ahead of newcomers, once, on any router instance, until it expires.
create table if not exists queue_tickets (
  ticket text primary key,
  operation_name text not null,
  issued_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index if not exists queue_tickets_expires_at on queue_tickets (expires_at);

-- Cost points a client may spend per second (refill) and at once (bucket size).
alter table policies add column if not exists cost_rate_per_second integer check (cost_rate_per_second > 0);
alter table policies add column if not exists cost_burst integer check (cost_burst > 0);
