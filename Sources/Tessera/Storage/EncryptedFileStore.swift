public import Crypto
public import Foundation

/// A credential store of AES-256-GCM–sealed files, one per storage key, for Linux and any platform
/// without a keychain.
///
/// Each write seals the whole value with a fresh random 96-bit nonce; the file format version and the
/// storage key are bound as associated data, so a file cannot be moved to another key or read as
/// another format. Files are written atomically (temporary file, `fsync`, `rename`, `fsync` of the
/// directory) with mode 0600 in a directory with mode 0700.
///
/// **Where the key lives decides what this protects against.** With ``KeySource/key(_:)`` the app
/// supplies the key from somewhere safer (a keychain, a hardware-backed store, a KMS): then a copy of the
/// files alone reveals nothing. With ``KeySource/keyFile(_:)`` (the default) the key sits in a separate
/// 0600 file, usually next to the ciphertext: that only stops casual reading (a backup tool, a grep, a
/// support bundle that picks up one file). Anyone who can read both files can decrypt them.
///
/// Tampering, truncation and a lost key are reported as ``CredentialStoreError/corrupted(_:)``; the SDK
/// then removes the state and starts a fresh anonymous identity. Authenticated encryption cannot detect
/// the replay of an older file written with the same key: the SDK then restores that older session, and
/// the server's check ends it if it was revoked since.
public struct EncryptedFileStore: CredentialStore {
    /// Where the 256-bit key comes from.
    public enum KeySource: Sendable {
        /// A key the app supplies and keeps elsewhere.
        case key(SymmetricKey)
        /// A key file, created with 32 random bytes and mode 0600 on first write.
        case keyFile(URL)
    }

    /// The directory of the sealed files.
    public let directory: URL
    /// Where the key comes from.
    public let keySource: KeySource
    /// Test hook: runs after a write found no key file and before it creates one.
    var beforeCreatingKey: (@Sendable () -> Void)?

    static let magic: [UInt8] = Array("TSSR".utf8)
    static let formatVersion: UInt8 = 1
    static let headerLength = magic.count + 1
    static let nonceLength = 12
    static let tagLength = 16

    /// Creates a store.
    /// - Parameters:
    ///   - directory: The directory for the sealed files (created with mode 0700 on first write).
    ///   - keySource: The key; by default a key file `store.key` in `directory`.
    public init(directory: URL, keySource: KeySource? = nil) {
        self.directory = directory
        self.keySource = keySource ?? .keyFile(directory.appendingPathComponent("store.key"))
    }

    public func load(_ key: String) throws(CredentialStoreError) -> Data? {
        guard let sealed = try POSIXFile.contents(of: path(for: key), describing: "the sealed file") else {
            return nil
        }
        guard let symmetricKey = try readKey() else {
            throw .corrupted("the sealed file exists but its key is gone")
        }
        return try Self.unseal(sealed, storageKey: key, using: symmetricKey)
    }

    public func save(_ data: Data, for key: String) throws(CredentialStoreError) {
        do {
            try POSIXFile.makeDirectory(directory.path)
            let symmetricKey = try keyForWriting()
            let sealed = try Self.seal(data, storageKey: key, using: symmetricKey)
            try POSIXFile.writeAtomically(sealed, to: path(for: key))
        } catch let error as CredentialStoreError {
            throw error
        } catch {
            throw .unavailable("cannot write the sealed file: \(error)")
        }
    }

    public func remove(_ key: String) throws(CredentialStoreError) {
        do {
            try POSIXFile.remove(path(for: key))
        } catch {
            throw .unavailable("cannot remove the sealed file: \(error)")
        }
    }

    /// Creates the sealed file exclusively (an exclusive temporary file published with `link(2)`): a file
    /// another process created first is returned, never replaced.
    public func create(_ data: Data, for key: String) throws(CredentialStoreError) -> Data? {
        do {
            try POSIXFile.makeDirectory(directory.path)
            let sealed = try Self.seal(data, storageKey: key, using: try keyForWriting())
            if try POSIXFile.createExclusively(sealed, at: path(for: key)) { return nil }
        } catch let error as CredentialStoreError {
            throw error
        } catch {
            throw .unavailable("cannot create the sealed file: \(error)")
        }
        guard let existing = try load(key) else { throw .unavailable("the sealed file vanished") }
        return existing
    }

    /// Holds an exclusive `flock(2)` on `<name>.lock` beside the sealed file: every client of this
    /// directory, in this process or another (an app and its extension in an app group container),
    /// waits for the others' read-merge-write.
    public func withExclusiveAccess<Result>(
        to key: String, _ body: () throws(CredentialStoreError) -> Result
    ) throws(CredentialStoreError) -> Result {
        do {
            try POSIXFile.makeDirectory(directory.path)
        } catch {
            throw .unavailable("cannot create the store directory: \(error)")
        }
        return try POSIXFile.withExclusiveLock(at: lockPath(for: key), body)
    }

    /// Renames the sealed file to `<name>.sealed.quarantined-<uuid>`, keeping its bytes.
    public func quarantine(_ key: String) throws(CredentialStoreError) {
        let path = path(for: key)
        do {
            try POSIXFile.move(path, to: "\(path).quarantined-\(UUID().uuidString.lowercased())")
        } catch {
            guard error.isMissing else { throw .unavailable("cannot quarantine the sealed file: \(error)") }
        }
    }

    // MARK: Sealing

    /// The associated data of a sealed value: the format version and the storage key.
    static func associatedData(storageKey: String) -> Data {
        Data(magic + [formatVersion] + Array(storageKey.utf8))
    }

    /// Seals `plaintext` for `storageKey`: header, nonce, ciphertext, tag.
    static func seal(_ plaintext: Data, storageKey: String, using key: SymmetricKey) throws(CredentialStoreError)
        -> Data
    {
        do {
            let box = try AES.GCM.seal(
                plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: associatedData(storageKey: storageKey))
            guard let combined = box.combined else { throw CredentialStoreError.unavailable("nonce size") }
            return Data(magic + [formatVersion]) + combined
        } catch {
            throw .unavailable("sealing failed")
        }
    }

    /// Opens a sealed file's bytes: checks the header, then decrypts through ``open(combined:authenticating:using:)``.
    static func unseal(_ sealed: Data, storageKey: String, using key: SymmetricKey) throws(CredentialStoreError)
        -> Data
    {
        let bytes = [UInt8](sealed)
        guard bytes.count >= headerLength + nonceLength + tagLength else {
            throw .corrupted("the sealed file is truncated")
        }
        guard Array(bytes[0..<magic.count]) == magic else { throw .corrupted("not a Tessera sealed file") }
        guard bytes[magic.count] == formatVersion else {
            throw .corrupted("unknown format version \(bytes[magic.count])")
        }
        return try open(
            combined: Data(bytes[headerLength...]), authenticating: associatedData(storageKey: storageKey), using: key)
    }

    /// The store's decryption path: AES-256-GCM over `nonce (12) ‖ ciphertext ‖ tag (16)`.
    /// Any failure (wrong key, tag, nonce, associated data, length) is `corrupted`.
    static func open(combined: Data, authenticating associatedData: Data, using key: SymmetricKey)
        throws(CredentialStoreError) -> Data
    {
        guard key.bitCount == 256 else { throw .corrupted("the key is not 256 bits") }
        guard combined.count >= nonceLength + tagLength else { throw .corrupted("the sealed value is truncated") }
        do {
            let box = try AES.GCM.SealedBox(combined: combined)
            return try AES.GCM.open(box, using: key, authenticating: associatedData)
        } catch {
            throw .corrupted("authentication failed")
        }
    }

    // MARK: Keys and paths

    func path(for key: String) -> String {
        let safe = key.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F
        }
        let name = safe && !key.isEmpty ? key : key.utf8.map { String(format: "%02x", $0) }.joined()
        return directory.appendingPathComponent("\(name).sealed").path
    }

    func lockPath(for key: String) -> String {
        String(path(for: key).dropLast(".sealed".count)) + ".lock"
    }

    /// The key for reading: nil when the key file does not exist (nothing can be decrypted).
    private func readKey() throws(CredentialStoreError) -> SymmetricKey? {
        switch keySource {
        case .key(let key): return key
        case .keyFile(let url):
            guard let bytes = try POSIXFile.contents(of: url.path, describing: "the key file") else { return nil }
            guard bytes.count == 32 else { throw .corrupted("the key file is not 32 bytes") }
            return SymmetricKey(data: bytes)
        }
    }

    /// The key for writing: the existing key, or a new one created exclusively.
    ///
    /// Two processes (an app and its extension) can both find no key and both create one: the file is
    /// published with ``POSIXFile/createExclusively(_:at:mode:)``, so exactly one key wins and the other
    /// process re-reads it and seals with it. (Replacing the file would leave the first process's sealed
    /// state unreadable: it would be reported as corrupted and its identity lost.) An unusable key file
    /// (not 32 bytes) can decrypt nothing: it is removed, then the same exclusive creation runs.
    private func keyForWriting() throws(CredentialStoreError) -> SymmetricKey {
        switch keySource {
        case .key(let key): return key
        case .keyFile(let url):
            for _ in 0..<3 {
                do {
                    if let existing = try readKey() { return existing }
                } catch {
                    guard case .corrupted = error else { throw error }
                    do { try POSIXFile.remove(url.path) } catch {
                        throw .unavailable("cannot remove the unusable key file: \(error)")
                    }
                }
                beforeCreatingKey?()
                let key = SymmetricKey(size: .bits256)
                let bytes = key.withUnsafeBytes { Data($0) }
                do {
                    try POSIXFile.makeDirectory(url.deletingLastPathComponent().path)
                    if try POSIXFile.createExclusively(bytes, at: url.path) { return key }
                } catch {
                    throw .unavailable("cannot write the key file: \(error)")
                }
                // Another process created the key first: use its key.
            }
            throw .unavailable("the key file keeps changing")
        }
    }
}
