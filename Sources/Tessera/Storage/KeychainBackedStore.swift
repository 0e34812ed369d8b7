import Foundation

/// The keychain credential store's decisions, over four keychain calls: what to believe, what to write,
/// and how to report what cannot be done. ``KeychainCredentialStore`` is this type over `SecItem…`.
///
/// - A read that finds the item returns it. "Not found" is believed only when the keychain proves it is
///   readable (the probe item, added with the first write of an installation, is there), or when the
///   ``InstallationMarker`` says this installation of the app never ran. When the marker is there but the
///   keychain holds neither the item nor the probe, the item is read again; if it is still missing, the
///   store is `unavailable` (the SDK retries) until the keychain has said so for ``ambiguityGrace``
///   with the marker readable (which needs protected data): a keychain wiped under the app (a reset Mac
///   keychain) is then believed. A marker that exists but cannot be read yet means protected data is
///   not available: `unavailable`.
/// - The first write of an installation (``create(_:for:)``) is an add and nothing else: an existing
///   item is returned, never overwritten.
/// - ``save(_:for:)`` updates, adds when there is no item, and updates again when an add meets an item
///   another process added meanwhile.
/// - Unreadable data is copied to a quarantine item before the original is deleted.
/// - `errSecMissingEntitlement` and `errSecParam` are `misconfigured` (reported, not retried);
///   `errSecUserCanceled` and `errSecAuthFailed` (a refused prompt) are `denied` (reported, not retried
///   at the backoff, which would prompt again); every other failure, `errSecInteractionNotAllowed`
///   included, is `unavailable` (retried).
struct KeychainBackedStore: CredentialStore {
    /// The account of the probe item that proves the keychain is readable.
    static let probeAccount = "tessera.probe"

    let keychain: any KeychainAccess
    /// Where earlier SDK versions kept the items, read once when `keychain` has none (macOS: the
    /// data-protection keychain, which they always used; an unsigned tool gets -34018 there, which
    /// only means there is nothing to migrate).
    let legacyKeychain: (any KeychainAccess)?
    let installationMarker: InstallationMarker?
    /// How long a "not found" that contradicts the marker is disbelieved, with the marker readable.
    let ambiguityGrace: TimeInterval
    let now: @Sendable () -> Date
    /// The file whose `flock(2)` excludes the other processes sharing the items (an app and its
    /// extensions): beside the installation marker, in the container they share; nil: this process only.
    let lockFile: String?
    private let memory = Locked(Memory())

    private struct Memory {
        var probeWritten = false
        var ambiguousSince: Date?
    }

    init(
        keychain: any KeychainAccess, legacyKeychain: (any KeychainAccess)? = nil,
        installationMarker: InstallationMarker?, ambiguityGrace: TimeInterval = 600,
        now: @escaping @Sendable () -> Date = { Date() }, lockFile: String? = nil
    ) {
        self.lockFile = lockFile
        self.keychain = keychain
        self.legacyKeychain = legacyKeychain
        self.installationMarker = installationMarker
        self.ambiguityGrace = ambiguityGrace
        self.now = now
    }

    func load(_ key: String) throws(CredentialStoreError) -> Data? {
        switch keychain.read(account: key) {
        case .found(let data):
            found()
            return data
        case .failed(.itemNotFound):
            if let migrated = try migrateLegacyItem(key) { return migrated }
            return try resolveNotFound(key)
        case .failed(let status):
            throw Self.error(status, "read")
        }
    }

    /// Moves an item from the legacy keychain: added (never over an existing item), then deleted there.
    private func migrateLegacyItem(_ key: String) throws(CredentialStoreError) -> Data? {
        guard let legacyKeychain, case .found(let data) = legacyKeychain.read(account: key) else { return nil }
        let added = keychain.add(data, account: key)
        switch added {
        case .success:
            _ = legacyKeychain.delete(account: key)
            found()
            return data
        case .duplicateItem:
            // The item is there after all: it wins over the legacy copy.
            guard case .found(let current) = keychain.read(account: key) else {
                throw .unavailable("the keychain holds the item but cannot read it yet")
            }
            found()
            return current
        default:
            throw Self.error(added, "add (migration)")
        }
    }

    func save(_ data: Data, for key: String) throws(CredentialStoreError) {
        for _ in 0..<2 {
            let updated = keychain.update(data, account: key)
            switch updated {
            case .success:
                found()
                return
            case .itemNotFound:
                let added = keychain.add(data, account: key)
                switch added {
                case .success:
                    found()
                    return
                case .duplicateItem:
                    continue  // another process added it meanwhile: update that one
                default:
                    throw Self.error(added, "add")
                }
            default:
                throw Self.error(updated, "update")
            }
        }
        throw .unavailable("the keychain item keeps appearing and disappearing")
    }

    func remove(_ key: String) throws(CredentialStoreError) {
        let status = keychain.delete(account: key)
        guard status == .success || status == .itemNotFound else { throw Self.error(status, "delete") }
    }

    func create(_ data: Data, for key: String) throws(CredentialStoreError) -> Data? {
        let added = keychain.add(data, account: key)
        switch added {
        case .success:
            writeProbe()
            return nil
        case .duplicateItem:
            // An item exists that the read did not see (a spurious "not found", or another process).
            switch keychain.read(account: key) {
            case .found(let existing):
                found()
                return existing
            case .failed(.itemNotFound):
                throw .unavailable("the keychain holds the item but cannot read it yet")
            case .failed(let status):
                throw Self.error(status, "read")
            }
        default:
            throw Self.error(added, "add")
        }
    }

    func quarantine(_ key: String) throws(CredentialStoreError) {
        switch keychain.read(account: key) {
        case .found(let data):
            let account = "\(key).quarantined.\(UUID().uuidString.lowercased())"
            let added = keychain.add(data, account: account)
            guard added == .success else { throw Self.error(added, "add (quarantine)") }
            try remove(key)
        case .failed(.itemNotFound):
            return
        case .failed(let status):
            throw Self.error(status, "read")
        }
    }

    /// Excludes the other clients of the items: across processes through ``lockFile``, else in this process.
    func withExclusiveAccess<Result>(
        to key: String, _ body: () throws(CredentialStoreError) -> Result
    ) throws(CredentialStoreError) -> Result {
        guard let lockFile else { return try ProcessLock.shared.withLock(body) }
        do {
            try POSIXFile.makeDirectory((lockFile as NSString).deletingLastPathComponent)
        } catch {
            throw .unavailable("cannot create the lock file's directory: \(error)")
        }
        return try POSIXFile.withExclusiveLock(at: lockFile, body)
    }

    // MARK: Decisions

    /// Neither believes nor dismisses a "not found" until the probe or the marker settles it.
    private func resolveNotFound(_ key: String) throws(CredentialStoreError) -> Data? {
        switch keychain.read(account: Self.probeAccount) {
        case .found:
            // The keychain reads: the item is really not there.
            memory.withLock { $0.ambiguousSince = nil }
            return nil
        case .failed(.itemNotFound):
            break
        case .failed(let status):
            throw Self.error(status, "read (probe)")
        }
        // Neither the item nor the probe: a new installation, or a keychain that is not readable yet.
        guard let marker = installationMarker, try marker.read() != nil else {
            // This installation never ran (or there is no marker to say so): nothing can be lost, and
            // the first write is add-only, so an item the read missed is found then.
            return nil
        }
        if case .found(let data) = keychain.read(account: key) {
            found()
            return data
        }
        let now = now()
        let since = memory.withLock { memory in
            if memory.ambiguousSince == nil { memory.ambiguousSince = now }
            return memory.ambiguousSince ?? now
        }
        if now.timeIntervalSince(since) >= ambiguityGrace {
            return nil
        }
        throw .unavailable("the keychain reports no item although this installation stored one")
    }

    /// A read or write reached the item: the keychain works; make sure the probe exists.
    private func found() {
        memory.withLock { $0.ambiguousSince = nil }
        writeProbe()
    }

    private func writeProbe() {
        guard !memory.withLock({ $0.probeWritten }) else { return }
        let status = keychain.add(Data("1".utf8), account: Self.probeAccount)
        if status == .success || status == .duplicateItem {
            memory.withLock { $0.probeWritten = true }
        }
    }

    static func error(_ status: KeychainStatus, _ operation: String) -> CredentialStoreError {
        if status.isDenial { return .denied("keychain \(operation) refused: \(status)") }
        return status.isPermanent
            ? .misconfigured("keychain \(operation) failed: \(status)")
            : .unavailable("keychain \(operation) failed: \(status)")
    }
}
