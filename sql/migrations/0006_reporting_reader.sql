-- recon:postgres-only
-- The accountants' role: read the reporting views, nothing else. An accountant's login is
--   CREATE ROLE name LOGIN PASSWORD '...' IN ROLE recon_reader;
-- The first line marks this file for PostgreSQL only: PGlite has a single user, so there it is recorded as
-- applied without running (see src/db/migrate.ts).

-- Roles are cluster-wide while this runs once per database: the role may already exist (another database of
-- the same server), and two databases migrating at once may both try to create it. The loser of that race
-- waits for the winner's commit and then fails on pg_authid's unique index (unique_violation) rather than
-- with duplicate_object; either way the role exists, which is all this needs.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'recon_reader') THEN
    CREATE ROLE recon_reader NOLOGIN;
  END IF;
EXCEPTION
  WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;

-- Privileges are per database: granted here on this database's reporting views only. Nothing on schema recon
-- is granted, so its tables stay out of reach. (No COMMENT ON ROLE: it would update one shared catalog row
-- from every database migrating at once.)
GRANT USAGE ON SCHEMA reporting TO recon_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA reporting TO recon_reader;
-- Views a later migration adds to reporting (created by the same migrating role) are readable too.
ALTER DEFAULT PRIVILEGES IN SCHEMA reporting GRANT SELECT ON TABLES TO recon_reader;

-- PUBLIC (hence every login) may create tables in schema public before PostgreSQL 15; take that away so the
-- reader writes nothing anywhere. A no-op from 15 on.
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname = 'public') THEN
    REVOKE CREATE ON SCHEMA public FROM PUBLIC;
  END IF;
END
$$;
