-- One anonymous start of a new installation, as PostgresStore.startAnonymousSession runs it
-- (Server/Sources/TesseraServer/Storage/Postgres/PostgresStore+Sessions.swift) for what bench.py's
-- anonymous scenario sends, rate limits lifted (as the benchmark lifts them): the installation's
-- lookup FOR UPDATE, the new anonymous profile, the installation (a random UUID, the SHA-256 of its
-- secret), the new session, the two events (profile.created, session.created) into the outbox
-- (created_events.sql, which pgbench.py appends, as identify.sql's); the same statements in the same
-- transaction, each a round trip, on the schema `tessera` migrated.
--
--   cat anonymous.sql created_events.sql > script.sql
--   pgbench -n -M extended -D project=prj_… -D kind=anonymous -f script.sql …   (see pgbench.py)
--
-- New rows' identifiers are made by their INSERT and read back with RETURNING … \gset (pgbench
-- cannot build strings); they are time-ordered like TimeOrderedID's.
\set a random(0, 999999999999)
\set b random(0, 999999999999)
BEGIN;
SELECT secret_hash, profile_id FROM installations
WHERE project_id = :project AND installation_id = md5(:a::text || '-' || :b::text)::uuid::text FOR UPDATE;
INSERT INTO profiles (id, project_id, kind, external_id, verified, name, avatar_url, email, created_at, updated_at,
    blocked_at)
VALUES ('usr_' || lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
        || substr(md5(random()::text), 1, 16),
    :project, 'anonymous', NULL, false, NULL, NULL, NULL,
    floor(extract(epoch FROM statement_timestamp()))::bigint, floor(extract(epoch FROM statement_timestamp()))::bigint,
    NULL)
RETURNING id AS profile_id, created_at AS now
\gset
INSERT INTO installations (project_id, installation_id, secret_hash, profile_id, created_at)
VALUES (:project, md5(:a::text || '-' || :b::text)::uuid::text, sha256(('secret-' || :a::text || :b::text)::bytea),
    :profile_id, :now);
INSERT INTO sessions (id, project_id, profile_id, installation_id, kind, created_at, last_authenticated_at, expires_at,
    revoked_at, token_hash)
VALUES ('ses_' || lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
        || substr(md5(random()::text), 1, 16),
    :project, :profile_id, md5(:a::text || '-' || :b::text)::uuid::text, 'anonymous', :now, :now,
    :now::bigint + 525600 * 60, NULL, sha256(('st_' || :a::text || '-' || :b::text)::bytea))
RETURNING id AS session_id
\gset
