import Crypto
import Foundation
import TesseraTokens

/// The proofs of possession (RFC 9449) the SDK sends with its requests: the installation's device key
/// once loaded, the latest `DPoP-Nonce` the server sent, and the server's clock as last seen, which
/// corrects every proof's `iat`.
///
/// Shared by the client (which loads the key and decides about key loss) and its ``APIClient`` (which
/// signs every request with it).
final class DeviceProofs: Sendable {
    struct State {
        var key: (any DeviceKey)?
        var thumbprint: String?
        var nonce: String?
        /// Server time minus local time, in seconds.
        var serverTimeOffset: TimeInterval = 0
        /// Whether `serverTimeOffset` comes from a `server_time` (milliseconds) rather than a `Date` header.
        var offsetFromServerTime = false
    }

    /// Whether requests carry proofs (``TesseraConfiguration/bindsSessionsToDevice``).
    let isEnabled: Bool
    let clock: any TesseraClock
    /// Where the key comes from; read at the first request that needs it when start has not yet.
    let keyring: DeviceKeyring
    private let state = Locked(State())

    /// A `Date` header (whole seconds) moves the offset only when it is further than this from it.
    static let dateHeaderTolerance: TimeInterval = 30

    init(configuration: TesseraConfiguration) {
        isEnabled = configuration.bindsSessionsToDevice
        clock = configuration.clock
        keyring = DeviceKeyring(configuration: configuration)
    }

    /// Loads the key (or makes it) when proofs are on and it is not loaded yet; answers how, or nil when
    /// there was nothing to do. Two callers at once get the same key: the keyring's first write is
    /// add-only.
    @discardableResult
    func loadKey() throws(TesseraError) -> DeviceKeyring.Loaded? {
        guard isEnabled, key == nil else { return nil }
        let loaded = try keyring.load()
        return state.withLock {
            guard $0.key == nil else { return nil }
            $0.key = loaded.key
            $0.thumbprint = loaded.thumbprint
            return loaded
        }
    }

    /// Drops the loaded key: the next proof reads it from the store again.
    func forgetKey() {
        state.withLock {
            $0.key = nil
            $0.thumbprint = nil
        }
    }

    var key: (any DeviceKey)? { state.withLock { $0.key } }
    var thumbprint: String? { state.withLock { $0.thumbprint } }
    var nonce: String? { state.withLock { $0.nonce } }
    var serverTimeOffset: TimeInterval { state.withLock { $0.serverTimeOffset } }

    /// Remembers the latest nonce the server sent.
    func noteNonce(_ nonce: String?) {
        guard let nonce, !nonce.isEmpty else { return }
        state.withLock { $0.nonce = nonce }
    }

    /// Corrects the clock from an answer's `server_time`, received at local time `receivedAt`.
    func noteServerTime(_ serverTime: Date, receivedAt: Date) {
        state.withLock {
            $0.serverTimeOffset = serverTime.timeIntervalSince(receivedAt)
            $0.offsetFromServerTime = true
        }
    }

    /// Corrects the clock from an answer's `Date` header when the offset known so far is off by more than
    /// its precision allows (a device whose clock is wrong, before any `server_time`).
    func noteDateHeader(_ header: String?, receivedAt: Date) {
        guard let header, let date = Self.parseHTTPDate(header) else { return }
        let offset = date.timeIntervalSince(receivedAt)
        state.withLock {
            guard abs(offset - $0.serverTimeOffset) > Self.dateHeaderTolerance else { return }
            $0.serverTimeOffset = offset
            $0.offsetFromServerTime = false
        }
    }

    /// Whether the clock offset moved since a proof was made with `offset` (by this answer or another
    /// that came back meanwhile): a proof refused then is worth making again.
    func offsetMoved(since offset: TimeInterval) -> Bool {
        abs(serverTimeOffset - offset) > Self.dateHeaderTolerance
    }

    /// Sets the offset from a stored session's, at launch, until the first answer.
    func restoreOffset(_ offset: TimeInterval) {
        state.withLock {
            guard !$0.offsetFromServerTime else { return }
            $0.serverTimeOffset = offset
        }
    }

    /// A proof for one request, signed by the device key, and the clock offset its `iat` used; nil when
    /// proofs are off.
    /// - Throws: `storage_unavailable` (transient) when proofs are on but the key cannot be read or cannot
    ///   sign now: a request that should prove the key is never sent without it.
    func proof(method: String, url: URL, credential: String?) throws(TesseraError) -> (
        proof: String, serverTimeOffset: TimeInterval
    )? {
        guard isEnabled else { return nil }
        try loadKey()
        let (key, nonce, offset) = state.withLock { ($0.key, $0.nonce, $0.serverTimeOffset) }
        guard let key else {
            throw TesseraError(.storageUnavailable, message: "The device key is not available yet.")
        }
        do {
            let proof = try DPoPProofBuilder.proof(
                signer: Signer(key: key), method: method, url: url.absoluteString, accessToken: credential,
                nonce: nonce, now: clock.now().addingTimeInterval(offset))
            return (proof, offset)
        } catch {
            throw TesseraError(.storageUnavailable, message: "The device key cannot sign now.")
        }
    }

    private struct Signer: DPoPSigner {
        let key: any DeviceKey
        var publicKey: P256.Signing.PublicKey { key.publicKey }
        func signature(for data: [UInt8]) throws -> P256.Signing.ECDSASignature {
            try key.signature(for: Data(data))
        }
    }

    static func parseHTTPDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
