public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Everything a ``TesseraClient`` needs, with a default for every field.
///
/// ```swift
/// var configuration = TesseraConfiguration(
///     serverURL: URL(string: "https://id.example.com")!,
///     publishableKey: "pk_…"
/// )
/// configuration.identityTokenProvider = MyBackendTokenProvider()
/// let tessera = TesseraClient(configuration: configuration)
/// ```
public struct TesseraConfiguration: Sendable {
    /// Sends one HTTP request: `URLSession` by default; tests inject a scripted one.
    public typealias Transport = @Sendable (URLRequest) async throws -> (Data, URLResponse)

    /// The Tessera server's base URL.
    public var serverURL: URL
    /// The project's publishable key (`pk_…`).
    public var publishableKey: String
    /// Where the installation identity and session live between launches.
    public var credentialStore: any CredentialStore
    /// The key under which this client keeps its state in the store (one per project or account).
    public var storageKey: String
    /// The HTTP transport.
    public var transport: Transport
    /// Wall-clock time and sleeping.
    public var clock: any TesseraClock
    /// Receives the SDK's log lines (never credentials). Ignored by default.
    public var logHandler: @Sendable (TesseraLogMessage) -> Void
    /// How often the heartbeat checks the session (without extending it).
    public var heartbeatInterval: Duration
    /// The heartbeat's relative jitter: each interval is drawn uniformly from `interval × (1 ± jitter)`.
    public var heartbeatJitter: Double
    /// Retries after offline, timeouts, 5xx and 429.
    public var backoff: BackoffPolicy
    /// Asked for a fresh identity token when a verified session must be re-established.
    public var identityTokenProvider: (any IdentityTokenProvider)?
    /// How long the SDK waits for the identity-token provider (on ``clock``) before it gives up with
    /// `identity_token_provider_timed_out` and falls back; a provider that never answers cannot block
    /// `start()` or the heartbeat.
    public var identityTokenTimeout: Duration
    /// What to do when a verified session ends and cannot be re-established.
    public var fallbackPolicy: FallbackPolicy
    /// Random numbers in `0 ..< 1`, for jitter.
    public var random: @Sendable () -> Double
    /// The session length asked for when identifying (nil: the project's default).
    public var identifiedSessionDuration: Duration?
    /// How long before the session JWT's expiry a private call refreshes it first.
    public var jwtRefreshMargin: Duration
    /// The request timeout: both the idle timeout of each request and its total deadline (the default
    /// transport's session is made with the value given to the initializer).
    public var requestTimeout: Duration
    /// Whether the client wires itself to UIKit/AppKit background and foreground notifications.
    public var observesApplicationLifecycle: Bool
    /// What to do with the state of a previous installation of the app (found in a keychain that
    /// outlived the app): ``ReinstallPolicy/startFresh`` by default.
    public var reinstallPolicy: ReinstallPolicy = .startFresh
    /// Whether sessions are bound to this installation's device key (true by default): every request
    /// then carries a proof signed by the key (RFC 9449 DPoP), and a session token copied off the device
    /// is refused elsewhere. The server's project setting `session_binding` decides whether it is enforced;
    /// false sends no proofs (sessions stay bearer sessions).
    public var bindsSessionsToDevice = true
    /// Makes and restores the device key (``SystemDeviceKeyProvider``: the Secure Enclave where the device
    /// has one, a software key kept in the credential store otherwise).
    public var deviceKeyProvider: any DeviceKeyProvider = SystemDeviceKeyProvider()
    /// Whether starts and identifies carry App Attest evidence: ``AppAttestMode/off`` by default, so an
    /// app whose project does not use App Attest makes no challenge request and no call to Apple.
    /// Set ``AppAttestMode/automatic`` in any app version, whatever the project's `app_attest` setting:
    /// keys the server did not keep are replaced once it asks for them (see <doc:AppAttest>).
    public var appAttest: AppAttestMode = .off
    /// Makes, attests and asserts with the installation's App Attest key: ``SystemAppAttestProvider``
    /// where DeviceCheck exists; elsewhere a provider that is never supported (requests then say
    /// `{"unsupported": true}` when ``appAttest`` is on).
    public var appAttestProvider: any AppAttestProvider = Self.defaultAppAttestProvider()

    /// Creates a configuration.
    /// - Parameters:
    ///   - serverURL: The server's base URL: https, or http on loopback only (see ``validate()``).
    ///   - publishableKey: The project's publishable key (not empty).
    ///   - credentialStore: Where state is kept (Keychain on Apple platforms, an encrypted file elsewhere).
    ///   - storageKey: The key of this client's state in the store.
    ///   - transport: The HTTP transport (an ephemeral `URLSession` with a total deadline of `requestTimeout`).
    ///   - clock: The clock (``SystemClock``).
    ///   - logHandler: Log sink (ignored).
    ///   - heartbeatInterval: Heartbeat interval (180 s).
    ///   - heartbeatJitter: Heartbeat jitter (±10 %).
    ///   - backoff: Retry policy.
    ///   - identityTokenProvider: Fresh identity tokens (none).
    ///   - identityTokenTimeout: How long to wait for the identity-token provider (30 s).
    ///   - fallbackPolicy: Fallback when a verified session cannot be re-established (anonymous).
    ///   - random: Random numbers in `0 ..< 1`.
    ///   - identifiedSessionDuration: Identified session length (project default).
    ///   - jwtRefreshMargin: Refresh the session JWT this long before its expiry (30 s).
    ///   - requestTimeout: Request timeout (30 s).
    ///   - observesApplicationLifecycle: Wire background/foreground automatically (true).
    public init(
        serverURL: URL,
        publishableKey: String,
        credentialStore: (any CredentialStore)? = nil,
        storageKey: String = "tessera",
        transport: Transport? = nil,
        clock: any TesseraClock = SystemClock(),
        logHandler: @escaping @Sendable (TesseraLogMessage) -> Void = { _ in },
        heartbeatInterval: Duration = .seconds(180),
        heartbeatJitter: Double = 0.1,
        backoff: BackoffPolicy = BackoffPolicy(),
        identityTokenProvider: (any IdentityTokenProvider)? = nil,
        identityTokenTimeout: Duration = .seconds(30),
        fallbackPolicy: FallbackPolicy = .anonymous,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        identifiedSessionDuration: Duration? = nil,
        jwtRefreshMargin: Duration = .seconds(30),
        requestTimeout: Duration = .seconds(30),
        observesApplicationLifecycle: Bool = true
    ) {
        self.serverURL = serverURL
        self.publishableKey = publishableKey
        self.credentialStore = credentialStore ?? Self.defaultCredentialStore()
        self.storageKey = storageKey
        self.transport = transport ?? HTTPSessionSettings.transport(requestTimeout: requestTimeout)
        self.clock = clock
        self.logHandler = logHandler
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatJitter = min(max(heartbeatJitter, 0), 1)
        self.backoff = backoff
        self.identityTokenProvider = identityTokenProvider
        self.identityTokenTimeout = identityTokenTimeout
        self.fallbackPolicy = fallbackPolicy
        self.random = random
        self.identifiedSessionDuration = identifiedSessionDuration
        self.jwtRefreshMargin = jwtRefreshMargin
        self.requestTimeout = requestTimeout
        self.observesApplicationLifecycle = observesApplicationLifecycle
    }

    /// Checks that the configuration can work; ``TesseraClient/start()`` calls it first.
    ///
    /// The publishable key must not be empty, and the server URL must be https, or http on a loopback
    /// host only (`localhost`, `127.0.0.0/8`, `::1`): session tokens must never cross a network in clear.
    /// - Throws: ``TesseraError`` `invalid_configuration`, saying what is wrong (never the key itself).
    public func validate() throws(TesseraError) {
        if publishableKey.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw TesseraError(.invalidConfiguration, message: "The publishable key is empty.")
        }
        guard let scheme = serverURL.scheme?.lowercased(), let host = serverURL.host?.lowercased(), !host.isEmpty
        else {
            throw TesseraError(.invalidConfiguration, message: "The server URL has no scheme or host.")
        }
        if scheme == "https" { return }
        if scheme == "http", Self.isLoopback(host) { return }
        throw TesseraError(
            .invalidConfiguration, message: "The server URL must be https (http only on localhost / loopback).")
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if bare == "localhost" || bare == "::1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// An ephemeral `URLSession` (no cache, no cookies, no credential storage) whose requests time out
    /// after 30 s without data and after 30 s in total. By default a configuration uses this one, or, when
    /// its ``requestTimeout`` is not 30 s, a session of its own with that timeout.
    ///
    /// On Linux the request is not cancelled with the calling task: swift-corelibs-foundation can crash
    /// the process when a `URLSessionTask` is cancelled just as it completes ("Trying to access a
    /// behaviour for a task that in not in the registry", swiftlang/swift-corelibs-foundation#3292), and
    /// the SDK cancels its heartbeat task on every sign-out, reset and trip to the background. The request
    /// runs to its end (at most the request timeout) and the SDK drops the answer of a cancelled call.
    public static let urlSessionTransport: Transport = HTTPSessionSettings.transport(
        requestTimeout: HTTPSessionSettings.defaultRequestTimeout)

    /// The platform's default App Attest provider: ``SystemAppAttestProvider`` where DeviceCheck exists,
    /// else one that cannot attest.
    public static func defaultAppAttestProvider() -> any AppAttestProvider {
        #if canImport(DeviceCheck)
            return SystemAppAttestProvider()
        #else
            return UnavailableAppAttestProvider()
        #endif
    }

    /// The platform's default store: the Keychain on Apple platforms; elsewhere an
    /// ``EncryptedFileStore`` under `$XDG_DATA_HOME/tessera` (or `~/.local/share/tessera`) with its key
    /// in a separate key file.
    public static func defaultCredentialStore() -> any CredentialStore {
        #if canImport(Security)
            return KeychainCredentialStore()
        #else
            let environment = ProcessInfo.processInfo.environment
            let base =
                environment["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0) }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
            return EncryptedFileStore(directory: base.appendingPathComponent("tessera"))
        #endif
    }
}
