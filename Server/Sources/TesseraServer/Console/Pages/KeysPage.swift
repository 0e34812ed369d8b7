/// The keys (`GET /console/keys`): identity secrets, API keys (the publishable key in full, the
/// last characters of the secret key), session signing keys, with the rotations the operator's
/// role allows; a key rotated a moment ago is shown once, from its flash.
struct KeysPage: ConsolePage {
    /// A key made a moment ago (its title and value), shown once.
    var revealed: (title: String, value: String)?
    var identitySecrets: [IdentitySecretRecord]
    var apiKeys: [APIKeyHashRecord]
    /// What the Keys page shows of each API key, by its hash.
    var hints: [[UInt8]: String]
    /// Signing keys, the current one first.
    var signingKeys: [SessionKeyRecord]
    /// How long a retired signing key stays in the JWKS.
    var retiredSigningKeyWindow: Int64
    var projectSlug: String
    var now: Int64
    var viewer: ConsoleViewer
    var refusal: ConsoleRefusal?

    var title: String { "Keys" }
    var section: ConsoleSection? { .keys }

    func render(_ html: inout HTML) {
        let admin = viewer.may(.admin)
        if let (name, value) = revealed {
            html.element("div", [("class", "secret"), ("role", "region"), ("aria-label", "New key")]) { html in
                html.element("p") { html in
                    html.element("strong", text: name)
                    html.text(" — shown once: copy it now. Reloading this page will not show it again.")
                }
                html.element("p") { $0.element("code", [("id", "revealed-key")], text: value) }
            }
        }
        html.element("section", [("aria-labelledby", "identity-title")]) { html in
            html.element(
                "h2", [("id", "identity-title")], text: "Identity secrets (HS256, your backend signs with them)")
            let headers = ["Key ID", "Created", "Last used"] + (admin ? ["Action"] : [])
            ConsoleParts.table(&html, caption: nil, headers: headers, rows: identitySecrets) { html, secret in
                html.element("td") { $0.element("code", text: secret.kid) }
                html.element("td") { ConsoleFormat.time(secret.createdAt, in: &$0) }
                html.element("td") { ConsoleFormat.time(secret.lastUsedAt, in: &$0) }
                if admin {
                    html.element("td") { html in
                        ConsoleParts.passwordForm(
                            &html, action: "delete-identity-secret", csrf: viewer.csrf,
                            fields: [("kid", secret.kid)], button: "Delete", id: "delete-\(secret.kid)",
                            danger: true, refusal: refusal)
                    }
                }
            }
            html.element(
                "p", [("class", "small")],
                text:
                    "A new identity secret is made with the admin API (POST /v1/admin/identity-secrets with the secret key), so that it goes straight to your backend and never through a browser. Add the new one, deploy it, then delete the old one here."
            )
        }
        html.element("section", [("aria-labelledby", "api-title")]) { html in
            html.element("h2", [("id", "api-title")], text: "API keys")
            ConsoleParts.table(&html, caption: nil, headers: ["Kind", "Key", "State"], rows: apiKeys) { html, key in
                html.element("td", text: key.kind.rawValue)
                html.element("td") { html in
                    if let hint = hints[key.hash] {
                        html.element("code", [("class", "id")], text: hint)
                    } else {
                        html.text("(made before this version: not recorded)")
                    }
                }
                html.element("td") { html in
                    if let expiresAt = key.expiresAt {
                        html.text("rotated out; accepted until ")
                        ConsoleFormat.time(expiresAt, in: &html)
                    } else {
                        html.text("current")
                    }
                }
            }
            if admin {
                ConsoleParts.rotateKeyForm(
                    &html, kind: "publishable", graceID: "grace_seconds",
                    graceLabel: "The old publishable key keeps working for", defaultGrace: "86400",
                    passwordID: "rotate-api-password", button: "Rotate the publishable key", danger: false,
                    csrf: viewer.csrf, refusal: refusal)
            }
            if viewer.may(.owner) {
                html.element("h3", text: "Rotate the secret key (owners)")
                html.element(
                    "p", [("class", "small")],
                    text:
                        "For a lost or leaked secret key. The new key is shown once, on the next page; the old one stops working after the time you choose. Or, on the server's machine: tessera projects rotate-key --project \(projectSlug) --kind secret"
                )
                ConsoleParts.rotateKeyForm(
                    &html, kind: "secret", graceID: "secret_grace_seconds",
                    graceLabel: "The old secret key keeps working for", defaultGrace: "0",
                    passwordID: "rotate-secret-password", button: "Rotate the secret key", danger: true,
                    csrf: viewer.csrf, refusal: refusal)
            }
        }
        html.element("section", [("aria-labelledby", "signing-title")]) { html in
            html.element(
                "h2", [("id", "signing-title")], text: "Session signing keys (ES256, published in the JWKS)")
            ConsoleParts.table(&html, caption: nil, headers: ["Key ID", "Created", "State"], rows: signingKeys) {
                html, key in
                html.element("td") { $0.element("code", text: key.kid) }
                html.element("td") { ConsoleFormat.time(key.createdAt, in: &$0) }
                html.element("td") { html in
                    if let retiredAt = key.retiredAt {
                        let until = retiredAt + retiredSigningKeyWindow
                        html.text(until > now ? "retired; in the JWKS until " : "expired; left the JWKS at ")
                        ConsoleFormat.time(until, in: &html)
                    } else {
                        html.text("current: signs every new session JWT")
                    }
                }
            }
            if admin {
                ConsoleParts.passwordForm(
                    &html, action: "rotate-signing-key", csrf: viewer.csrf, fields: [],
                    button: "Rotate the signing key", id: "rotate-signing", danger: false, refusal: refusal)
            }
        }
    }
}
