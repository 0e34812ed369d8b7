import Synchronization

/// Keeps each session's last client address and user agent, with a write only when they change.
///
/// A session is created with its client (``SessionRecord/client``); then a heartbeat calls
/// ``saw(sessionID:address:userAgent:)``: a hash, a lock and a dictionary lookup, no await, and
/// nothing else while the client is the one this node last saw. A different one is queued, and
/// ``flush()`` (from ``ActivityFlushService``, with the active users) writes the queue in one
/// transaction, each row updated only when it holds another client, so a node that forgot what it
/// wrote (a restart, another node) costs a statement but no row write.
///
/// The memory is bounded: past ``capacity`` sessions it starts afresh; past ``capacity`` queued
/// updates, new ones are dropped until a flush succeeds (the next change queues again).
final class SessionClientRecorder: Sendable {
    private struct State {
        /// A hash of each session's last client as this node saw it, by a hash of the session's ID.
        var last: [Int: Int] = [:]
        /// The latest client of each session to write, by session ID.
        var queued: [String: SessionClient] = [:]
    }

    private let state = Mutex(State())
    let store: any TesseraStore
    let capacity: Int

    init(store: any TesseraStore, capacity: Int = 1_000_000) {
        self.store = store
        self.capacity = capacity
    }

    /// Notes that a session was created with `client`: written with the session, remembered here.
    func created(sessionID: String, client: SessionClient) {
        let (session, key) = (sessionID.hashValue, client.hashValue)
        state.withLock { state in
            if state.last.count >= capacity { state.last.removeAll(keepingCapacity: true) }
            state.last[session] = key
        }
    }

    /// Notes that a session was used from `address` with `userAgent`; queues a write when this is
    /// not the client this node last saw for it.
    func saw(sessionID: String, address: String, userAgent: String?) {
        let client = SessionClient(address: address, userAgent: userAgent)
        let (session, key) = (sessionID.hashValue, client.hashValue)
        state.withLock { state in
            guard state.last[session] != key else { return }
            if state.last.count >= capacity { state.last.removeAll(keepingCapacity: true) }
            state.last[session] = key
            guard state.queued.count < capacity || state.queued[sessionID] != nil else { return }
            state.queued[sessionID] = client
        }
    }

    /// The updates waiting for the next flush.
    var queued: Int { state.withLock { $0.queued.count } }

    /// Writes the queued clients; on a failure they are queued again (unless a newer one was).
    func flush() async throws {
        let queued = state.withLock { state in
            defer { state.queued = [:] }
            return state.queued
        }
        guard !queued.isEmpty else { return }
        do {
            try await store.recordSessionClients(queued.map { ($0.key, $0.value) })
        } catch {
            state.withLock { state in
                for (id, client) in queued where state.queued[id] == nil { state.queued[id] = client }
            }
            throw error
        }
    }
}
