extension ServerConfiguration {
    /// The effective configuration as `name: value` lines, without any secret: the database URL
    /// with its password redacted, the master key files with their key IDs, never a key.
    ///
    /// Reads and checks the master key files as `serve` would; throws ``MasterKeyError`` when one
    /// cannot be used, or when PostgreSQL is configured without one.
    public func report() throws(MasterKeyError) -> String {
        let keys = try MasterKeySetup(configuration: self)
        var lines: [(String, String)] = [
            ("host", host),
            ("port", String(port)),
            ("public_url", issuer),
            ("database", database.redacted),
        ]
        if let file = keys.file {
            let state = keys.needsCreating ? "created on first start" : "key \(keys.keyring.current.id)"
            lines.append(("master_key_file", "\(file) (\(state))"))
        } else {
            lines.append(("master_key", "given directly (key \(keys.keyring.current.id))"))
        }
        for (path, key) in zip(previousMasterKeyFiles, keys.keyring.previous) {
            lines.append(("previous_master_key_file", "\(path) (key \(key.id))"))
        }
        lines += [
            ("log_level", logLevel.rawValue),
            ("trusted_proxy_header", trustedProxyHeader ?? "none (the socket's peer)"),
            ("failed_session_lookups_per_minute", failedSessionLookupsPerMinute.map(String.init) ?? "unlimited"),
            ("anonymous_retention_days", anonymousRetentionDays.map(String.init) ?? "keep forever"),
            ("event_retention_days", eventRetentionDays.map(String.init) ?? "keep forever"),
            ("allow_insecure_webhooks", allowInsecureWebhooks ? "yes (http and private addresses allowed)" : "no"),
            ("console", consoleEnabled ? "on (/console/)" : "off"),
            ("drain_seconds", "\(drainDelay.components.seconds)"),
            ("node_alive_seconds", "\(nodeAliveSeconds)"),
        ]
        return lines.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
    }
}
