import Foundation

@testable import Tessera

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An HTTP answer for the scripted transport.
struct Reply: Sendable {
    var status: Int
    var body: Data
    var headers: [String: String] = [:]

    static func json(_ status: Int, _ object: Any, headers: [String: String] = [:]) -> Reply {
        Reply(status: status, body: try! JSONSerialization.data(withJSONObject: object), headers: headers)
    }

    static func error(_ status: Int, _ code: String, headers: [String: String] = [:]) -> Reply {
        json(status, ["error": ["code": code, "message": "scripted \(code)"]], headers: headers)
    }

    static let noContent = Reply(status: 204, body: Data())
}

/// What the transport does with one request.
enum Outcome: Sendable {
    case reply(Reply)
    case failure(URLError.Code)
}

/// One request held by the scripted transport until the test answers it.
final class Exchange: Sendable {
    let request: URLRequest
    private let continuation: Locked<CheckedContinuation<(Data, URLResponse), any Error>?>

    init(request: URLRequest, continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        self.request = request
        self.continuation = Locked(continuation)
    }

    var method: String { request.httpMethod ?? "GET" }
    var path: String { request.url?.path ?? "" }
    var endpoint: String { "\(method) \(path)" }
    var bearer: String? {
        request.value(forHTTPHeaderField: "Authorization").flatMap {
            $0.split(separator: " ", maxSplits: 1).last.map(String.init)
        }
    }

    func respond(_ reply: Reply) {
        let continuation = self.continuation.withLock { value in
            defer { value = nil }
            return value
        }
        continuation?.resume(returning: ScriptedTransport.response(reply, for: request))
    }

    func fail(_ code: URLError.Code) {
        let continuation = self.continuation.withLock { value in
            defer { value = nil }
            return value
        }
        continuation?.resume(throwing: URLError(code))
    }
}

/// A transport the test drives: a handler answers at once, or (returning nil) the request is held
/// until the test takes it with `next()` and answers it, in any order.
final class ScriptedTransport: Sendable {
    typealias Handler = @Sendable (URLRequest) -> Outcome?

    private struct State {
        var held: [Exchange] = []
        var waiters: [CheckedContinuation<Exchange, Never>] = []
        var log: [String] = []
        var handler: Handler?
    }

    private let state: Locked<State>

    init(handler: Handler? = nil) {
        state = Locked(State(handler: handler))
    }

    func setHandler(_ handler: Handler?) {
        state.withLock { $0.handler = handler }
    }

    /// "METHOD /path" of every request, in order.
    var log: [String] { state.withLock { $0.log } }

    func count(_ endpoint: String) -> Int { log.filter { $0 == endpoint }.count }

    var transport: TesseraConfiguration.Transport {
        { request in try await self.handle(request) }
    }

    /// The next held request (waits for it).
    func next() async -> Exchange {
        await withCheckedContinuation { (continuation: CheckedContinuation<Exchange, Never>) in
            let exchange = state.withLock { state -> Exchange? in
                if !state.held.isEmpty { return state.held.removeFirst() }
                state.waiters.append(continuation)
                return nil
            }
            if let exchange { continuation.resume(returning: exchange) }
        }
    }

    private func handle(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let endpoint = "\(request.httpMethod ?? "GET") \(request.url?.path ?? "")"
        let handler = state.withLock { state -> Handler? in
            state.log.append(endpoint)
            return state.handler
        }
        if let outcome = handler?(request) {
            switch outcome {
            case .reply(let reply): return Self.response(reply, for: request)
            case .failure(let code): throw URLError(code)
            }
        }
        return try await withCheckedThrowingContinuation { continuation in
            let exchange = Exchange(request: request, continuation: continuation)
            let waiter = state.withLock { state -> CheckedContinuation<Exchange, Never>? in
                if !state.waiters.isEmpty { return state.waiters.removeFirst() }
                state.held.append(exchange)
                return nil
            }
            waiter?.resume(returning: exchange)
        }
    }

    static func response(_ reply: Reply, for request: URLRequest) -> (Data, URLResponse) {
        var headers = reply.headers
        headers["Content-Type"] = "application/json"
        headers["X-Request-Id"] = "req_test"
        let response = HTTPURLResponse(
            url: request.url!, statusCode: reply.status, httpVersion: "HTTP/1.1", headerFields: headers)!
        return (reply.body, response)
    }
}
