public import Foundation

/// The state of an object the SDK publishes (the session, the profile): available with the time the
/// server last confirmed it, or unavailable with the reason.
public enum Availability<Value: Sendable & Hashable>: Sendable, Hashable {
    /// The value, and when the server last confirmed it (in local time).
    case available(Value, lastValidatedAt: Date)
    /// There is no value, and why.
    case unavailable(UnavailableReason)

    /// The value, when available.
    public var value: Value? {
        if case .available(let value, _) = self { return value }
        return nil
    }

    /// The reason, when unavailable.
    public var reason: UnavailableReason? {
        if case .unavailable(let reason) = self { return reason }
        return nil
    }
}

/// Why there is no session or profile right now.
public enum UnavailableReason: String, Sendable, Hashable, Codable {
    /// No session has been established yet on this installation (or `start()` has not run).
    case neverSignedIn
    /// The app signed out, cleared the session or reset the installation.
    case signedOut
    /// The session reached its expiry.
    case expired
    /// The session was revoked (or is unknown to the server).
    case revoked
    /// The credential store cannot be read right now (for example the keychain before first unlock).
    /// Transient: the SDK retries, and never treats this as signed out.
    case storageUnavailable
    /// The stored state was tampered with or undecryptable and was removed.
    case storageLost
    /// The credential store cannot work as configured (for example a missing keychain entitlement).
    /// Permanent: the SDK does not retry by itself (it tries again on `start()` and on the next
    /// foreground); the app must be fixed.
    case storageMisconfigured
    /// Access to the credential store was refused (a keychain prompt cancelled or failed on macOS).
    /// Not retried by the SDK's backoff, which would prompt again and again: it tries again on `start()`
    /// and on the next foreground.
    case storageAccessDenied
    /// The device key the session was bound to is gone (a restored backup, an unreadable key): the SDK
    /// re-establishes the session with a new key by itself, through the identity-token provider for a
    /// verified user. Asked of ``IdentityTokenProvider``; published as a state only when that fails.
    case deviceKeyLost

    /// Whether the state will resolve by itself (retrying storage).
    public var isTransient: Bool { self == .storageUnavailable }
}
