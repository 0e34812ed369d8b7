public import Foundation
import TesseraTokens

/// A newly created project with its credentials, which are shown this once.
public struct ProvisionedProject: Sendable {
    public var project: ProjectRecord
    public var publishableKey: String
    public var secretKey: String
    public var identitySecret: IdentitySecret

    /// The credentials as printed by `tessera serve` and `tessera projects create`.
    public var text: String {
        """
        Project:          \(project.name) (\(project.slug))
        Project ID:       \(project.id)
        Publishable key:  \(publishableKey)
        Secret key:       \(secretKey)
        Identity secret:  \(identitySecret.value)
        Identity kid:     \(identitySecret.kid)
        Keep the secret key and the identity secret on your backend; they are not shown again.
        """
    }

    /// The credentials as one JSON object.
    public var json: String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.field("project_id", project.id)
        writer.field("name", project.name)
        writer.field("slug", project.slug)
        writer.field("publishable_key", publishableKey)
        writer.field("secret_key", secretKey)
        writer.key("identity_secret")
        writer.objectStart()
        writer.field("kid", identitySecret.kid)
        writer.field("secret", identitySecret.value)
        writer.objectEnd()
        writer.objectEnd()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// Creates projects with fresh keys, a first identity secret and a session signing key.
public enum ProjectProvisioner {
    /// Creates a project.
    ///
    /// - Parameters:
    ///   - name: a human name.
    ///   - slug: a URL-safe name (`a-z`, `0-9`, `-`), derived from the name when nil.
    ///   - settings: the initial settings.
    ///   - store: where to create it.
    ///   - now: the creation time.
    public static func create(
        name: String, slug: String? = nil, settings: ProjectSettings = ProjectSettings(), store: any TesseraStore,
        now: Date = Date()
    ) async throws -> ProvisionedProject {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= 200 else {
            throw ConfigurationError("a project name is 1 to 200 characters")
        }
        let slug = slug ?? derivedSlug(trimmed)
        guard InputRules.isSlug(slug) else {
            throw ConfigurationError("a slug is 1 to 64 characters of a-z, 0-9 and -, not starting with -")
        }
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        let publishableKey = OpaqueToken.publishableKey()
        let secretKey = OpaqueToken.secretKey()
        let identitySecret = IdentitySecret.generate()
        let signingKey = SessionSigningKey.generate()
        let record = ProjectRecord(
            id: OpaqueToken.identifier(prefix: "prj_"), name: trimmed, slug: slug, settings: settings,
            createdAt: seconds,
            updatedAt: seconds)
        let project = try await store.createProject(
            NewProject(
                record: record, publishableKeyHash: OpaqueToken.sha256(publishableKey),
                secretKeyHash: OpaqueToken.sha256(secretKey),
                identitySecret: IdentitySecretRecord(
                    kid: identitySecret.kid, value: identitySecret.value, createdAt: seconds),
                sessionKey: SessionKeyRecord(
                    kid: signingKey.kid, privateKey: signingKey.privateKeyRawRepresentation, createdAt: seconds)))
        for (kind, key) in [(APIKeyKind.publishable, publishableKey), (.secret, secretKey)] {
            try await store.saveAPIKeyHint(
                projectID: project.id, keyHash: OpaqueToken.sha256(key), hint: hint(kind: kind, key: key))
        }
        return ProvisionedProject(
            project: project, publishableKey: publishableKey, secretKey: secretKey, identitySecret: identitySecret)
    }

    static func derivedSlug(_ name: String) -> String {
        var slug = ""
        for character in name.lowercased() {
            if character.isASCII, character.isLetter || character.isNumber {
                slug.append(character)
            } else if !slug.isEmpty, slug.last != "-" {
                slug.append("-")
            }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        return slug.isEmpty ? "project" : String(slug.prefix(64))
    }
}
