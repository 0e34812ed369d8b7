import Crypto
import Foundation
import TesseraTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A 256-bit key that seals the secrets the database holds; it lives in a file, never in the database.
///
/// A key file holds the 32 bytes raw or in base64url (a trailing newline is allowed). The key's
/// ``id`` is a short hash of it, recorded in every value it seals; it reveals nothing about the key.
public struct MasterKey: Sendable {
    /// The key's identifier: 16 hexadecimal digits of a SHA-256 of the key.
    public let id: String
    let key: SymmetricKey

    /// A key from its 32 bytes.
    public init(bytes: [UInt8]) throws(MasterKeyError) {
        guard bytes.count == 32 else { throw .invalidKey("a master key is 32 bytes, not \(bytes.count)") }
        self.key = SymmetricKey(data: bytes)
        var hasher = SHA256()
        hasher.update(data: Array("tessera master key id\u{0}".utf8))
        hasher.update(data: bytes)
        self.id = hasher.finalize().prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// A new random key.
    public static func generate() -> MasterKey {
        let key = SymmetricKey(size: .bits256)
        // A fresh key always has 32 bytes.
        return try! MasterKey(bytes: key.withUnsafeBytes { Array($0) })
    }

    /// A key from the contents of a key file: base64url (or base64) text, or the 32 raw bytes.
    public init(fileContents: [UInt8]) throws(MasterKeyError) {
        let text = String(decoding: fileContents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let decoded = Self.decodeBase64(text), decoded.count == 32 {
            try self.init(bytes: decoded)
        } else if fileContents.count == 32 {
            try self.init(bytes: fileContents)
        } else {
            throw .invalidKey("a master key file holds 32 random bytes, raw or in base64url")
        }
    }

    /// Reads the key file at `path`.
    public static func load(path: String) throws(MasterKeyError) -> MasterKey {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadableFile("cannot read the master key file \(path)")
        }
        do {
            return try MasterKey(fileContents: Array(data))
        } catch {
            throw .invalidKey("\(path): \(error.message)")
        }
    }

    /// Writes the key in base64url to a new file of mode 0600; fails when the file exists.
    ///
    /// The file appears whole or not at all: the key is written and synced to a temporary file beside
    /// it, which is then hard-linked to `path` (a link never replaces an existing file). A process
    /// that finds `path` — another `tessera` starting at the same moment — reads the whole key,
    /// never an empty or partial file.
    public func write(toNewFile path: String) throws(MasterKeyError) {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: .min ... .max))"
        try writeExclusively(to: temporary, keyFile: path)
        defer { unlink(temporary) }
        if link(temporary, path) != 0 {
            let failure = errno
            // A file system without hard links: written in place (still never over an existing file).
            guard failure == EPERM || failure == ENOTSUP || failure == EOPNOTSUPP || failure == ENOSYS else {
                throw .unreadableFile(
                    "cannot create the master key file \(path): \(String(cString: strerror(failure)))")
            }
            try writeExclusively(to: path, keyFile: path)
        }
        // The new name itself survives a crash once its directory is synced.
        let directoryDescriptor = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    /// Creates `file` (mode 0600, failing when it exists), writes the key and syncs it; a file it could
    /// not finish is removed. Errors name `keyFile`, the master key file being made.
    private func writeExclusively(to file: String, keyFile: String) throws(MasterKeyError) {
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw .unreadableFile(
                "cannot create the master key file \(keyFile): \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data((encoded + "\n").utf8))
            try handle.synchronize()
            try handle.close()
        } catch {
            unlink(file)
            throw .unreadableFile("cannot write the master key file \(keyFile)")
        }
    }

    /// Whether the file at `path` can be read by its group or by others.
    static func isExposed(path: String) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
        else { return false }
        return mode & 0o044 != 0
    }

    /// The key in base64url, as a key file holds it.
    var encoded: String { key.withUnsafeBytes { Base64URL.encode($0) } }

    private static func decodeBase64(_ text: String) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard.append("=") }
        return Data(base64Encoded: standard).map(Array.init)
    }
}
