-- One run of the event sequencer, as PostgresStore.sequenceEvents runs it (Server/Sources/TesseraServer/
-- Storage/Postgres/PostgresStore+Events.swift): the projects with events in the outbox, then for the
-- project one transaction that locks its counter row and moves up to 1,000 outbox rows into `events`
-- (three indexes and a unique ID), numbered. The server runs it 20 ms after a commit that wrote
-- events, so at most ~50 times a second per node under load; pgbench.py runs this script beside the
-- identify or anonymous clients at that rate (pgbench -R 50, one client), so that PostgreSQL does the
-- same work per request as it does for the server. (When an outbox holds more than 1,000 events the
-- server runs again at once; at these rates a run moves a few dozen.)
--
--   pgbench -n -M extended -c 1 -R 50 -D project=prj_… -f sequencer.sql …
SELECT DISTINCT project_id FROM event_outbox;
BEGIN;
INSERT INTO event_counters AS c (project_id, last_sequence) VALUES (:project, 0)
ON CONFLICT (project_id) DO UPDATE SET last_sequence = c.last_sequence
RETURNING last_sequence AS last
\gset
WITH moved AS (
    DELETE FROM event_outbox WHERE position IN (
        SELECT position FROM event_outbox WHERE project_id = :project
        ORDER BY position LIMIT 1000
    )
    RETURNING *
), numbered AS (
    SELECT moved.*, row_number() OVER (ORDER BY position) AS n FROM moved
), inserted AS (
    INSERT INTO events (id, project_id, sequence, type, created_at, actor_type, actor_id, client_address, profile_id,
        data, reason)
    SELECT id, project_id, :last::bigint + n, type, created_at, actor_type, actor_id, client_address, profile_id,
        data, reason
    FROM numbered
    RETURNING 1
)
UPDATE event_counters SET last_sequence = last_sequence + (SELECT count(*) FROM inserted)
WHERE project_id = :project
RETURNING last_sequence - :last::bigint;
COMMIT;
