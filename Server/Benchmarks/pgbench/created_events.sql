-- The end of both scenarios' transactions (pgbench.py appends it to identify.sql and anonymous.sql):
-- the two events of a new profile and its session, profile.created and session.created, into the
-- outbox in one statement as the store writes them, then COMMIT. The scenario has set :profile_id,
-- :session_id and :now (\gset); pgbench.py sets :kind (-D kind=anonymous or identified).
INSERT INTO event_outbox
    (project_id, id, type, created_at, actor_type, actor_id, client_address, profile_id, data, reason)
SELECT :project, e.id, e.type, :now, 'sdk', NULL, '127.0.0.1', NULLIF(e.profile_id, ''), e.data, NULL
FROM unnest(
    ARRAY['evt_' || lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
            || substr(md5(random()::text), 1, 16),
        'evt_' || lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
            || substr(md5(random()::text), 1, 16)]::text[],
    ARRAY['profile.created', 'session.created']::text[],
    ARRAY[:profile_id::text, :profile_id::text]::text[],
    ARRAY['{"profile_id":"' || :profile_id::text || '","kind":"' || :kind::text || '"}',
        '{"session_id":"' || :session_id::text || '","profile_id":"' || :profile_id::text || '","kind":"'
            || :kind::text || '"}'
    ]::text[]) WITH ORDINALITY AS e(id, type, profile_id, data, n)
ORDER BY e.n;
COMMIT;
