/// A node in the database's registry (`nodes`): which release it runs and when it last said so.
///
/// A node registers when it starts (in the migration's transaction, under its lock), refreshes
/// ``heartbeatAt`` every ``ServerConfiguration/nodeHeartbeatInterval`` and deletes its row on a
/// graceful shutdown; a node whose heartbeat is older than ``ServerConfiguration/nodeAliveSeconds``
/// counts as gone (killed, crashed, cut off).
public struct NodeRecord: Sendable, Equatable {
    /// Host name, process ID and a random suffix: unique per process.
    public let id: String
    /// ``TesseraRelease/version`` of the node.
    public let release: String
    /// ``TesseraRelease/schemaVersion`` of the node: the latest step it knows.
    public let schemaVersion: Int64
    /// Unix seconds.
    public let startedAt: Int64
    /// Unix seconds.
    public var heartbeatAt: Int64

    public init(id: String, release: String, schemaVersion: Int64, startedAt: Int64, heartbeatAt: Int64) {
        self.id = id
        self.release = release
        self.schemaVersion = schemaVersion
        self.startedAt = startedAt
        self.heartbeatAt = heartbeatAt
    }
}
