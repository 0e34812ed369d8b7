import Foundation

@testable import Tessera

/// A client wired to a fake server through a scripted transport, a manual clock, a fixed random
/// source and an in-memory store.
struct Harness {
    let clock: ManualClock
    let server: FakeServer
    let transport: ScriptedTransport
    let store: any CredentialStore
    let random: Locked<Double>
    let client: TesseraClient

    init(
        store: (any CredentialStore)? = nil,
        random: Double = 0.5,
        provider: (any IdentityTokenProvider)? = nil,
        fallback: FallbackPolicy = .anonymous,
        clock: ManualClock = ManualClock(),
        server: FakeServer? = nil,
        configure: (inout TesseraConfiguration) -> Void = { _ in }
    ) {
        self.clock = clock
        let server = server ?? FakeServer(clock: clock)
        self.server = server
        let transport = server.transport
        self.transport = transport
        let store = store ?? InMemoryCredentialStore()
        self.store = store
        let randomValue = Locked(random)
        self.random = randomValue
        var configuration = TesseraConfiguration(
            serverURL: URL(string: "https://tessera.test")!,
            publishableKey: FakeServer.publishableKey,
            credentialStore: store,
            transport: transport.transport,
            clock: clock,
            identityTokenProvider: provider,
            fallbackPolicy: fallback,
            random: { randomValue.withLock { $0 } },
            observesApplicationLifecycle: false
        )
        configure(&configuration)
        client = TesseraClient(configuration: configuration)
    }

    /// Another client on the same store, server and clock: "the app launched again".
    func relaunch(provider: (any IdentityTokenProvider)? = nil) -> Harness {
        Harness(store: store, random: random.withLock { $0 }, provider: provider, clock: clock, server: server)
    }

    /// The stored state, decoded.
    func storedState(key: String = "tessera") throws -> PersistedState? {
        guard let data = try store.load(key) else { return nil }
        return try WireCoding.decoder().decode(PersistedState.self, from: data)
    }
}

/// A provider whose answers the test sets.
final class StubProvider: IdentityTokenProvider {
    let answers = Locked<[Result<String?, TesseraError>]>([])
    let requests = Locked<[IdentityTokenRequest]>([])

    func enqueue(_ answer: Result<String?, TesseraError>) { answers.withLock { $0.append(answer) } }

    func identityToken(for request: IdentityTokenRequest) async throws -> String? {
        requests.withLock { $0.append(request) }
        let answer = answers.withLock { $0.isEmpty ? .success(nil) : $0.removeFirst() }
        return try answer.get()
    }
}

/// Collects a stream's values as they come, so tests can await "the next value matching …".
final class Recorder<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiters: [(predicate: @Sendable (Value) -> Bool, continuation: CheckedContinuation<Value, Never>)] = []
    }

    private let state = Locked(State())
    private let task: Locked<Task<Void, Never>?> = Locked(nil)

    init(_ stream: AsyncStream<Value>) {
        let task = Task { [state] in
            for await value in stream {
                let ready = state.withLock { state -> [CheckedContinuation<Value, Never>] in
                    state.values.append(value)
                    let ready = state.waiters.filter { $0.predicate(value) }.map(\.continuation)
                    state.waiters.removeAll { $0.predicate(value) }
                    return ready
                }
                for continuation in ready { continuation.resume(returning: value) }
            }
        }
        self.task.withLock { $0 = task }
    }

    var values: [Value] { state.withLock { $0.values } }

    /// Returns the first recorded value (past or future) matching `predicate`.
    func first(where predicate: @escaping @Sendable (Value) -> Bool) async -> Value {
        await withCheckedContinuation { continuation in
            let found = state.withLock { state -> Value? in
                if let value = state.values.first(where: predicate) { return value }
                state.waiters.append((predicate, continuation))
                return nil
            }
            if let found { continuation.resume(returning: found) }
        }
    }

    deinit { task.withLock { $0?.cancel() } }
}

/// A provider that holds every request until the test answers it (or forever, until cancelled when
/// `honoursCancellation`), so a test can overtake a re-establishment at an exact point.
final class GatedProvider: IdentityTokenProvider {
    private struct State {
        var pending: [CheckedContinuation<String?, any Error>] = []
        var requests: [IdentityTokenRequest] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    var requests: [IdentityTokenRequest] { state.withLock { $0.requests } }

    func identityToken(for request: IdentityTokenRequest) async throws -> String? {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.pending.append(continuation)
                state.requests.append(request)
                let ready = state.waiters.filter { $0.count <= state.requests.count }
                state.waiters.removeAll { $0.count <= state.requests.count }
                return ready.map(\.continuation)
            }
            for waiter in ready { waiter.resume() }
        }
    }

    /// Returns once the provider was asked `count` times.
    func waitForRequests(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.requests.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Answers the oldest request still waiting.
    func answer(_ result: Result<String?, any Error>) {
        let continuation = state.withLock { $0.pending.isEmpty ? nil : $0.pending.removeFirst() }
        continuation?.resume(with: result)
    }
}
