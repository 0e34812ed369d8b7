/// The column lists both backends select, in the order their row readers read them: the schema is
/// one, so the lists are written once.
protocol StoreColumns {}

extension StoreColumns {
    static var profileColumns: String {
        "id, project_id, kind, external_id, verified, name, avatar_url, email, created_at, updated_at, blocked_at"
    }
    static var qualifiedProfileColumns: String {
        """
        p.id, p.project_id, p.kind, p.external_id, p.verified, p.name, p.avatar_url, p.email, p.created_at,
        p.updated_at, p.blocked_at
        """
    }
    static var sessionColumns: String {
        """
        id, project_id, profile_id, installation_id, kind, created_at, last_authenticated_at, expires_at, revoked_at,
        jkt, key_tier
        """
    }
    static var projectColumns: String {
        """
        id, name, slug, allow_unverified_identify, require_audience, expected_issuer,
        max_identity_token_lifetime_seconds, leeway_seconds, anonymous_session_minutes,
        identified_session_minutes, created_at, updated_at, rate_limit_anonymous_starts,
        rate_limit_failed_identifies, rate_limit_failed_identifies_installation, session_binding,
        dpop_nonce_required, max_sessions_per_profile, app_attest_mode, app_attest_app_ids, app_attest_environment,
        app_attest_allow_unsupported
        """
    }
    static var deviceColumns: String {
        "id, project_id, session_id, profile_id, platform, environment, token, created_at"
    }
    static var contextColumns: String {
        """
        s.id, s.project_id, s.profile_id, s.installation_id, s.kind, s.created_at, s.last_authenticated_at,
        s.expires_at, s.revoked_at, p.id, p.project_id, p.kind, p.external_id, p.verified, p.name, p.avatar_url,
        p.email, p.created_at, p.updated_at, p.blocked_at, s.jkt, s.key_tier
        """
    }
    static var operatorColumns: String {
        """
        id, email, role, password_hash, totp_secret, totp_last_step, created_at, enrolled_at, last_login_at
        """
    }
    static var qualifiedOperatorColumns: String {
        """
        o.id, o.email, o.role, o.password_hash, o.totp_secret, o.totp_last_step, o.created_at, o.enrolled_at,
        o.last_login_at
        """
    }
    static var operatorSessionColumns: String {
        "s.id, s.operator_id, s.token_hash, s.csrf_token, s.created_at, s.last_seen_at, s.expires_at"
    }
    static var appAttestColumns: String {
        """
        project_id, installation_id, verdict, enforce_would_refuse, key_id, public_key, counter, environment, app_id,
        receipt, attested_at, updated_at
        """
    }
    static var webhookColumns: String {
        """
        id, project_id, url, types, description, enabled, created_at, updated_at, disabled_at, disabled_reason,
        secret, previous_secret, previous_secret_expires_at
        """
    }
    static var eventColumns: String {
        "id, project_id, sequence, type, created_at, actor_type, actor_id, client_address, profile_id, data, reason"
    }
}

extension SQLiteStore: StoreColumns {}
extension PostgresStore: StoreColumns {}
