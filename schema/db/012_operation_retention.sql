-- The operation registry's discovery limits (decision 030): the documents first seen in an hour, per client and in all, are counted by this index.
-- (Retention deletes by `last_seen` and `day`, which migration 008 indexed already.)

create index if not exists operations_first_seen on operations (first_seen) include (client_name);
