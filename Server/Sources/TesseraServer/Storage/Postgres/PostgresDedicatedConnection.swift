import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// A connection of its own for one kind of batched read (see ``PostgresReadBatcher``), outside the pool.
///
/// The pool is built for many short leases, and each one has bookkeeping around it: a connection
/// that goes back to the pool arms a keep-alive timer (a task group of two tasks and a dispatch
/// timer, whose manager thread wakes and preempts a busy event loop), and the next lease disarms
/// it. Under load a batched session lookup leases a connection about a thousand times a second, and
/// that bookkeeping was a tenth of a heartbeat's CPU on PostgreSQL (docs/PERFORMANCE.md). The
/// batcher keeps this connection instead.
///
/// It is only ever a shortcut. Whenever it is missing (not connected yet, or dropped after an
/// error), busy (a batch that outlived its deadline still holds it) or being replaced, and when a
/// read on it fails, the read goes through the pool as before, so the pool's limits, timeouts and
/// outage behaviour stay what they were. A connection is opened in the background when one is
/// first wanted, and again after a failure at most once per ``retryInterval``; one that sat unused
/// for ``idleTimeout`` is closed rather than trusted (a firewall may have forgotten it), and one
/// that stays busy past ``stuckTimeout`` is closed so that its batch ends and a fresh connection
/// takes over.
final class PostgresDedicatedConnection: Sendable {
    private enum Slot {
        case closed(retryAfter: ContinuousClock.Instant?)
        case connecting
        case idle(PostgresConnection, lastUsed: ContinuousClock.Instant)
        case busy(PostgresConnection, since: ContinuousClock.Instant)
        case shutDown
    }

    private let slot = Mutex(Slot.closed(retryAfter: nil))
    private let configuration: PostgresConnection.Configuration
    private let eventLoop: any EventLoop
    private let logger: Logger
    let idleTimeout: Duration
    let stuckTimeout: Duration
    let retryInterval: Duration

    /// - Parameters:
    ///   - configuration: how to reach the server (the pool's own settings).
    ///   - eventLoop: the loop the connection lives on.
    ///   - stuckTimeout: how long one read may hold the connection before it is closed under it.
    init(
        configuration: PostgresConnection.Configuration, eventLoop: any EventLoop, logger: Logger,
        idleTimeout: Duration = .seconds(30), stuckTimeout: Duration, retryInterval: Duration = .seconds(1)
    ) {
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.logger = logger
        self.idleTimeout = idleTimeout
        self.stuckTimeout = stuckTimeout
        self.retryInterval = retryInterval
    }

    /// Runs `body` on the dedicated connection, or `fallback` (the pool) when there is none to use
    /// or `body` failed on it; a failed connection is dropped.
    func run<T>(
        _ body: (PostgresConnection) async throws -> T, otherwise fallback: () async throws -> T
    ) async throws -> T {
        if let connection = take() {
            do {
                let result = try await body(connection)
                release(connection)
                return result
            } catch {
                drop(connection)
                logger.debug(
                    "read on the dedicated database connection failed; using the pool",
                    metadata: ["error": "\(PostgresFailure.summary(error))"])
            }
        }
        return try await fallback()
    }

    /// Closes the connection if it has not been used for ``idleTimeout``.
    func closeIfIdle(now: ContinuousClock.Instant = .now) {
        let stale = slot.withLock { slot -> PostgresConnection? in
            guard case .idle(let connection, let lastUsed) = slot, now - lastUsed >= idleTimeout else { return nil }
            slot = .closed(retryAfter: nil)
            return connection
        }
        stale.map(Self.close)
    }

    /// Closes the connection for good; later reads go through the pool.
    func shutDown() {
        let open = slot.withLock { slot -> PostgresConnection? in
            defer { slot = .shutDown }
            switch slot {
            case .idle(let connection, _), .busy(let connection, _): return connection
            case .closed, .connecting, .shutDown: return nil
            }
        }
        open.map(Self.close)
    }

    /// Whether a connection is open and not in use (for tests).
    var isIdle: Bool {
        slot.withLock { slot in
            if case .idle = slot { return true }
            return false
        }
    }

    private enum Taken {
        case use(PostgresConnection)
        case connect(replacing: PostgresConnection?)
        case close(PostgresConnection)
        case none
    }

    private func take() -> PostgresConnection? {
        let now = ContinuousClock.now
        let taken = slot.withLock { slot -> Taken in
            switch slot {
            case .idle(let connection, let lastUsed):
                if connection.isClosed || now - lastUsed >= idleTimeout {
                    slot = .connecting
                    return .connect(replacing: connection)
                }
                slot = .busy(connection, since: now)
                return .use(connection)
            case .closed(let retryAfter):
                if let retryAfter, now < retryAfter { return .none }
                slot = .connecting
                return .connect(replacing: nil)
            case .busy(let connection, let since):
                // Its read ends with an error once the connection is closed, and that drops it.
                return now - since >= stuckTimeout ? .close(connection) : .none
            case .connecting, .shutDown:
                return .none
            }
        }
        switch taken {
        case .use(let connection):
            return connection
        case .connect(let replaced):
            replaced.map(Self.close)
            connect()
            return nil
        case .close(let connection):
            Self.close(connection)
            return nil
        case .none:
            return nil
        }
    }

    private func release(_ connection: PostgresConnection) {
        let kept = slot.withLock { slot in
            guard case .busy(let held, _) = slot, held === connection else { return false }
            slot = .idle(connection, lastUsed: .now)
            return true
        }
        if !kept { Self.close(connection) }
    }

    private func drop(_ connection: PostgresConnection) {
        slot.withLock { slot in
            guard case .busy(let held, _) = slot, held === connection else { return }
            slot = .closed(retryAfter: nil)
        }
        Self.close(connection)
    }

    private func connect() {
        Task { [configuration, eventLoop, logger, retryInterval] in
            do {
                let connection = try await PostgresConnection.connect(
                    on: eventLoop, configuration: configuration, id: 0, logger: logger)
                let kept = slot.withLock { slot in
                    guard case .connecting = slot else { return false }
                    slot = .idle(connection, lastUsed: .now)
                    return true
                }
                if !kept { Self.close(connection) }
            } catch {
                logger.debug(
                    "dedicated database connection failed", metadata: ["error": "\(PostgresFailure.summary(error))"])
                slot.withLock { slot in
                    guard case .connecting = slot else { return }
                    slot = .closed(retryAfter: .now + retryInterval)
                }
            }
        }
    }

    /// Closes `connection`, keeping it alive until it is (PostgresNIO asserts that a connection
    /// is closed before it goes away).
    private static func close(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }
}
