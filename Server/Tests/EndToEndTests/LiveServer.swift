import Foundation
import Hummingbird
import HummingbirdTesting
import Tessera
import TesseraServer
import TesseraTokens
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A live Tessera server on loopback (real socket, real SQLite in a temporary directory) with one
/// project, and the calls the randomized tests make to check it from the outside: the admin API with
/// the secret key, and the session endpoints with a session token.
struct LiveServer: Sendable {
    let port: Int
    let project: ProvisionedProject

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    var projectID: String { project.project.id }

    /// Runs `body` against a fresh server whose project allows the client-asserted identify, without
    /// rate limits.
    static func run(_ body: @escaping @Sendable (LiveServer) async throws -> Void) async throws {
        var settings = ProjectSettings()
        settings.allowUnverifiedIdentify = true
        // Thousands of installations start from 127.0.0.1 in a minute here, by design.
        settings.rateLimits.anonymousStartsPerMinute = nil
        settings.rateLimits.failedIdentifiesPerMinute = nil
        settings.rateLimits.failedIdentifiesPerInstallationPerMinute = nil
        // The randomized suites check sessions from the outside with bare session tokens, which a bound
        // session refuses: their SDKs sign every request, and the server ignores the proofs. Binding
        // itself is tested end to end in DeviceKeyEndToEndTests.
        settings.sessionBinding = .off
        var configuration = LiveNode.quiet
        configuration.failedSessionLookupsPerMinute = nil  // the checks present many dead session tokens
        // On a port its public URL names: the SDK's DPoP proofs are checked against it.
        try await LiveNode.run(project: "Races", settings: settings, configuration: configuration) { port, project in
            try await body(LiveServer(port: port, project: project))
        }
    }

    /// A signed identity token for `sub`, minted as the app's backend would.
    func identityToken(sub: String, now: Date = Date()) -> String {
        IdentityTokenMinter(secret: project.identitySecret).mint(
            IdentityClaims(
                subject: sub, expiration: now.addingTimeInterval(600), audience: [projectID], issuedAt: now,
                name: "User \(sub)", email: "\(sub)@example.com")
        )
    }

    // MARK: Checking from the outside

    /// One request straight to the server (not through any SDK transport); answers status and JSON.
    func call(_ method: String, _ path: String, credential: String, body: [String: Any]? = nil) async throws -> (
        status: Int, json: [String: Any]
    ) {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return (status, json)
    }

    /// `call` with the project's secret key.
    func admin(_ method: String, _ path: String) async throws -> (status: Int, json: [String: Any]) {
        try await call(method, path, credential: project.secretKey)
    }

    /// The live sessions of a profile as the admin API lists them; nil when the profile is gone
    /// (merged into another, or erased).
    func liveSessions(profileID: String) async throws -> [[String: Any]]? {
        let (status, json) = try await admin("GET", "/v1/admin/profiles/\(profileID)/sessions")
        if status == 404 { return nil }
        guard status == 200, let sessions = json["sessions"] as? [[String: Any]] else {
            throw LiveServerError("GET sessions of \(profileID) answered \(status)")
        }
        return sessions
    }

    /// The live devices (push tokens) of a profile as the admin API lists them; nil when the profile is gone.
    func liveDevices(profileID: String) async throws -> [[String: Any]]? {
        let (status, json) = try await admin("GET", "/v1/admin/profiles/\(profileID)/devices")
        if status == 404 { return nil }
        guard status == 200, let devices = json["devices"] as? [[String: Any]] else {
            throw LiveServerError("GET devices of \(profileID) answered \(status)")
        }
        return devices
    }

    /// The ID a profile ID resolves to: itself, the profile it was merged into (an alias), or nil when gone.
    func resolvedProfileID(_ profileID: String) async throws -> String? {
        let (status, json) = try await admin("GET", "/v1/admin/profiles/\(profileID)")
        return status == 200 ? json.string("profile", "id") : nil
    }

    /// The profiles with this external ID (verified and unverified).
    func profiles(externalID: String) async throws -> [[String: Any]] {
        let query = externalID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? externalID
        var request = URLRequest(url: URL(string: "\(baseURL)/v1/admin/profiles?external_id=\(query)")!)
        request.setValue("Bearer \(project.secretKey)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        guard (response as? HTTPURLResponse)?.statusCode == 200, let profiles = json["profiles"] as? [[String: Any]]
        else { throw LiveServerError("GET profiles?external_id=\(externalID) failed") }
        return profiles
    }

    /// `POST /v1/sessions/authenticate` (check only) with a session token: status, and the error code or
    /// the session envelope.
    func authenticate(sessionToken: String) async throws -> (status: Int, json: [String: Any]) {
        try await call("POST", "/v1/sessions/authenticate", credential: sessionToken, body: [:])
    }
}

/// A failed call to the live server in a check (not an SDK failure).
struct LiveServerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A transport that never reaches a server: proves a restore happens from the store alone.
let offlineTransport: TesseraConfiguration.Transport = { _ in throw URLError(.notConnectedToInternet) }

extension Dictionary where Key == String, Value == Any {
    /// `json["a"]["b"]` for nested JSON objects.
    func string(_ path: String...) -> String? {
        var object: [String: Any]? = self
        for key in path.dropLast() { object = object?[key] as? [String: Any] }
        return object?[path.last!] as? String
    }
}
