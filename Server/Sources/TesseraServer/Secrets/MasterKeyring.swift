import Crypto
import Foundation
import TesseraTokens

/// The master keys a server holds: the current one seals, every one opens.
///
/// A sealed value is the ASCII text `tsv1.KEYID.DATA`: `KEYID` is the ``MasterKey/id`` of the key
/// that sealed it and `DATA` the base64url of the AES-256-GCM nonce, ciphertext and tag, with the
/// value's ``SecretBinding`` as associated data. Keeping the previous keys lets a server open values
/// sealed under them while `tessera keys rewrap` moves everything to the current one.
public struct MasterKeyring: Sendable {
    /// The key new values are sealed with.
    public let current: MasterKey
    /// Older keys that still open values sealed with them.
    public let previous: [MasterKey]

    public init(current: MasterKey, previous: [MasterKey] = []) {
        self.current = current
        self.previous = previous.filter { $0.id != current.id }
    }

    static let prefix = "tsv1."

    /// The IDs of every key, the current one first.
    public var keyIDs: [String] { [current.id] + previous.map(\.id) }

    /// Seals `plaintext` under the current key, bound to `binding`.
    public func seal(_ plaintext: [UInt8], binding: SecretBinding) -> [UInt8] {
        // AES-GCM sealing fails only for a nonce of a wrong size, which a random nonce never has.
        let box = try! AES.GCM.seal(
            plaintext, using: current.key, nonce: AES.GCM.Nonce(), authenticating: binding.associatedData)
        let combined = box.combined.map(Array.init) ?? []
        return Array((Self.prefix + current.id + "." + Base64URL.encode(combined)).utf8)
    }

    /// Opens a sealed value; `master_key_mismatch` when no key of the ring opens it for `binding`.
    public func open(_ stored: [UInt8], binding: SecretBinding) throws(MasterKeyError) -> [UInt8] {
        guard let parsed = Self.parse(stored) else {
            throw .unsealed("\(binding.table).\(binding.column) of \(binding.projectID)/\(binding.rowID) is not sealed")
        }
        let (keyID, data) = parsed
        guard let key = ([current] + previous).first(where: { $0.id == keyID }) else {
            throw .mismatch(
                "a value is sealed under master key \(keyID), which is not configured (configured: \(keyIDs.joined(separator: ", ")))"
            )
        }
        do {
            let box = try AES.GCM.SealedBox(combined: data)
            return Array(try AES.GCM.open(box, using: key.key, authenticating: binding.associatedData))
        } catch {
            throw .mismatch(
                "\(binding.table).\(binding.column) of \(binding.projectID)/\(binding.rowID) does not open under master key \(keyID): it was altered or moved from another row"
            )
        }
    }

    /// Whether a stored value is sealed (of any key), as opposed to a plaintext value of an older version.
    public static func isSealed(_ stored: [UInt8]) -> Bool { parse(stored) != nil }

    /// The ID of the key that sealed a stored value; nil for plaintext.
    public static func keyID(of stored: [UInt8]) -> String? { parse(stored)?.keyID }

    private static func parse(_ stored: [UInt8]) -> (keyID: String, data: [UInt8])? {
        let prefixBytes = Array(prefix.utf8)
        guard stored.count > prefixBytes.count + 18, Array(stored.prefix(prefixBytes.count)) == prefixBytes else {
            return nil
        }
        let rest = stored.dropFirst(prefixBytes.count)
        guard let dot = rest.firstIndex(of: UInt8(ascii: ".")) else { return nil }
        let keyID = String(decoding: rest[rest.startIndex..<dot], as: UTF8.self)
        guard keyID.count == 16, let data = Base64URL.decode(String(decoding: rest[(dot + 1)...], as: UTF8.self))
        else { return nil }
        return (keyID, data)
    }
}
