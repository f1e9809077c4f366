-- The budget of a query's deferred parts (`@defer`), per operation: the request's deadline bounds its first payload, this one the rest.

alter table policies add column if not exists defer_deadline_ms integer check (defer_deadline_ms > 0);
