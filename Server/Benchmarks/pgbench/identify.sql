-- One identify of a new user, as PostgresStore.identify runs it (Server/Sources/TesseraServer/Storage/
-- Postgres/PostgresStore+Sessions.swift) for what bench.py's identify scenario sends: a signed identity
-- token of a user never seen, no caller session, no `jti`; the identity secret's last use is recorded
-- once a minute per node (IdentitySecretUsage), so not here. The same statements in the same
-- transaction, each a round trip, on the same tables and indexes (the schema `tessera` migrated):
-- the profile lookup FOR UPDATE, the new profile, the claims' update of it, the new session, the two
-- events (profile.created, session.created) into the outbox (created_events.sql, which pgbench.py
-- appends, as anonymous.sql's). Identifiers are time-ordered like TimeOrderedID's (prefix, 12 hex
-- digits of milliseconds, 16 random characters).
--
--   cat identify.sql created_events.sql > script.sql
--   pgbench -n -M extended -D project=prj_… -D kind=identified -f script.sql …   (see pgbench.py)
--
-- pgbench cannot build strings, so each new row's identifier is made by its INSERT and read back with
-- RETURNING … \gset (the server binds the values it made; the statements are otherwise the same).
\set a random(0, 999999999999)
\set b random(0, 999999999999)
BEGIN;
SELECT id, project_id, kind, external_id, verified, name, avatar_url, email, created_at, updated_at, blocked_at
FROM profiles
WHERE project_id = :project AND verified = true AND external_id = 'pgbench-' || :a::text || '-' || :b::text
FOR UPDATE;
INSERT INTO profiles (id, project_id, kind, external_id, verified, name, avatar_url, email, created_at, updated_at,
    blocked_at)
VALUES ('usr_' || lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
        || substr(md5(random()::text), 1, 16),
    :project, 'identified', 'pgbench-' || :a::text || '-' || :b::text, true, NULL, NULL, NULL,
    floor(extract(epoch FROM statement_timestamp()))::bigint, floor(extract(epoch FROM statement_timestamp()))::bigint,
    NULL)
RETURNING id AS profile_id, created_at AS now
\gset
UPDATE profiles SET name = COALESCE(NULL, name), avatar_url = COALESCE(NULL, avatar_url),
    email = COALESCE(NULL, email), updated_at = :now
WHERE id = :profile_id
RETURNING id, project_id, kind, external_id, verified, name, avatar_url, email, created_at, updated_at, blocked_at;
INSERT INTO sessions (id, project_id, profile_id, installation_id, kind, created_at, last_authenticated_at, expires_at,
    revoked_at, token_hash)
VALUES ('ses_' || lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
        || substr(md5(random()::text), 1, 16),
    :project, :profile_id, NULL, 'identified', :now, :now, :now::bigint + 43200 * 60, NULL,
    sha256(('st_' || :a::text || '-' || :b::text)::bytea))
RETURNING id AS session_id
\gset
