@testable import Tessera

/// What tests read of the client's internals, through its internal types: nothing of this lives in the
/// production actor.
extension TesseraClient {
    /// How many callers joined an already running shared request.
    var sharedRequestJoins: Int { work.joins }

    /// Whether the client is busy on its own (see ``ClientWork/isWorking``).
    var isWorking: Bool { work.isWorking }

    /// The re-establishment of an ended session, while it runs.
    var reestablishTask: Task<Void, Never>? { heartbeat.reestablishTask }

    /// The heartbeat loop, while it runs.
    var maintenanceTask: Task<Void, Never>? { heartbeat.maintenanceTask }

    /// Whether the heartbeat is paused for the background.
    var isInBackground: Bool { heartbeat.isInBackground }

    /// Returns once `count` callers have joined an already running shared request (one waiter at a time).
    func waitForSharedRequestJoins(_ count: Int) async {
        if work.joins >= count { return }
        let (joins, continuation) = AsyncStream.makeStream(of: Int.self)
        work.onJoin = { continuation.yield($0) }
        for await total in joins where total >= count { break }
        work.onJoin = nil
    }
}
