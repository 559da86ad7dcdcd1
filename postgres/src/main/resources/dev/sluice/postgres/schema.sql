-- The tables of Sluice's Postgres store (sluice-postgres), for a migration tool (Flyway, Liquibase)
-- or psql. PostgresStore.builder(dataSource).createTable(true) runs this very file at start-up;
-- every statement is idempotent. The tables live in the DataSource's current schema (search_path).

-- One row per caller and limit: the state of one (caller, policy, algorithm).
--   key         sluice:{<caller>}:<policy>:<algorithm suffix>; a long or unusual caller identity
--               is hashed, so keys stay short
--   state       the algorithm's state as Sluice's Java arithmetic lays it out (dev.sluice.spi.algorithm),
--               with the parameters it was written under
--   version     a random number drawn at each write: a decision writes only if the row still holds
--               the version it read (compare-and-swap); random, so that a row deleted and written
--               anew never repeats the version a slow reader holds
--   expires_at  microseconds since the epoch on the database's clock: from then on the state equals
--               an absent one; the store reads such a row as absent and deletes it in the background
CREATE TABLE IF NOT EXISTS sluice_rate_state (
    key        text     PRIMARY KEY,
    state      bigint[] NOT NULL,
    version    bigint   NOT NULL,
    expires_at bigint   NOT NULL
);

-- The background deletion finds expired rows by this index, a small batch at a time.
CREATE INDEX IF NOT EXISTS sluice_rate_state_expires_at ON sluice_rate_state (expires_at);

-- Limit overrides an operator set (the console), by policy; they never expire.
CREATE TABLE IF NOT EXISTS sluice_override (
    policy text PRIMARY KEY,
    value  text NOT NULL
);
