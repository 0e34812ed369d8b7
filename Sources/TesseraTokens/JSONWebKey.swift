import Crypto

/// A public P-256 signing key in JWK form (RFC 7517), as published in a project's JWKS.
public struct JSONWebKey: Sendable, Hashable, Codable {
    /// `EC`.
    public var kty: String
    /// `P-256`.
    public var crv: String
    /// The x coordinate, 32 bytes in base64url.
    public var x: String
    /// The y coordinate, 32 bytes in base64url.
    public var y: String
    /// The key identifier.
    public var kid: String
    /// `sig`.
    public var use: String?
    /// `ES256`.
    public var alg: String?

    /// Creates a JWK from its members.
    public init(
        kty: String, crv: String, x: String, y: String, kid: String, use: String? = "sig", alg: String? = "ES256"
    ) {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.y = y
        self.kid = kid
        self.use = use
        self.alg = alg
    }

    init(publicKey: P256.Signing.PublicKey, kid: String) {
        let point = Array(publicKey.x963Representation)  // 0x04 ‖ x ‖ y
        self.init(
            kty: "EC",
            crv: "P-256",
            x: Base64URL.encode(point[1..<33]),
            y: Base64URL.encode(point[33..<65]),
            kid: kid
        )
    }

    /// The verifying key, after checking every member.
    func publicKey() throws(KeyConfigurationError) -> P256.Signing.PublicKey {
        guard kty == "EC", crv == "P-256" else { throw KeyConfigurationError("Only EC P-256 keys are accepted.") }
        guard use == nil || use == "sig", alg == nil || alg == "ES256" else {
            throw KeyConfigurationError("The key is not an ES256 signing key.")
        }
        guard KeyID.isValid(kid) else { throw KeyConfigurationError("A kid is 1 to 64 characters of A-Z a-z 0-9 - _.") }
        guard let x = Base64URL.decode(x), let y = Base64URL.decode(y), x.count == 32, y.count == 32 else {
            throw KeyConfigurationError("x and y must be 32 bytes of canonical base64url.")
        }
        do {
            return try P256.Signing.PublicKey(x963Representation: [0x04] + x + y)
        } catch {
            throw KeyConfigurationError("The point is not on P-256.")
        }
    }
}

/// A JWK Set (RFC 7517 §5) of session-JWT verification keys.
public struct JSONWebKeySet: Sendable, Hashable, Codable {
    /// The keys.
    public var keys: [JSONWebKey]

    /// Creates a set.
    public init(keys: [JSONWebKey]) { self.keys = keys }

    /// Reads a set strictly: a strict JSON object, P-256 keys only, no private members, distinct `kid`s.
    public init(json: [UInt8]) throws(KeyConfigurationError) {
        guard let object = StrictJSONReader.object(from: json), case .array(let elements)? = object["keys"] else {
            throw KeyConfigurationError("A JWKS is a JSON object with a keys array.")
        }
        var keys: [JSONWebKey] = []
        for element in elements {
            guard case .object(let member) = element else { throw KeyConfigurationError("Each key is a JSON object.") }
            guard member["d"] == nil else { throw KeyConfigurationError("A JWKS must not contain private keys.") }
            func string(_ name: String) throws(KeyConfigurationError) -> String? {
                switch member[name] {
                case nil: return nil
                case .string(let value)?: return value
                default: throw KeyConfigurationError("The JWK member \(name) must be a string.")
                }
            }
            guard let kty = try string("kty"), let crv = try string("crv"), let x = try string("x"),
                let y = try string("y"), let kid = try string("kid")
            else { throw KeyConfigurationError("A JWK needs kty, crv, x, y and kid.") }
            let key = JSONWebKey(
                kty: kty, crv: crv, x: x, y: y, kid: kid, use: try string("use"), alg: try string("alg"))
            _ = try key.publicKey()
            keys.append(key)
        }
        guard Set(keys.map(\.kid)).count == keys.count else {
            throw KeyConfigurationError("Duplicate kid in the JWKS.")
        }
        self.keys = keys
    }

    /// The set as compact JSON.
    public func jsonData() -> [UInt8] {
        var bytes = Array(#"{"keys":["#.utf8)
        for (index, key) in keys.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            var writer = JSONWriter()
            writer.member("kty", key.kty)
            writer.member("crv", key.crv)
            writer.member("x", key.x)
            writer.member("y", key.y)
            writer.member("kid", key.kid)
            if let use = key.use { writer.member("use", use) }
            if let alg = key.alg { writer.member("alg", alg) }
            bytes.append(contentsOf: writer.finish())
        }
        bytes.append(contentsOf: "]}".utf8)
        return bytes
    }
}
