import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// Small, explicit POSIX file operations for the encrypted file store: whole-file reads that tell
/// "missing" from "cannot read now", and atomic writes (temp file, fsync, rename, fsync directory).
enum POSIXFile {
    enum ReadResult {
        case contents(Data)
        case missing
    }

    struct Failure: Error, CustomStringConvertible {
        var operation: String
        var errno: Int32
        var description: String { "\(operation) failed (errno \(errno))" }
        /// Whether the file was not there.
        var isMissing: Bool { errno == ENOENT }
    }

    /// Reads the whole file; `.missing` only for ENOENT, any other failure throws.
    static func read(_ path: String) throws(Failure) -> ReadResult {
        let fd = retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC) }
        if fd < 0 {
            if errno == ENOENT { return .missing }
            throw Failure(operation: "open", errno: errno)
        }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                retryingOnInterrupt { systemRead(fd, raw.baseAddress, raw.count) }
            }
            if count < 0 { throw Failure(operation: "read", errno: errno) }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return .contents(data)
    }

    /// The file's contents for a credential store: nil when it does not exist; any other failure means the
    /// store cannot be read now.
    /// - Parameter what: What the file is, for the error ("the key file").
    static func contents(of path: String, describing what: String) throws(CredentialStoreError) -> Data? {
        do {
            switch try read(path) {
            case .missing: return nil
            case .contents(let data): return data
            }
        } catch {
            throw .unavailable("cannot read \(what): \(error)")
        }
    }

    /// Writes `data` to `path` atomically with `mode`: a crash leaves the old file or the new one.
    static func writeAtomically(_ data: Data, to path: String, mode: mode_t = 0o600) throws(Failure) {
        let temporary = temporaryPath(for: path)
        try writeNewFile(data, at: temporary, mode: mode)
        if rename(temporary, path) != 0 {
            let failure = Failure(operation: "rename", errno: errno)
            unlink(temporary)
            throw failure
        }
        syncDirectory(of: path)
    }

    /// Creates `path` with `data` only if no file exists there: the bytes go to an exclusive temporary
    /// file (`O_CREAT | O_EXCL`, fsync), published with `link(2)`, which fails with `EEXIST` when another
    /// process created the file first. No process ever sees a partial file, and none replaces another's.
    /// - Returns: true when this call created the file, false when one existed (nothing is written then).
    static func createExclusively(_ data: Data, at path: String, mode: mode_t = 0o600) throws(Failure) -> Bool {
        let temporary = temporaryPath(for: path)
        try writeNewFile(data, at: temporary, mode: mode)
        defer { unlink(temporary) }
        if link(temporary, path) != 0 {
            if errno == EEXIST { return false }
            throw Failure(operation: "link", errno: errno)
        }
        syncDirectory(of: path)
        return true
    }

    /// Renames `source` to `destination` (replacing it); a missing source throws with `ENOENT`.
    static func move(_ source: String, to destination: String) throws(Failure) {
        if rename(source, destination) != 0 { throw Failure(operation: "rename", errno: errno) }
        syncDirectory(of: destination)
    }

    private static func temporaryPath(for path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        return "\(directory)/.\(name).\(UUID().uuidString).tmp"
    }

    /// Writes a new file exclusively (`O_CREAT | O_EXCL`), sets its mode and fsyncs it; removes it on failure.
    private static func writeNewFile(_ data: Data, at path: String, mode: mode_t) throws(Failure) {
        let fd = retryingOnInterrupt { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode) }
        if fd < 0 { throw Failure(operation: "open temporary file", errno: errno) }
        var failure: Failure?
        let written = data.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let count = retryingOnInterrupt { write(fd, raw.baseAddress! + offset, raw.count - offset) }
                if count < 0 { return false }
                offset += count
            }
            return true
        }
        if !written {
            failure = Failure(operation: "write", errno: errno)
        } else if fchmod(fd, mode) != 0 {
            failure = Failure(operation: "fchmod", errno: errno)
        } else if fullSync(fd) != 0 {
            failure = Failure(operation: "fsync", errno: errno)
        }
        close(fd)
        if let failure {
            unlink(path)
            throw failure
        }
    }

    private static func syncDirectory(of path: String) {
        let directoryFD = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fullSync(directoryFD)
            close(directoryFD)
        }
    }

    /// Runs `body` holding an exclusive `flock(2)` on the file at `path` (created empty with mode 0600
    /// when missing), then within this process too: `flock` excludes other processes and every other
    /// open of the file in this one. The lock goes with the descriptor, so a crashed holder frees it.
    static func withExclusiveLock<Result>(
        at path: String, _ body: () throws(CredentialStoreError) -> Result
    ) throws(CredentialStoreError) -> Result {
        let fd = retryingOnInterrupt { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
        if fd < 0 { throw .unavailable("cannot open the lock file: \(Failure(operation: "open", errno: errno))") }
        defer { close(fd) }
        if retryingOnInterrupt({ flock(fd, LOCK_EX) }) != 0 {
            throw .unavailable("cannot lock the store: \(Failure(operation: "flock", errno: errno))")
        }
        defer { _ = flock(fd, LOCK_UN) }
        return try body()
    }

    /// Flushes the file to stable storage: on Darwin `F_FULLFSYNC` (a plain `fsync` there only reaches
    /// the drive's cache, which a power loss can drop), falling back to `fsync` where the file system
    /// does not support it; `fsync` elsewhere.
    static func fullSync(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
            if fcntl(fd, F_FULLFSYNC) == 0 { return 0 }
        #endif
        return fsync(fd)
    }

    /// Removes the file; a missing file is not an error.
    static func remove(_ path: String) throws(Failure) {
        if unlink(path) != 0, errno != ENOENT {
            throw Failure(operation: "unlink", errno: errno)
        }
    }

    /// Creates the directory and its parents, the last one with mode 0700.
    static func makeDirectory(_ path: String) throws(Failure) {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw Failure(operation: "mkdir", errno: EACCES)
        }
    }

    private static func retryingOnInterrupt<T: BinaryInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result < 0 && errno == EINTR { continue }
            return result
        }
    }
}

private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
