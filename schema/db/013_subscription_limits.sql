-- Subscription limits per operation (issue 27): open subscriptions of the operation on one router, and per caller.

alter table policies add column if not exists max_subscriptions integer check (max_subscriptions > 0);
alter table policies add column if not exists max_subscriptions_per_principal integer check (max_subscriptions_per_principal > 0);
