import AsyncHTTPClient
import Synchronization

/// The HTTP clients the webhook sender keeps between deliveries, one per endpoint host and the
/// address it was checked and pinned to, so consecutive deliveries reuse keep-alive connections.
///
/// A client made per delivery opened a TCP connection (and a TLS handshake) for every attempt and
/// tore its pool down after it: most of a delivery's cost on loopback. A client here only ever
/// connects to its key's address (its `dnsOverride`), so reusing its connections keeps the
/// sender's rule that a connection goes to an address that passed the checks. At most
/// ``capacity`` clients are kept; past it the least recently used idle one is shut down.
final class WebhookClients: Sendable {
    struct Key: Hashable, Sendable {
        /// The URL's host (a name, or an address literal).
        var host: String
        /// The checked address a name is pinned to (nil for an address literal).
        var address: String?
        /// The connect and read timeout, in nanoseconds.
        var timeout: Int64
    }

    private struct Entry {
        var client: HTTPClient
        var inFlight = 0
        var used: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var clock: UInt64 = 0
    }

    /// Every sender on SwiftNIO's singleton event loops shares these (they live as long as the process).
    static let shared = WebhookClients()

    let capacity: Int
    /// Connections kept per host by each client (more deliveries to one host wait for one).
    let connectionsPerHost: Int
    private let state = Mutex(State())

    init(capacity: Int = 64, connectionsPerHost: Int = 16) {
        self.capacity = capacity
        self.connectionsPerHost = connectionsPerHost
    }

    /// Runs `body` with the client for `key` (made on first use), counted in flight meanwhile.
    func with<T>(_ key: Key, make: () -> HTTPClient, _ body: (HTTPClient) async -> T) async -> T {
        let (client, evicted) = state.withLock { state -> (HTTPClient, [HTTPClient]) in
            state.clock &+= 1
            if var entry = state.entries[key] {
                entry.inFlight += 1
                entry.used = state.clock
                state.entries[key] = entry
                return (entry.client, [])
            }
            let client = make()
            state.entries[key] = Entry(client: client, inFlight: 1, used: state.clock)
            var evicted: [HTTPClient] = []
            while state.entries.count > capacity,
                let oldest = state.entries.filter({ $0.value.inFlight == 0 }).min(by: { $0.value.used < $1.value.used })
            {
                evicted.append(oldest.value.client)
                state.entries[oldest.key] = nil
            }
            return (client, evicted)
        }
        for client in evicted { Task { try? await client.shutdown() } }
        let result = await body(client)
        state.withLock { state in
            state.entries[key]?.inFlight -= 1
        }
        return result
    }

    /// The number of clients kept now.
    var count: Int { state.withLock { $0.entries.count } }
}
