-- Ops limits per operation name ('*' is the default for every other operation): read live by every router.

create table if not exists policies (
  operation_name text primary key check (operation_name = '*' or operation_name ~ '^[_A-Za-z][_0-9A-Za-z]{0,127}$'),
  -- Largest estimated cost accepted (traffic control).
  cost_limit integer check (cost_limit > 0),
  -- Requests of this operation in flight per router instance; beyond it they queue.
  max_concurrency integer check (max_concurrency > 0),
  -- Requests allowed to wait; beyond it: QUEUE_FULL with a ticket.
  queue_length integer check (queue_length >= 0),
  -- Longest wait in the queue, in ms; beyond it: QUEUE_TIMEOUT.
  max_wait_ms integer check (max_wait_ms > 0),
  -- The request deadline, in ms: every subgraph call of the request must finish within it.
  deadline_ms integer check (deadline_ms > 0),
  updated_at timestamptz not null default now()
);

drop trigger if exists policies_changed on policies;
create trigger policies_changed after insert or update or delete or truncate on policies
  for each statement execute function switchyard_bump_change('policies');

insert into registry_changes (topic) values ('policies') on conflict do nothing;
