extension JSONWriter {
    /// `"name": [ … ]`, each element written by `element`.
    mutating func array<Elements: Sequence>(
        _ name: StaticString, _ elements: Elements, _ element: (inout JSONWriter, Elements.Element) -> Void
    ) {
        key(name)
        arrayStart()
        for item in elements { element(&self, item) }
        arrayEnd()
    }

    /// A profile; admin answers (`admin`) also say whether it is `blocked`.
    mutating func profile(_ profile: ProfileRecord, admin: Bool = false) {
        objectStart()
        field("id", profile.id)
        field("kind", profile.kind.rawValue)
        field("external_id", profile.externalID)
        field("verified", profile.verified)
        field("name", profile.name)
        field("avatar_url", profile.avatarURL)
        field("email", profile.email)
        time("created_at", profile.createdAt)
        time("updated_at", profile.updatedAt)
        if admin { field("blocked", profile.blocked) }
        objectEnd()
    }

    mutating func session(_ session: SessionRecord) {
        objectStart()
        field("id", session.id)
        field("profile_id", session.profileID)
        field("installation_id", session.installationID)
        time("created_at", session.createdAt)
        time("last_authenticated_at", session.lastAuthenticatedAt)
        time("expires_at", session.expiresAt)
        key("binding")
        if let jkt = session.jkt {
            objectStart()
            field("jkt", jkt)
            field("key_tier", session.keyTier?.rawValue)
            objectEnd()
        } else {
            null()
        }
        objectEnd()
    }

    mutating func capabilities(_ session: SessionRecord) {
        objectStart()
        field("authenticated", session.kind == .verified)
        field("kind", session.kind.rawValue)
        objectEnd()
    }

    mutating func device(_ device: DeviceRecord, includeToken: Bool) {
        objectStart()
        field("id", device.id)
        field("platform", device.platform)
        field("environment", device.environment)
        field("session_id", device.sessionID)
        time("created_at", device.createdAt)
        if includeToken {
            field("token", device.token)
            // Admin listings: whether a signed identity token established the registering session
            // (false for anonymous and unverified sessions, whose user ID anyone can assert).
            field("verified_session", device.sessionKind == .verified)
        }
        objectEnd()
    }

    mutating func sessions(_ sessions: [SessionRecord]) {
        objectStart()
        array("sessions", sessions) { $0.session($1) }
        objectEnd()
    }

    /// `{project}`: its settings, identity secrets (without values) and, in `app_attest_installations`,
    /// how many installations have each App Attest verdict and how many `enforce` would have refused.
    mutating func project(
        _ project: ProjectRecord, secrets: [IdentitySecretRecord], appAttestCounts: AppAttestCounts
    ) {
        objectStart()
        key("project")
        objectStart()
        field("id", project.id)
        field("name", project.name)
        field("slug", project.slug)
        time("created_at", project.createdAt)
        time("updated_at", project.updatedAt)
        key("settings")
        objectStart()
        let settings = project.settings
        field("allow_unverified_identify", settings.allowUnverifiedIdentify)
        field("require_audience", settings.requireAudience)
        field("expected_issuer", settings.expectedIssuer)
        field("max_identity_token_lifetime_seconds", settings.maxIdentityTokenLifetimeSeconds)
        field("leeway_seconds", settings.leewaySeconds)
        field("anonymous_session_minutes", settings.anonymousSessionMinutes)
        field("identified_session_minutes", settings.identifiedSessionMinutes)
        key("rate_limits")
        objectStart()
        for (name, value) in settings.rateLimits.wireFields {
            key(named: name)
            if let value { integer(value) } else { null() }
        }
        objectEnd()
        field("session_binding", settings.sessionBinding.rawValue)
        field("dpop_nonce_required", settings.dpopNonceRequired)
        key("max_sessions_per_profile")
        if let limit = settings.maxSessionsPerProfile { integer(limit) } else { null() }
        key("app_attest")
        objectStart()
        field("mode", settings.appAttest.mode.rawValue)
        array("app_ids", settings.appAttest.appIDs) { $0.string($1) }
        field("environment", settings.appAttest.environment.rawValue)
        field("allow_unsupported", settings.appAttest.allowUnsupported)
        objectEnd()
        objectEnd()
        array("identity_secrets", secrets) { writer, secret in
            writer.objectStart()
            writer.field("kid", secret.kid)
            writer.time("created_at", secret.createdAt)
            writer.objectEnd()
        }
        key("app_attest_installations")
        objectStart()
        for verdict in ["attested", "unattested", "failed", "unsupported"] {
            key(named: verdict)
            integer(Int64(appAttestCounts.verdicts[verdict] ?? 0))
        }
        field("enforce_would_refuse", appAttestCounts.enforceWouldRefuse)
        objectEnd()
        objectEnd()
        objectEnd()
    }
}
