/// What sealing and rewrapping need of a database: its master keys, its sealed values as stored,
/// and a compare-and-swap replacement of one value.
///
/// Declared here so that `Secrets/` depends on no store: ``TesseraStore`` refines it, and
/// ``SecretResealer`` works through it alone.
public protocol SealedCellStore: Sendable {
    /// The master keys this store seals identity secrets, signing keys and webhook secrets with: it seals them on
    /// every write and opens them on every read, so the records it answers always hold plaintext.
    var masterKeys: MasterKeyring { get }
    /// Every sealed column value as stored, plaintext ones of older versions included.
    func sealedCells() async throws -> [SealedCell]
    /// Replaces `cell`'s value with `value` in one transaction if it still holds `cell.stored`;
    /// false when it changed or is gone.
    func replaceSealedCell(_ cell: SealedCell, with value: [UInt8]) async throws -> Bool
    /// Drops what replaced values leave behind in the database's files (freed pages, old log
    /// frames), so that a plaintext secret of an older version does not linger once sealed.
    func purgeReplacedValues() async throws
}

extension SealedCellStore {
    /// Does nothing: a store that does not override it keeps no replaced value in its files
    /// (PostgreSQL's dead tuples are vacuumed by the server).
    public func purgeReplacedValues() async throws {}
}
