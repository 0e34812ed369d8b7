/// The structural layer shared by identity tokens and session JWTs.
///
/// It enforces what every compact JWS must satisfy before any key is touched: exactly three
/// non-empty segments, strict base64url in each, size caps, and a header that is a strict JSON
/// object without the members that let a token choose its own key or change how it is processed.
struct CompactJWS {
    struct Limits {
        var token = 8 * 1024
        var header = 1024
        var payload = 4 * 1024
        static let standard = Limits()
    }

    /// The `alg` header member, unvalidated.
    let algorithm: JSONValue?
    /// The `typ` header member, unvalidated.
    let type: JSONValue?
    /// The decoded payload bytes (not yet parsed).
    let payload: [UInt8]
    /// The decoded signature bytes.
    let signature: [UInt8]
    /// The `kid` header, validated as `[A-Za-z0-9_-]{1,64}` when present.
    let keyID: String?
    /// The `jwk` header member, unvalidated: only a DPoP proof may carry one (RFC 9449 §4.2), and
    /// only ``parse(_:limits:malformed:allowingKeyHeader:)`` with `allowingKeyHeader` reads it.
    let keyHeader: JSONValue?

    /// The token text, kept so the signing input can be read without a copy.
    private let token: String
    /// The number of leading bytes of `token` that are the signing input.
    private let signingInputCount: Int

    /// Parses `token`: structure, size caps, base64url, header JSON, forbidden header members, `kid`.
    ///
    /// A header that names its own key (`jwk`) is refused unless `allowingKeyHeader`: a token signed
    /// by a key it carries proves only that its sender holds that key, which is what a DPoP proof
    /// says and nothing else may.
    static func parse(
        _ token: String, limits: Limits = .standard, malformed: TokenError.Code, allowingKeyHeader: Bool = false
    ) throws(TokenError) -> CompactJWS {
        var text = token
        let outcome: Swift.Result<CompactJWS, TokenError> = text.withUTF8 { utf8 in
            do throws(TokenError) {
                return .success(
                    try parse(
                        UnsafeRawBufferPointer(utf8), token: token, limits: limits, malformed: malformed,
                        allowingKeyHeader: allowingKeyHeader))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// Calls `body` with the signing input (the first two segments and their dot).
    func withSigningInput<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var text = token
        return text.withUTF8 {
            body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer($0)[0..<signingInputCount]))
        }
    }

    private static func parse(
        _ bytes: UnsafeRawBufferPointer,
        token: String,
        limits: Limits,
        malformed: TokenError.Code,
        allowingKeyHeader: Bool
    ) throws(TokenError) -> CompactJWS {
        guard !bytes.isEmpty else { throw TokenError(malformed, "The token is empty.") }
        guard bytes.count <= limits.token else {
            throw TokenError(malformed, "The token is longer than \(limits.token) bytes.")
        }
        var dots: (Int, Int) = (-1, -1)
        var dotCount = 0
        for index in 0..<bytes.count where bytes[index] == UInt8(ascii: ".") {
            dotCount += 1
            if dotCount == 1 { dots.0 = index } else if dotCount == 2 { dots.1 = index }
        }
        guard dotCount == 2 else {
            throw TokenError(malformed, "A compact JWS has exactly three segments; this one has \(dotCount + 1).")
        }
        let headerSegment = UnsafeRawBufferPointer(rebasing: bytes[0..<dots.0])
        let payloadSegment = UnsafeRawBufferPointer(rebasing: bytes[(dots.0 + 1)..<dots.1])
        let signatureSegment = UnsafeRawBufferPointer(rebasing: bytes[(dots.1 + 1)...])
        guard !headerSegment.isEmpty, !payloadSegment.isEmpty, !signatureSegment.isEmpty else {
            throw TokenError(malformed, "A segment of the token is empty.")
        }
        guard headerSegment.count <= (limits.header * 4 + 2) / 3 else {
            throw TokenError(malformed, "The header is larger than \(limits.header) bytes.")
        }
        guard payloadSegment.count <= (limits.payload * 4 + 2) / 3 else {
            throw TokenError(malformed, "The payload is larger than \(limits.payload) bytes.")
        }
        guard let headerBytes = Base64URL.decode(bytes: headerSegment),
            let payload = Base64URL.decode(bytes: payloadSegment),
            let signature = Base64URL.decode(bytes: signatureSegment)
        else {
            throw TokenError(malformed, "A segment is not canonical unpadded base64url.")
        }
        guard let header = StrictJSONReader.object(from: headerBytes) else {
            throw TokenError(malformed, "The header is not a strict JSON object.")
        }
        var keyID: String?
        var algorithm: JSONValue?
        var type: JSONValue?
        var keyHeader: JSONValue?
        for member in header.members where member.isASCII {
            switch member.name {
            case "alg": algorithm = member.value
            case "typ": type = member.value
            case "kid":
                guard case .string(let kid) = member.value, KeyID.isValid(kid) else {
                    throw TokenError(malformed, "The kid header must be 1 to 64 characters of A-Z a-z 0-9 - _.")
                }
                keyID = kid
            case "jwk" where allowingKeyHeader:
                keyHeader = member.value
            case "crit", "cty", "b64", "jwk", "jku", "x5u", "x5c", "x5t", "x5t#S256":
                throw TokenError(malformed, "The header member \"\(member.name)\" is not accepted.")
            default:
                continue
            }
        }
        return CompactJWS(
            algorithm: algorithm, type: type, payload: payload, signature: signature, keyID: keyID,
            keyHeader: keyHeader, token: token, signingInputCount: dots.1
        )
    }

    /// Checks `alg` byte for byte.
    func requireAlgorithm(_ expected: String, malformed: TokenError.Code) throws(TokenError) {
        guard let value = algorithm else { throw TokenError(malformed, "The header has no alg.") }
        guard case .string(let alg) = value else { throw TokenError(malformed, "The alg header is not a string.") }
        guard alg == expected, alg.utf8.count == expected.utf8.count else {
            throw TokenError(.unsupportedAlgorithm, "Only \(expected) is accepted here.")
        }
    }

    /// The `typ` header, if present and a string; throws if present and not a string.
    func type(malformed: TokenError.Code) throws(TokenError) -> String? {
        guard let value = type else { return nil }
        guard case .string(let typ) = value else { throw TokenError(malformed, "The typ header is not a string.") }
        return typ
    }
}

/// Key identifiers: 1 to 64 characters of `[A-Za-z0-9_-]`.
enum KeyID {
    static func isValid(_ kid: String) -> Bool {
        let utf8 = kid.utf8
        guard (1...64).contains(utf8.count) else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default: false
            }
        }
    }
}
