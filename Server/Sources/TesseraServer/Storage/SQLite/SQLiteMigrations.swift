/// The versioned schema of the SQLite store; each entry runs once, in order, in a transaction.
///
/// Each entry is an expand or a contract step (see ``MigrationStep``), with the same number and
/// kind as in `PostgresMigrations`: adding a step is one entry at the end of both lists.
enum SQLiteMigrations {
    static let all: [MigrationStep] = [
        .expand(
            1,
            """
            CREATE TABLE projects (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                slug TEXT NOT NULL UNIQUE,
                publishable_key_hash BLOB NOT NULL UNIQUE,
                secret_key_hash BLOB NOT NULL UNIQUE,
                allow_unverified_identify INTEGER NOT NULL DEFAULT 0,
                require_audience INTEGER NOT NULL DEFAULT 0,
                expected_issuer TEXT,
                max_identity_token_lifetime_seconds INTEGER NOT NULL DEFAULT 3600,
                leeway_seconds INTEGER NOT NULL DEFAULT 60,
                anonymous_session_minutes INTEGER NOT NULL DEFAULT 525600,
                identified_session_minutes INTEGER NOT NULL DEFAULT 43200,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            );
            CREATE TABLE identity_secrets (
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                kid TEXT NOT NULL,
                secret TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                PRIMARY KEY (project_id, kid)
            );
            CREATE TABLE session_keys (
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                kid TEXT NOT NULL,
                private_key BLOB NOT NULL,
                created_at INTEGER NOT NULL,
                retired_at INTEGER,
                PRIMARY KEY (project_id, kid)
            );
            CREATE TABLE profiles (
                id TEXT PRIMARY KEY,
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                external_id TEXT,
                verified INTEGER NOT NULL,
                name TEXT,
                avatar_url TEXT,
                email TEXT,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            );
            CREATE UNIQUE INDEX profiles_external_id ON profiles (project_id, verified, external_id)
                WHERE external_id IS NOT NULL;
            CREATE TABLE profile_aliases (
                alias_id TEXT PRIMARY KEY,
                project_id TEXT NOT NULL,
                profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
                created_at INTEGER NOT NULL
            );
            CREATE INDEX profile_aliases_profile ON profile_aliases (profile_id);
            CREATE TABLE installations (
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                installation_id TEXT NOT NULL,
                secret_hash BLOB NOT NULL,
                profile_id TEXT REFERENCES profiles(id) ON DELETE SET NULL,
                created_at INTEGER NOT NULL,
                PRIMARY KEY (project_id, installation_id)
            );
            CREATE INDEX installations_profile ON installations (profile_id);
            CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                project_id TEXT NOT NULL,
                profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
                token_hash BLOB NOT NULL UNIQUE,
                installation_id TEXT,
                kind TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_authenticated_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                revoked_at INTEGER
            );
            CREATE INDEX sessions_profile ON sessions (profile_id);
            CREATE INDEX sessions_expires_at ON sessions (expires_at);
            CREATE TABLE devices (
                id TEXT PRIMARY KEY,
                project_id TEXT NOT NULL,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                profile_id TEXT NOT NULL,
                platform TEXT NOT NULL,
                environment TEXT NOT NULL,
                token TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                UNIQUE (project_id, platform, token)
            );
            CREATE INDEX devices_session ON devices (session_id);
            CREATE INDEX devices_profile ON devices (profile_id);
            CREATE TABLE used_token_ids (
                project_id TEXT NOT NULL,
                jti TEXT NOT NULL,
                expires_at INTEGER NOT NULL,
                PRIMARY KEY (project_id, jti)
            );
            CREATE INDEX used_token_ids_expires_at ON used_token_ids (expires_at);
            """
        ),
        .expand(
            2,
            """
            ALTER TABLE projects ADD COLUMN rate_limit_anonymous_starts INTEGER DEFAULT 600;
            ALTER TABLE projects ADD COLUMN rate_limit_failed_identifies INTEGER DEFAULT 60;
            ALTER TABLE projects ADD COLUMN rate_limit_failed_identifies_installation INTEGER DEFAULT 10;
            CREATE TABLE rate_limit_windows (
                project_id TEXT NOT NULL,
                bucket TEXT NOT NULL,
                key TEXT NOT NULL,
                window_start INTEGER NOT NULL,
                hits INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                UNIQUE (project_id, bucket, key, window_start)
            );
            CREATE INDEX rate_limit_windows_expires_at ON rate_limit_windows (expires_at);
            CREATE INDEX profiles_anonymous_created ON profiles (created_at) WHERE kind = 'anonymous';
            """
        ),
        .expand(
            3,
            // Rotation, blocking and introspection (issue 13): when each identity secret was last used,
            // blocked profiles, and API keys rotated out but still inside their grace period.
            """
            ALTER TABLE identity_secrets ADD COLUMN last_used_at INTEGER;
            ALTER TABLE profiles ADD COLUMN blocked_at INTEGER;
            ALTER TABLE profiles ADD COLUMN blocked_reason TEXT;
            CREATE TABLE retired_api_keys (
                key_hash BLOB PRIMARY KEY,
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                expires_at INTEGER NOT NULL
            );
            CREATE INDEX retired_api_keys_project ON retired_api_keys (project_id);
            """
        ),
        .expand(
            4,
            // The events outbox (issue 15): each change's events are written in its transaction, with
            // the project's next sequences from its counter row. Every index an insert touches costs a
            // page in the commit's WAL frames, so the table is clustered on (project_id, sequence)
            // (WITHOUT ROWID: no separate rowid b-tree), event IDs are time-ordered (their index grows
            // at its right edge), and retention deletes from the head of each project's sequence
            // (no index on created_at).
            """
            CREATE TABLE event_counters (
                project_id TEXT PRIMARY KEY,
                last_sequence INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE events (
                project_id TEXT NOT NULL,
                sequence INTEGER NOT NULL,
                id TEXT NOT NULL,
                type TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                actor_type TEXT NOT NULL,
                actor_id TEXT,
                client_address TEXT,
                profile_id TEXT,
                data TEXT NOT NULL,
                PRIMARY KEY (project_id, sequence)
            ) WITHOUT ROWID;
            CREATE UNIQUE INDEX events_id ON events (id);
            CREATE INDEX events_profile ON events (project_id, profile_id, sequence) WHERE profile_id IS NOT NULL;
            CREATE INDEX events_type ON events (project_id, type, sequence);
            CREATE INDEX events_audit ON events (project_id, sequence) WHERE actor_type IN ('secret_key', 'operator');
            """
        ),
        .expand(
            5,
            // Webhook endpoints (issue 15); the secrets are sealed under the master key, and the
            // previous secret signs beside the current one until it expires.
            """
            CREATE TABLE webhooks (
                id TEXT PRIMARY KEY,
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                url TEXT NOT NULL,
                types TEXT,
                description TEXT,
                enabled INTEGER NOT NULL DEFAULT 1,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                disabled_at INTEGER,
                disabled_reason TEXT,
                secret TEXT NOT NULL,
                previous_secret TEXT,
                previous_secret_expires_at INTEGER
            );
            CREATE INDEX webhooks_project ON webhooks (project_id, id);
            """
        ),
        .expand(
            6,
            // Webhook deliveries (issue 15): each enabled endpoint's cursor in its project's feed, up
            // to which the dispatcher has queued deliveries; one row per (endpoint, event) with its
            // latest attempt and the lease of the node delivering it.
            """
            ALTER TABLE webhooks ADD COLUMN cursor_sequence INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE webhooks ADD COLUMN failing_since INTEGER;
            CREATE TABLE webhook_deliveries (
                webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
                event_id TEXT NOT NULL,
                project_id TEXT NOT NULL,
                sequence INTEGER,
                event_type TEXT NOT NULL,
                event_created_at INTEGER NOT NULL,
                body TEXT,
                state TEXT NOT NULL,
                attempt INTEGER NOT NULL DEFAULT 0,
                next_attempt_at INTEGER,
                lease_owner TEXT,
                lease_expires_at INTEGER,
                attempted_at INTEGER,
                status_code INTEGER,
                error TEXT,
                duration_ms INTEGER,
                queued_at INTEGER NOT NULL,
                PRIMARY KEY (webhook_id, event_id)
            );
            CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
            CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, queued_at, event_id);
            CREATE INDEX webhook_deliveries_state ON webhook_deliveries (webhook_id, state, queued_at, event_id);
            CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (attempted_at) WHERE state <> 'pending';
            """
        ),
        .expand(
            7,
            // The console's queries (issue 16): the profile list newest first (profile IDs are
            // time-ordered) for each kind and verification, by email and blocked; and the operator's
            // reason on the events of the audit log. Only profiles_list is written by every new
            // profile; the email and blocked indexes are partial (profiles with an email, blocked
            // profiles). Sessions get no index: the console reads them by ID and by profile. An installation
            // remembers the profile it held before a sign-in unlinked it (written by promote and merge
            // only), so support finds a signed-in user by the installation ID of their bug report.
            """
            ALTER TABLE events ADD COLUMN reason TEXT;
            CREATE INDEX profiles_list ON profiles (project_id, kind, verified, id);
            CREATE INDEX profiles_email ON profiles (project_id, email) WHERE email IS NOT NULL;
            CREATE INDEX profiles_blocked ON profiles (project_id, id) WHERE blocked_at IS NOT NULL;
            ALTER TABLE installations ADD COLUMN previous_profile_id TEXT;
            CREATE INDEX installations_previous_profile ON installations (previous_profile_id)
                WHERE previous_profile_id IS NOT NULL;
            """
        ),
        .expand(
            8,
            // Operators of the console (issue 16): accounts of the deployment, not of a project. The
            // TOTP secret is sealed under the master key; enrollment links and console sessions are
            // stored as SHA-256 hashes of their tokens. The cleanup deletes expired enrollments and
            // sessions (absolute by expires_at, idle by last_seen_at).
            """
            CREATE TABLE operators (
                id TEXT PRIMARY KEY,
                email TEXT NOT NULL UNIQUE,
                role TEXT NOT NULL,
                password_hash TEXT,
                totp_secret TEXT,
                totp_last_step INTEGER,
                created_at INTEGER NOT NULL,
                enrolled_at INTEGER,
                last_login_at INTEGER
            );
            CREATE TABLE operator_enrollments (
                token_hash BLOB PRIMARY KEY,
                operator_id TEXT NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
                expires_at INTEGER NOT NULL
            );
            CREATE INDEX operator_enrollments_operator ON operator_enrollments (operator_id);
            CREATE INDEX operator_enrollments_expires_at ON operator_enrollments (expires_at);
            CREATE TABLE operator_sessions (
                id TEXT PRIMARY KEY,
                operator_id TEXT NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
                token_hash BLOB NOT NULL UNIQUE,
                csrf_token TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_seen_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL
            );
            CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id);
            CREATE INDEX operator_sessions_expires_at ON operator_sessions (expires_at);
            CREATE INDEX operator_sessions_last_seen_at ON operator_sessions (last_seen_at);
            """
        ),
        .expand(
            9,
            // Sessions bound to a device key (RFC 9449): the key's thumbprint on the session, the
            // project's binding and nonce settings, and the proofs' jti, single-use for the calls that
            // change something until the proof's window has passed.
            """
            ALTER TABLE sessions ADD COLUMN jkt TEXT;
            ALTER TABLE projects ADD COLUMN session_binding TEXT NOT NULL DEFAULT 'optional';
            ALTER TABLE projects ADD COLUMN dpop_nonce_required INTEGER NOT NULL DEFAULT 0;
            CREATE TABLE used_dpop_proofs (
                jkt TEXT NOT NULL,
                jti TEXT NOT NULL,
                expires_at INTEGER NOT NULL,
                PRIMARY KEY (jkt, jti)
            );
            CREATE INDEX used_dpop_proofs_expires_at ON used_dpop_proofs (expires_at);
            """
        ),
        .expand(
            10,
            // The console without dead ends (issue 25): a one-time value shown on the page a redirect
            // lands on (a new key, a webhook secret, an enrollment link), sealed with a key only the
            // operator's cookie gives and deleted on its first view or with its session; and the
            // last characters of each API key (the whole publishable key, which is public), so the
            // Keys page can tell which key an app carries; and the deployment's own audit of operator
            // accounts (sign-ins, failures, lockouts, unlocks, invitations, removals), newest first by ID;
            // and every webhook attempt (its request, status, the first 4 KiB of the answer, latency,
            // error), kept as long as deliveries are, so a replay adds an attempt instead of replacing one.
            """
            CREATE TABLE console_flashes (
                id TEXT PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES operator_sessions(id) ON DELETE CASCADE,
                sealed BLOB NOT NULL,
                expires_at INTEGER NOT NULL
            );
            CREATE INDEX console_flashes_session ON console_flashes (session_id);
            CREATE TABLE api_key_hints (
                key_hash BLOB PRIMARY KEY,
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                hint TEXT NOT NULL
            );
            CREATE INDEX api_key_hints_project ON api_key_hints (project_id);
            CREATE TABLE operator_audit (
                id TEXT PRIMARY KEY,
                type TEXT NOT NULL,
                operator_email TEXT NOT NULL,
                actor_email TEXT,
                client_address TEXT,
                detail TEXT,
                created_at INTEGER NOT NULL
            );
            CREATE TABLE webhook_attempts (
                id TEXT PRIMARY KEY,
                webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
                event_id TEXT NOT NULL,
                attempt INTEGER NOT NULL,
                at INTEGER NOT NULL,
                status_code INTEGER,
                error TEXT,
                duration_ms INTEGER NOT NULL,
                request_body TEXT,
                response_body BLOB
            );
            CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, at, id);
            CREATE INDEX webhook_attempts_event ON webhook_attempts (webhook_id, event_id, at, id);
            CREATE INDEX webhook_attempts_at ON webhook_attempts (at);
            CREATE INDEX webhook_attempts_event_id ON webhook_attempts (event_id);
            """
        ),
        .expand(
            11,
            // The user's devices (issue 27): a project's limit of live sessions per profile, the key
            // tier a client declares for a bound session, and the device keys each verified profile has
            // had sessions bound to (profile.new_key the first time a key appears).
            """
            ALTER TABLE projects ADD COLUMN max_sessions_per_profile INTEGER;
            ALTER TABLE sessions ADD COLUMN key_tier TEXT;
            CREATE TABLE profile_keys (
                profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
                jkt TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                PRIMARY KEY (profile_id, jkt)
            );
            """
        ),
        .expand(
            12,
            // App Attest (issue 28): the project's app_attest setting (app IDs space-separated), the
            // challenges (their SHA-256, single-use, five minutes) and each installation's verdict and
            // attested key with its counter.
            """
            ALTER TABLE projects ADD COLUMN app_attest_mode TEXT NOT NULL DEFAULT 'off';
            ALTER TABLE projects ADD COLUMN app_attest_app_ids TEXT NOT NULL DEFAULT '';
            ALTER TABLE projects ADD COLUMN app_attest_environment TEXT NOT NULL DEFAULT 'production';
            ALTER TABLE projects ADD COLUMN app_attest_allow_unsupported INTEGER NOT NULL DEFAULT 0;
            CREATE TABLE app_attest_challenges (
                challenge_hash BLOB PRIMARY KEY,
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                expires_at INTEGER NOT NULL
            );
            CREATE INDEX app_attest_challenges_expires_at ON app_attest_challenges (expires_at);
            CREATE TABLE app_attest_installations (
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                installation_id TEXT NOT NULL,
                verdict TEXT NOT NULL,
                enforce_would_refuse INTEGER NOT NULL,
                key_id BLOB,
                public_key BLOB,
                counter INTEGER,
                environment TEXT,
                app_id TEXT,
                receipt BLOB,
                attested_at INTEGER,
                updated_at INTEGER NOT NULL,
                PRIMARY KEY (project_id, installation_id)
            );
            """
        ),
        .expand(
            13,
            // The profile list's search (issue 25): an email compared without regard to case, and a
            // prefix of the email, name or external ID, each through an index of its folded value
            // (ASCII letters made small, as `lower` does here) with the ID, so a search reads its
            // ranges and the page's IDs from the indexes alone. Partial: anonymous profiles, which
            // have none of the three, write none of them.
            """
            CREATE INDEX profiles_email_folded ON profiles (project_id, lower(email), id) WHERE email IS NOT NULL;
            CREATE INDEX profiles_name_folded ON profiles (project_id, lower(name), id) WHERE name IS NOT NULL;
            CREATE INDEX profiles_external_id_folded ON profiles (project_id, lower(external_id), id)
                WHERE external_id IS NOT NULL;
            """
        ),
        .expand(
            14,
            // The node registry (issue 29): every running node's release, the schema version it
            // knows, when it started and its latest heartbeat, so `tessera migrate contract` refuses
            // while an older node is alive. A node deletes its row on a graceful shutdown.
            """
            CREATE TABLE nodes (
                node_id TEXT PRIMARY KEY,
                release TEXT NOT NULL,
                schema_version INTEGER NOT NULL,
                started_at INTEGER NOT NULL,
                heartbeat_at INTEGER NOT NULL
            );
            """
        ),
        .expand(
            15,
            // Active users (issue 25): each profile seen active on a day, per installation and kind
            // (anonymous or identified), written at most once a day by a node (ON CONFLICT DO NOTHING
            // behind the node's memory of what it wrote); identifiers only. And counts per project and
            // day: identify outcomes and refusals, App Attest checks and what enforce would refuse.
            """
            CREATE TABLE profile_activity (
                project_id TEXT NOT NULL,
                day INTEGER NOT NULL,
                identified INTEGER NOT NULL,
                profile_id TEXT NOT NULL,
                installation_id TEXT NOT NULL,
                PRIMARY KEY (project_id, day, identified, profile_id, installation_id)
            ) WITHOUT ROWID;
            CREATE INDEX profile_activity_profile ON profile_activity (profile_id);
            CREATE TABLE daily_tallies (
                project_id TEXT NOT NULL,
                day INTEGER NOT NULL,
                name TEXT NOT NULL,
                count INTEGER NOT NULL,
                PRIMARY KEY (project_id, day, name)
            ) WITHOUT ROWID;
            """
        ),
        .expand(
            16,
            // Sessions with their last client (issue 25): the address and user agent that created
            // the session, then the latest that used it, written only when they change
            // (SessionClientRecorder). Nullable: an older node inserts sessions without them.
            """
            ALTER TABLE sessions ADD COLUMN client_address TEXT;
            ALTER TABLE sessions ADD COLUMN user_agent TEXT;
            """
        ),
        .expand(
            17,
            // Tracing (issue 29): the W3C `traceparent` (and `tracestate`) of the request that wrote an event, sent on its
            // webhook deliveries; NULL when tracing is off or the event has no request behind it.
            """
            ALTER TABLE events ADD COLUMN trace_context TEXT;
            """
        ),
        .expand(
            18,
            // Active users counted as they are written (issue 25): a trigger on `profile_activity`
            // adds, in the inserting transaction, to the day's distinct counts (`active.*` rows of
            // `activity_counts`) when the row is the subject's first of the day and kind, and keeps
            // each subject's latest active day (`activity_latest`) with how many subjects have each
            // day as their latest (`latest.*` rows), so a window is a sum of at most 30 rows. The
            // trigger counts a previous release's writes too. `activity_installations` answers
            // "was this installation active that day" by its key. Rows written before this step are
            // counted by the backfill (`activity_backfill`: per project, the next day to count and
            // the last), a day per write transaction (SQLiteStore.backfillActivity).
            """
            CREATE TABLE activity_installations (
                project_id TEXT NOT NULL,
                day INTEGER NOT NULL,
                identified INTEGER NOT NULL,
                installation_id TEXT NOT NULL,
                PRIMARY KEY (project_id, day, identified, installation_id)
            ) WITHOUT ROWID;
            CREATE TABLE activity_latest (
                project_id TEXT NOT NULL,
                name TEXT NOT NULL,
                subject_id TEXT NOT NULL,
                day INTEGER NOT NULL,
                PRIMARY KEY (project_id, name, subject_id)
            ) WITHOUT ROWID;
            CREATE INDEX activity_latest_day ON activity_latest (day);
            CREATE TABLE activity_counts (
                project_id TEXT NOT NULL,
                day INTEGER NOT NULL,
                name TEXT NOT NULL,
                count INTEGER NOT NULL,
                PRIMARY KEY (project_id, day, name)
            ) WITHOUT ROWID;
            CREATE TABLE activity_backfill (
                project_id TEXT PRIMARY KEY,
                next_day INTEGER NOT NULL,
                last_day INTEGER NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO activity_backfill (project_id, next_day, last_day)
            SELECT id, first, MAX(last, CAST(strftime('%s', 'now') AS INTEGER) / 86400) FROM (
                SELECT id, (SELECT MIN(day) FROM profile_activity a WHERE a.project_id = projects.id) AS first,
                    (SELECT MAX(day) FROM profile_activity a WHERE a.project_id = projects.id) AS last
                FROM projects)
            WHERE first IS NOT NULL;
            CREATE TRIGGER profile_activity_counts AFTER INSERT ON profile_activity BEGIN
            \(activityTrigger)
            END;
            """
        ),
        .expand(
            19,
            // The backfill in bounded steps (issue 25): where the day being counted got to, so a day
            // is counted in chunks of its rows (in key order), each its own write transaction, and a
            // restart resumes after the last chunk done. `done_day` is the day those keys belong to
            // (when it is not `next_day`, the day starts afresh). And the audit log of one profile
            // through an index of its own (the audit index alone reads every audit entry newer than
            // the profile's).
            """
            ALTER TABLE activity_backfill ADD COLUMN done_day INTEGER;
            ALTER TABLE activity_backfill ADD COLUMN done_identified INTEGER;
            ALTER TABLE activity_backfill ADD COLUMN done_profile_id TEXT;
            ALTER TABLE activity_backfill ADD COLUMN done_installation_id TEXT;
            CREATE INDEX events_audit_profile ON events (project_id, profile_id, sequence)
                WHERE actor_type IN ('secret_key', 'operator') AND profile_id IS NOT NULL;
            """
        ),
    ]

    /// The body of migration 18's trigger: for the new row of `profile_activity` (`NEW`), the day's
    /// distinct counts, then each subject's latest day and the count of subjects per latest day.
    /// Fixed text: a migration never changes once released.
    private static let activityTrigger: String = {
        let kind = "CASE WHEN NEW.identified THEN 'identified' ELSE 'anonymous' END"
        func add(_ name: String, when condition: String) -> String {
            """
            INSERT INTO activity_counts (project_id, day, name, count)
            SELECT NEW.project_id, NEW.day, \(name), 1 WHERE \(condition)
            ON CONFLICT (project_id, day, name) DO UPDATE SET count = count + 1;
            """
        }
        func latest(_ name: String, subject: String, when condition: String) -> String {
            let moves = """
                \(condition) AND NOT EXISTS (SELECT 1 FROM activity_latest WHERE project_id = NEW.project_id
                    AND name = \(name) AND subject_id = \(subject) AND day >= NEW.day)
                """
            let increment = add("'latest.' || \(name)", when: moves)
            return """
                UPDATE activity_counts SET count = count - 1
                WHERE \(condition) AND project_id = NEW.project_id AND name = 'latest.' || \(name) AND day = (
                    SELECT day FROM activity_latest
                    WHERE project_id = NEW.project_id AND name = \(name) AND subject_id = \(subject) AND day < NEW.day);
                \(increment)
                INSERT INTO activity_latest (project_id, name, subject_id, day)
                SELECT NEW.project_id, \(name), \(subject), NEW.day WHERE \(condition)
                ON CONFLICT (project_id, name, subject_id) DO UPDATE SET day = excluded.day
                WHERE excluded.day > activity_latest.day;
                """
        }
        let installed = "NEW.installation_id <> ''"
        return [
            add(
                "'active.profiles'",
                when: """
                    NOT EXISTS (SELECT 1 FROM profile_activity WHERE project_id = NEW.project_id AND day = NEW.day
                        AND identified IN (0, 1) AND profile_id = NEW.profile_id
                        AND (identified <> NEW.identified OR installation_id <> NEW.installation_id))
                    """),
            add(
                "'active.profiles.' || \(kind)",
                when: """
                    NOT EXISTS (SELECT 1 FROM profile_activity WHERE project_id = NEW.project_id AND day = NEW.day
                        AND identified = NEW.identified AND profile_id = NEW.profile_id
                        AND installation_id <> NEW.installation_id)
                    """),
            add(
                "'active.installations'",
                when: """
                    \(installed) AND NOT EXISTS (SELECT 1 FROM activity_installations WHERE project_id = NEW.project_id
                        AND day = NEW.day AND identified IN (0, 1) AND installation_id = NEW.installation_id)
                    """),
            add(
                "'active.installations.' || \(kind)",
                when: """
                    \(installed) AND NOT EXISTS (SELECT 1 FROM activity_installations WHERE project_id = NEW.project_id
                        AND day = NEW.day AND identified = NEW.identified AND installation_id = NEW.installation_id)
                    """),
            """
            INSERT INTO activity_installations (project_id, day, identified, installation_id)
            SELECT NEW.project_id, NEW.day, NEW.identified, NEW.installation_id WHERE \(installed)
            ON CONFLICT DO NOTHING;
            """,
            latest("'profiles'", subject: "NEW.profile_id", when: "1"),
            latest("'profiles.' || \(kind)", subject: "NEW.profile_id", when: "1"),
            latest("'installations'", subject: "NEW.installation_id", when: installed),
            latest("'installations.' || \(kind)", subject: "NEW.installation_id", when: installed),
        ].joined(separator: "\n")
    }()
}
