/// The device key a session is bound to: every request with its credential must carry a proof signed
/// by that key, so a copied session token or JWT is refused on any other device.
public struct SessionBinding: Sendable, Hashable, Codable {
    /// The key's RFC 7638 SHA-256 thumbprint (the session JWT's `cnf.jkt`).
    public var thumbprint: String
    /// Where the device said the key lives, when it said (`nil` for a tier this SDK does not know).
    public var keyTier: DeviceKeyTier?

    /// Creates a binding value.
    /// - Parameters:
    ///   - thumbprint: The key's thumbprint.
    ///   - keyTier: Where the key lives, or nil.
    public init(thumbprint: String, keyTier: DeviceKeyTier? = nil) {
        self.thumbprint = thumbprint
        self.keyTier = keyTier
    }

    enum CodingKeys: String, CodingKey {
        case thumbprint = "jkt"
        case keyTier = "key_tier"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        thumbprint = try container.decode(String.self, forKey: .thumbprint)
        // A tier added to the contract later is not an error: it is only unknown here.
        keyTier = try container.decodeIfPresent(String.self, forKey: .keyTier).flatMap(DeviceKeyTier.init(rawValue:))
    }
}
