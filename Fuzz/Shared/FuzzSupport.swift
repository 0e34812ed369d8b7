import Crypto
import Foundation

/// Fixed keys and clock shared by every fuzz target, so a saved input reproduces exactly.
enum FuzzFixture {
    /// The verifier's clock: 2027-01-15T08:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let projectID = "prj_fuzz"
    static let projectSlug = "acme"

    /// The identity secret that signs the corpus' valid tokens (kid `k1`).
    static let secret = try! IdentitySecret(kid: "k1", value: "tis_0123456789abcdefghijklmnopqrstuvwxyzABCD")
    /// A second active secret (kid `k2`).
    static let otherSecret = try! IdentitySecret(kid: "k2", value: "tis_ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkj")
    /// Same kid as ``secret``, different value: nothing ``secret`` signed may verify under it.
    static let impostorSecret = try! IdentitySecret(kid: "k1", value: "tis_impostor-impostor-impostor-impostor-0")

    /// The session signing key (kid `sk1`), from a fixed scalar.
    static let signingKey = try! SessionSigningKey(
        kid: "sk1", privateKeyRawRepresentation: (1...32).map { UInt8($0) })
    /// A retired key that still verifies (kid `sk0`).
    static let retiredKey = try! SessionSigningKey(
        kid: "sk0", privateKeyRawRepresentation: (1...32).map { UInt8(100 + $0) })
    /// Other keys under the same kids: their JWKS must refuse everything the real keys signed.
    static let impostorSigningKey = try! SessionSigningKey(
        kid: "sk1", privateKeyRawRepresentation: (1...32).map { UInt8(200 - $0) })
    static let impostorRetiredKey = try! SessionSigningKey(
        kid: "sk0", privateKeyRawRepresentation: (1...32).map { UInt8(50 + $0) })

    static let issuer = "https://tessera.example"
}

/// Stops the run with a message; libFuzzer reports the abort as a crash and saves the input.
func require(
    _ condition: @autoclosure () -> Bool,
    _ message: @autoclosure () -> String,
    line: UInt = #line
) {
    guard !condition() else { return }
    FileHandle.standardError.write(Data("INVARIANT VIOLATED (line \(line)): \(message())\n".utf8))
    abort()
}

/// Reads a fuzz input front to back: a few control bytes, then the rest as payload.
struct FuzzReader {
    private let bytes: [UInt8]
    private var index = 0

    init(_ data: UnsafeRawPointer?, _ count: Int) {
        if let data, count > 0 {
            bytes = Array(UnsafeRawBufferPointer(start: data, count: count))
        } else {
            bytes = []
        }
    }

    /// The next byte, or 0 past the end.
    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] {
        defer { index = bytes.count }
        return Array(bytes[min(index, bytes.count)...])
    }
}

extension Array where Element == UInt8 {
    /// Splits at the first `separator`: (before, after); `after` is empty when there is none.
    func splitOnce(_ separator: UInt8) -> ([UInt8], [UInt8]) {
        guard let at = firstIndex(of: separator) else { return (self, []) }
        return (Array(self[..<at]), Array(self[(at + 1)...]))
    }
}

/// The three segments of a compact token, split on dots (nil unless exactly three).
func segments(_ token: String) -> [Substring]? {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 3 ? parts : nil
}

/// Whether every segment is the canonical base64url spelling of its decoded bytes.
func isCanonical(_ token: String) -> Bool {
    guard let parts = segments(token) else { return false }
    return parts.allSatisfy { part in
        guard let bytes = Base64URL.decode(part) else { return false }
        return Base64URL.encode(bytes) == String(part)
    }
}

/// An error message must never repeat the token (credentials are never logged).
func requireNoEcho(_ error: TokenError, _ token: String) {
    guard token.utf8.count >= 24 else { return }
    require(
        !contains(error.message.utf8, token.utf8) && !contains(error.description.utf8, token.utf8),
        "error text echoes the token")
}

/// Byte-wise substring search (Foundation's `contains` skips NUL characters: "." + NULs "occurs" in any text with a dot).
func contains(_ haystack: String.UTF8View, _ needle: String.UTF8View) -> Bool {
    let haystack = Array(haystack)
    let needle = Array(needle)
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains { start in
        haystack[start..<(start + needle.count)].elementsEqual(needle)
    }
}

/// A date that a minter can write and read back exactly (whole seconds, well inside Int64).
func isWholeSeconds(_ date: Date) -> Bool {
    let seconds = date.timeIntervalSince1970
    return seconds == seconds.rounded(.down) && abs(seconds) < 1e15
}
