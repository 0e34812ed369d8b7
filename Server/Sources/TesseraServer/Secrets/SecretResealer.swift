/// Seals the plaintext values of older databases and moves sealed values to the current master key.
///
/// Every change is one compare-and-swap update of one value (``SealedCellStore/replaceSealedCell(_:with:)``),
/// committed on its own: a crash or a kill at any point leaves each value either as it was or
/// sealed under the current key, both of which the keyring opens.
public enum SecretResealer {
    /// What a pass changed.
    public struct Report: Sendable, Equatable {
        /// Plaintext values (written by an older version) now sealed.
        public var sealedPlaintext = 0
        /// Values moved from a previous master key to the current one.
        public var rewrapped = 0
        /// Values left as they were.
        public var unchanged = 0

        public init(sealedPlaintext: Int = 0, rewrapped: Int = 0, unchanged: Int = 0) {
            self.sealedPlaintext = sealedPlaintext
            self.rewrapped = rewrapped
            self.unchanged = unchanged
        }
    }

    /// Checks that the store's keyring opens every sealed value, then seals the plaintext ones:
    /// what a server does at startup before it answers a request.
    ///
    /// Throws `master_key_mismatch` when a value is sealed under a key the ring lacks, or does not
    /// open (altered, or moved from another row); nothing is changed then.
    public static func sealPlaintextAndVerify(store: any SealedCellStore) async throws -> Report {
        let keys = store.masterKeys
        let cells = try await store.sealedCells()
        try verify(cells, keys: keys)
        var report = Report()
        for cell in cells {
            if MasterKeyring.isSealed(cell.stored) {
                report.unchanged += 1
            } else if try await store.replaceSealedCell(cell, with: keys.seal(cell.stored, binding: cell.binding)) {
                report.sealedPlaintext += 1
            }
        }
        if report.sealedPlaintext > 0 {
            // The plaintext would otherwise linger in freed pages and WAL frames of the file.
            try await store.purgeReplacedValues()
        }
        return report
    }

    /// Re-seals under the current key every value sealed under a previous key (or still plaintext),
    /// each in a transaction of its own, while servers keep running.
    ///
    /// - Parameters:
    ///   - store: a store whose keyring has the new key as current and the old ones as previous.
    ///   - afterEach: called after each value is replaced (tests interrupt the rewrap here).
    public static func rewrap(
        store: any SealedCellStore, afterEach: @Sendable (SealedCell) async throws -> Void = { _ in }
    ) async throws -> Report {
        let keys = store.masterKeys
        var report = Report()
        // Values added by servers still sealing under an old key during the pass are caught by the next.
        for _ in 0..<5 {
            let cells = try await store.sealedCells()
            try verify(cells, keys: keys)
            let pending = cells.filter { MasterKeyring.keyID(of: $0.stored) != keys.current.id }
            if report.rewrapped + report.sealedPlaintext == 0 { report.unchanged = cells.count - pending.count }
            if pending.isEmpty { return report }
            for cell in pending {
                let sealed = MasterKeyring.isSealed(cell.stored)
                let plaintext = try sealed ? keys.open(cell.stored, binding: cell.binding) : cell.stored
                guard try await store.replaceSealedCell(cell, with: keys.seal(plaintext, binding: cell.binding)) else {
                    continue
                }
                if sealed { report.rewrapped += 1 } else { report.sealedPlaintext += 1 }
                try await afterEach(cell)
            }
        }
        throw MasterKeyError(
            code: "rewrap_incomplete",
            message:
                "values sealed under an old master key kept appearing; give every server the new key first, then rewrap again"
        )
    }

    /// Throws `master_key_mismatch` unless `keys` opens every sealed cell.
    static func verify(_ cells: [SealedCell], keys: MasterKeyring) throws(MasterKeyError) {
        let foreign = Set(cells.compactMap(\.sealedKeyID).filter { !keys.keyIDs.contains($0) })
        guard foreign.isEmpty else {
            throw .mismatch(
                "the database's secrets are sealed under master key \(foreign.sorted().joined(separator: ", ")), but the configured master key is \(keys.current.id)\(keys.previous.isEmpty ? "" : " (previous: \(keys.previous.map(\.id).joined(separator: ", ")))"). Start with the master key file this database was sealed with (--master-key-file or TESSERA_MASTER_KEY_FILE)."
            )
        }
        for cell in cells where cell.sealedKeyID != nil {
            _ = try keys.open(cell.stored, binding: cell.binding)
        }
    }
}

extension SealedCell {
    var sealedKeyID: String? { MasterKeyring.keyID(of: stored) }
}
