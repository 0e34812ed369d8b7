/// The versioned schema of the PostgreSQL store.
///
/// ``PostgresStore/migrate(_:)`` applies the missing steps of one kind (see ``MigrationStep``) in
/// one transaction that first takes an advisory lock named after ``lockName`` and the schema
/// (`pg_advisory_xact_lock`), so several nodes starting at once apply each step exactly once: the
/// others wait for the lock, then find the steps already recorded. Each entry is an expand or a
/// contract step, with the same number and kind as in `SQLiteMigrations`.
enum PostgresMigrations {
    /// The name the advisory lock key of migrations is hashed from.
    static let lockName = "tessera-migrations"

    static let all: [MigrationStep] = [
        .expand(
            1,
            """
            CREATE TABLE projects (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                slug TEXT NOT NULL UNIQUE,
                publishable_key_hash BYTEA NOT NULL UNIQUE,
                secret_key_hash BYTEA NOT NULL UNIQUE,
                allow_unverified_identify BOOLEAN NOT NULL DEFAULT FALSE,
                require_audience BOOLEAN NOT NULL DEFAULT FALSE,
                expected_issuer TEXT,
                max_identity_token_lifetime_seconds BIGINT NOT NULL DEFAULT 3600,
                leeway_seconds BIGINT NOT NULL DEFAULT 60,
                anonymous_session_minutes BIGINT NOT NULL DEFAULT 525600,
                identified_session_minutes BIGINT NOT NULL DEFAULT 43200,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            );
            CREATE TABLE identity_secrets (
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                kid TEXT NOT NULL,
                secret TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (project_id, kid)
            );
            CREATE TABLE session_keys (
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                kid TEXT NOT NULL,
                private_key BYTEA NOT NULL,
                created_at BIGINT NOT NULL,
                retired_at BIGINT,
                PRIMARY KEY (project_id, kid)
            );
            CREATE TABLE profiles (
                id TEXT PRIMARY KEY,
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                external_id TEXT,
                verified BOOLEAN NOT NULL,
                name TEXT,
                avatar_url TEXT,
                email TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            );
            CREATE UNIQUE INDEX profiles_external_id ON profiles (project_id, verified, external_id)
                WHERE external_id IS NOT NULL;
            CREATE INDEX profiles_anonymous_created ON profiles (created_at) WHERE kind = 'anonymous';
            CREATE TABLE profile_aliases (
                alias_id TEXT PRIMARY KEY,
                project_id TEXT NOT NULL,
                profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL
            );
            CREATE INDEX profile_aliases_profile ON profile_aliases (profile_id);
            CREATE TABLE installations (
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                installation_id TEXT NOT NULL,
                secret_hash BYTEA NOT NULL,
                profile_id TEXT REFERENCES profiles(id) ON DELETE SET NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (project_id, installation_id)
            );
            CREATE INDEX installations_profile ON installations (profile_id);
            CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                project_id TEXT NOT NULL,
                profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
                token_hash BYTEA NOT NULL UNIQUE,
                installation_id TEXT,
                kind TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                last_authenticated_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                revoked_at BIGINT
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
                created_at BIGINT NOT NULL,
                CONSTRAINT devices_token UNIQUE (project_id, platform, token)
            );
            CREATE INDEX devices_session ON devices (session_id);
            CREATE INDEX devices_profile ON devices (profile_id);
            CREATE TABLE used_token_ids (
                project_id TEXT NOT NULL,
                jti TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (project_id, jti)
            );
            CREATE INDEX used_token_ids_expires_at ON used_token_ids (expires_at);
            """
        ),
        .expand(
            2,
            // Rate-limit counters live for a minute: UNLOGGED spares them the WAL (a crash or a
            // failover only resets the current windows), so counting a failure costs no fsync.
            """
            ALTER TABLE projects ADD COLUMN rate_limit_anonymous_starts BIGINT DEFAULT 600;
            ALTER TABLE projects ADD COLUMN rate_limit_failed_identifies BIGINT DEFAULT 60;
            ALTER TABLE projects ADD COLUMN rate_limit_failed_identifies_installation BIGINT DEFAULT 10;
            CREATE UNLOGGED TABLE rate_limit_windows (
                project_id TEXT NOT NULL,
                bucket TEXT NOT NULL,
                key TEXT NOT NULL,
                window_start BIGINT NOT NULL,
                hits BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (project_id, bucket, key, window_start)
            );
            CREATE INDEX rate_limit_windows_expires_at ON rate_limit_windows (expires_at);
            """
        ),
        .expand(
            3,
            // Rotation, blocking and introspection (issue 13): when each identity secret was last used,
            // blocked profiles, and API keys rotated out but still inside their grace period.
            """
            ALTER TABLE identity_secrets ADD COLUMN last_used_at BIGINT;
            ALTER TABLE profiles ADD COLUMN blocked_at BIGINT;
            ALTER TABLE profiles ADD COLUMN blocked_reason TEXT;
            CREATE TABLE retired_api_keys (
                key_hash BYTEA PRIMARY KEY,
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                expires_at BIGINT NOT NULL
            );
            CREATE INDEX retired_api_keys_project ON retired_api_keys (project_id);
            """
        ),
        .expand(
            4,
            // The events outbox (issue 15): each change's events are written to event_outbox in its
            // transaction, without a sequence; the sequencer moves committed ones into events with the
            // project's next sequences from its counter row (see PostgresStore.append and
            // sequenceEvents). Event IDs are time-ordered, and retention deletes from the head of each
            // project's sequence (no index on created_at).
            """
            CREATE TABLE event_outbox (
                position BIGSERIAL PRIMARY KEY,
                project_id TEXT NOT NULL,
                id TEXT NOT NULL,
                type TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                actor_type TEXT NOT NULL,
                actor_id TEXT,
                client_address TEXT,
                profile_id TEXT,
                data TEXT NOT NULL
            );
            CREATE TABLE event_counters (
                project_id TEXT PRIMARY KEY,
                last_sequence BIGINT NOT NULL
            );
            CREATE TABLE events (
                project_id TEXT NOT NULL,
                sequence BIGINT NOT NULL,
                id TEXT NOT NULL UNIQUE,
                type TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                actor_type TEXT NOT NULL,
                actor_id TEXT,
                client_address TEXT,
                profile_id TEXT,
                data TEXT NOT NULL,
                PRIMARY KEY (project_id, sequence)
            );
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
                enabled BOOLEAN NOT NULL DEFAULT TRUE,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                disabled_at BIGINT,
                disabled_reason TEXT,
                secret TEXT NOT NULL,
                previous_secret TEXT,
                previous_secret_expires_at BIGINT
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
            ALTER TABLE webhooks ADD COLUMN cursor_sequence BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE webhooks ADD COLUMN failing_since BIGINT;
            CREATE TABLE webhook_deliveries (
                webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
                event_id TEXT NOT NULL,
                project_id TEXT NOT NULL,
                sequence BIGINT,
                event_type TEXT NOT NULL,
                event_created_at BIGINT NOT NULL,
                body TEXT,
                state TEXT NOT NULL,
                attempt BIGINT NOT NULL DEFAULT 0,
                next_attempt_at BIGINT,
                lease_owner TEXT,
                lease_expires_at BIGINT,
                attempted_at BIGINT,
                status_code BIGINT,
                error TEXT,
                duration_ms BIGINT,
                queued_at BIGINT NOT NULL,
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
            ALTER TABLE event_outbox ADD COLUMN reason TEXT;
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
                email TEXT NOT NULL,
                role TEXT NOT NULL,
                password_hash TEXT,
                totp_secret TEXT,
                totp_last_step BIGINT,
                created_at BIGINT NOT NULL,
                enrolled_at BIGINT,
                last_login_at BIGINT,
                CONSTRAINT operators_email_key UNIQUE (email)
            );
            CREATE TABLE operator_enrollments (
                token_hash BYTEA PRIMARY KEY,
                operator_id TEXT NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
                expires_at BIGINT NOT NULL
            );
            CREATE INDEX operator_enrollments_operator ON operator_enrollments (operator_id);
            CREATE INDEX operator_enrollments_expires_at ON operator_enrollments (expires_at);
            CREATE TABLE operator_sessions (
                id TEXT PRIMARY KEY,
                operator_id TEXT NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
                token_hash BYTEA NOT NULL UNIQUE,
                csrf_token TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                last_seen_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL
            );
            CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id);
            CREATE INDEX operator_sessions_expires_at ON operator_sessions (expires_at);
            CREATE INDEX operator_sessions_last_seen_at ON operator_sessions (last_seen_at);
            """
        ),
        .expand(
            9,
            // Sessions bound to a device key (RFC 9449): see SQLiteMigrations' version 9.
            """
            ALTER TABLE sessions ADD COLUMN jkt TEXT;
            ALTER TABLE projects ADD COLUMN session_binding TEXT NOT NULL DEFAULT 'optional';
            ALTER TABLE projects ADD COLUMN dpop_nonce_required BOOLEAN NOT NULL DEFAULT false;
            CREATE TABLE used_dpop_proofs (
                jkt TEXT NOT NULL,
                jti TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
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
                sealed BYTEA NOT NULL,
                expires_at BIGINT NOT NULL
            );
            CREATE INDEX console_flashes_session ON console_flashes (session_id);
            CREATE TABLE api_key_hints (
                key_hash BYTEA PRIMARY KEY,
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
                created_at BIGINT NOT NULL
            );
            CREATE TABLE webhook_attempts (
                id TEXT PRIMARY KEY,
                webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
                event_id TEXT NOT NULL,
                attempt BIGINT NOT NULL,
                at BIGINT NOT NULL,
                status_code BIGINT,
                error TEXT,
                duration_ms BIGINT NOT NULL,
                request_body TEXT,
                response_body BYTEA
            );
            CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, at, id);
            CREATE INDEX webhook_attempts_event ON webhook_attempts (webhook_id, event_id, at, id);
            CREATE INDEX webhook_attempts_at ON webhook_attempts (at);
            CREATE INDEX webhook_attempts_event_id ON webhook_attempts (event_id);
            """
        ),
        .expand(
            11,
            // The user's devices (issue 27): see SQLiteMigrations' version 11.
            """
            ALTER TABLE projects ADD COLUMN max_sessions_per_profile BIGINT;
            ALTER TABLE sessions ADD COLUMN key_tier TEXT;
            CREATE TABLE profile_keys (
                profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
                jkt TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (profile_id, jkt)
            );
            """
        ),
        .expand(
            12,
            // App Attest (issue 28): see SQLiteMigrations' version 12. The project's app_attest setting (app IDs space-separated), the
            // challenges (their SHA-256, single-use, five minutes) and each installation's verdict and
            // attested key with its counter.
            """
            ALTER TABLE projects ADD COLUMN app_attest_mode TEXT NOT NULL DEFAULT 'off';
            ALTER TABLE projects ADD COLUMN app_attest_app_ids TEXT NOT NULL DEFAULT '';
            ALTER TABLE projects ADD COLUMN app_attest_environment TEXT NOT NULL DEFAULT 'production';
            ALTER TABLE projects ADD COLUMN app_attest_allow_unsupported BOOLEAN NOT NULL DEFAULT FALSE;
            CREATE TABLE app_attest_challenges (
                challenge_hash BYTEA PRIMARY KEY,
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                expires_at BIGINT NOT NULL
            );
            CREATE INDEX app_attest_challenges_expires_at ON app_attest_challenges (expires_at);
            CREATE TABLE app_attest_installations (
                project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                installation_id TEXT NOT NULL,
                verdict TEXT NOT NULL,
                enforce_would_refuse BOOLEAN NOT NULL,
                key_id BYTEA,
                public_key BYTEA,
                counter BIGINT,
                environment TEXT,
                app_id TEXT,
                receipt BYTEA,
                attested_at BIGINT,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (project_id, installation_id)
            );
            """
        ),
        .expand(
            13,
            // The profile list's search (issue 25): see SQLiteMigrations' version 13. The folded value
            // is `translate` of the ASCII capitals (not `lower`, which follows the database's locale
            // and would answer differently from SQLite), compared in the "C" collation, so a prefix is
            // one range of the index.
            """
            CREATE INDEX profiles_email_folded ON profiles (project_id, (translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')) COLLATE "C", id)
                WHERE email IS NOT NULL;
            CREATE INDEX profiles_name_folded ON profiles (project_id, (translate(name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')) COLLATE "C", id)
                WHERE name IS NOT NULL;
            CREATE INDEX profiles_external_id_folded ON profiles (project_id, (translate(external_id, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')) COLLATE "C", id)
                WHERE external_id IS NOT NULL;
            """
        ),
        .expand(
            14,
            // The node registry (issue 29): see SQLiteMigrations' version 14.
            """
            CREATE TABLE nodes (
                node_id TEXT PRIMARY KEY,
                release TEXT NOT NULL,
                schema_version BIGINT NOT NULL,
                started_at BIGINT NOT NULL,
                heartbeat_at BIGINT NOT NULL
            );
            """
        ),
        .expand(
            15,
            // Active users (issue 25): see SQLiteMigrations' version 15.
            """
            CREATE TABLE profile_activity (
                project_id TEXT NOT NULL,
                day BIGINT NOT NULL,
                identified BOOLEAN NOT NULL,
                profile_id TEXT NOT NULL,
                installation_id TEXT NOT NULL,
                PRIMARY KEY (project_id, day, identified, profile_id, installation_id)
            );
            CREATE INDEX profile_activity_profile ON profile_activity (profile_id);
            CREATE TABLE daily_tallies (
                project_id TEXT NOT NULL,
                day BIGINT NOT NULL,
                name TEXT NOT NULL,
                count BIGINT NOT NULL,
                PRIMARY KEY (project_id, day, name)
            );
            """
        ),
        .expand(
            16,
            // Sessions with their last client (issue 25): see SQLiteMigrations' version 16. Nullable
            // columns without a default: a change of the catalog only, no table rewrite.
            """
            ALTER TABLE sessions ADD COLUMN client_address TEXT, ADD COLUMN user_agent TEXT;
            """
        ),
        .expand(
            17,
            // Tracing (issue 29): see SQLiteMigrations' version 17; the outbox keeps it until the
            // sequencer moves the event.
            """
            ALTER TABLE events ADD COLUMN trace_context TEXT;
            ALTER TABLE event_outbox ADD COLUMN trace_context TEXT;
            """
        ),
        .expand(
            18,
            // Active users counted as they are written (issue 25): see SQLiteMigrations' version 18.
            // Here the trigger first locks the subject's `activity_latest` row (inserting it, or
            // `FOR UPDATE`), so two transactions writing the same profile's or installation's
            // activity decide one after the other, each on what the other committed. Function
            // bodies are dollar-quoted (the migration runner does not split inside them).
            """
            CREATE TABLE activity_installations (
                project_id TEXT NOT NULL,
                day BIGINT NOT NULL,
                identified BOOLEAN NOT NULL,
                installation_id TEXT NOT NULL,
                PRIMARY KEY (project_id, day, identified, installation_id)
            );
            CREATE TABLE activity_latest (
                project_id TEXT NOT NULL,
                name TEXT NOT NULL,
                subject_id TEXT NOT NULL,
                day BIGINT NOT NULL,
                PRIMARY KEY (project_id, name, subject_id)
            );
            CREATE INDEX activity_latest_day ON activity_latest (day);
            CREATE TABLE activity_counts (
                project_id TEXT NOT NULL,
                day BIGINT NOT NULL,
                name TEXT NOT NULL,
                count BIGINT NOT NULL,
                PRIMARY KEY (project_id, day, name)
            );
            CREATE TABLE activity_backfill (
                project_id TEXT PRIMARY KEY,
                next_day BIGINT NOT NULL,
                last_day BIGINT NOT NULL
            );
            INSERT INTO activity_backfill (project_id, next_day, last_day)
            SELECT id, first, GREATEST(last, floor(extract(epoch FROM now()) / 86400)::bigint) FROM (
                SELECT id, (SELECT MIN(day) FROM profile_activity a WHERE a.project_id = projects.id) AS first,
                    (SELECT MAX(day) FROM profile_activity a WHERE a.project_id = projects.id) AS last
                FROM projects) p
            WHERE first IS NOT NULL;
            CREATE FUNCTION activity_count_add(p TEXT, d BIGINT, n TEXT, c BIGINT) RETURNS void
            LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO activity_counts (project_id, day, name, count) VALUES (p, d, n, c)
                ON CONFLICT (project_id, day, name) DO UPDATE SET count = activity_counts.count + excluded.count;
            END $$;
            CREATE FUNCTION activity_latest_move(p TEXT, m TEXT, s TEXT, d BIGINT) RETURNS void
            LANGUAGE plpgsql AS $$
            DECLARE
                old BIGINT;
            BEGIN
                INSERT INTO activity_latest (project_id, name, subject_id, day) VALUES (p, m, s, d)
                ON CONFLICT DO NOTHING;
                IF FOUND THEN
                    PERFORM activity_count_add(p, d, 'latest.' || m, 1);
                    RETURN;
                END IF;
                SELECT day INTO old FROM activity_latest
                WHERE project_id = p AND name = m AND subject_id = s FOR UPDATE;
                IF old < d THEN
                    UPDATE activity_latest SET day = d WHERE project_id = p AND name = m AND subject_id = s;
                    UPDATE activity_counts SET count = count - 1
                    WHERE project_id = p AND day = old AND name = 'latest.' || m;
                    PERFORM activity_count_add(p, d, 'latest.' || m, 1);
                END IF;
            END $$;
            CREATE FUNCTION profile_activity_counts() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
                kind TEXT := CASE WHEN NEW.identified THEN 'identified' ELSE 'anonymous' END;
                mine xid;
                command cid;
            BEGIN
                -- The profile's rows locked first: what follows reads what an earlier writer committed.
                PERFORM activity_latest_move(NEW.project_id, 'profiles', NEW.profile_id, NEW.day);
                PERFORM activity_latest_move(NEW.project_id, 'profiles.' || kind, NEW.profile_id, NEW.day);
                -- Row triggers run after the whole statement, which sees all its rows: of the rows one
                -- statement inserted (same xmin and cmin), the first by key is the one that counts.
                SELECT xmin, cmin INTO mine, command FROM profile_activity
                WHERE project_id = NEW.project_id AND day = NEW.day AND identified = NEW.identified
                    AND profile_id = NEW.profile_id AND installation_id = NEW.installation_id;
                IF NOT EXISTS (
                    SELECT 1 FROM profile_activity a WHERE a.project_id = NEW.project_id AND a.day = NEW.day
                        AND a.profile_id = NEW.profile_id
                        AND (a.identified, a.installation_id) <> (NEW.identified, NEW.installation_id)
                        AND (NOT (a.xmin = mine AND a.cmin = command)
                            OR (a.identified, a.installation_id) < (NEW.identified, NEW.installation_id)))
                THEN
                    PERFORM activity_count_add(NEW.project_id, NEW.day, 'active.profiles', 1);
                END IF;
                IF NOT EXISTS (
                    SELECT 1 FROM profile_activity a WHERE a.project_id = NEW.project_id AND a.day = NEW.day
                        AND a.identified = NEW.identified AND a.profile_id = NEW.profile_id
                        AND a.installation_id <> NEW.installation_id
                        AND (NOT (a.xmin = mine AND a.cmin = command) OR a.installation_id < NEW.installation_id))
                THEN
                    PERFORM activity_count_add(NEW.project_id, NEW.day, 'active.profiles.' || kind, 1);
                END IF;
                IF NEW.installation_id = '' THEN
                    RETURN NULL;
                END IF;
                PERFORM activity_latest_move(NEW.project_id, 'installations', NEW.installation_id, NEW.day);
                PERFORM activity_latest_move(
                    NEW.project_id, 'installations.' || kind, NEW.installation_id, NEW.day);
                INSERT INTO activity_installations (project_id, day, identified, installation_id)
                VALUES (NEW.project_id, NEW.day, NEW.identified, NEW.installation_id) ON CONFLICT DO NOTHING;
                IF FOUND THEN
                    PERFORM activity_count_add(NEW.project_id, NEW.day, 'active.installations.' || kind, 1);
                    IF NOT EXISTS (
                        SELECT 1 FROM activity_installations WHERE project_id = NEW.project_id AND day = NEW.day
                            AND identified <> NEW.identified AND installation_id = NEW.installation_id)
                    THEN
                        PERFORM activity_count_add(NEW.project_id, NEW.day, 'active.installations', 1);
                    END IF;
                END IF;
                RETURN NULL;
            END $$;
            CREATE TRIGGER profile_activity_counts AFTER INSERT ON profile_activity
            FOR EACH ROW EXECUTE FUNCTION profile_activity_counts();
            """
        ),
        .expand(
            19,
            // The backfill in bounded steps and the audit log of one profile (issue 25): see
            // SQLiteMigrations' version 19.
            """
            ALTER TABLE activity_backfill ADD COLUMN done_day BIGINT, ADD COLUMN done_identified BOOLEAN,
                ADD COLUMN done_profile_id TEXT, ADD COLUMN done_installation_id TEXT;
            CREATE INDEX events_audit_profile ON events (project_id, profile_id, sequence)
                WHERE actor_type IN ('secret_key', 'operator') AND profile_id IS NOT NULL;
            """
        ),
    ]

    /// The statements of a step's SQL: split at each `;` outside a dollar-quoted (`$$`) body.
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var quoted = false
        var index = sql.startIndex
        while index < sql.endIndex {
            if sql[index...].hasPrefix("$$") {
                quoted.toggle()
                current += "$$"
                index = sql.index(index, offsetBy: 2)
                continue
            }
            if sql[index] == ";" && !quoted {
                statements.append(current)
                current = ""
            } else {
                current.append(sql[index])
            }
            index = sql.index(after: index)
        }
        statements.append(current)
        return statements.filter { !$0.allSatisfy(\.isWhitespace) }
    }
}
