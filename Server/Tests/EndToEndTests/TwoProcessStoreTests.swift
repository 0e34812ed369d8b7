import Foundation
import TesseraTestProcess
import Testing

/// Two processes on one encrypted file store, against a live server: an app and its extension sharing
/// an app group container. The `tessera-device` example of the root package plays both (build it first:
/// `swift build --product tessera-device` at the repository's root, or set `TESSERA_DEVICE_BINARY`).
@Suite("Two processes on one store against a live server", .timeLimit(.minutes(1)))
struct TwoProcessStoreTests {
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["TESSERA_DEVICE_BINARY"] {
            return URL(fileURLWithPath: path)
        }
        // Server/Tests/EndToEndTests/<this file> → the repository's root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/tessera-device")
    }()

    @Test("The extension stays in memory while the app signs in: it takes the user, and the store keeps it")
    func extensionDoesNotOverwriteTheApp() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path),
            "build tessera-device first: swift build --product tessera-device (at the repository's root)")
        try await LiveServer.run { server in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-2p-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let common = [
                "--server", server.baseURL.absoluteString, "--key", server.project.publishableKey, "--state-dir",
                directory.path,
            ]
            let first = try await DeviceProcess.run(["start"] + common)
            #expect(first.status == 0, "\(first.output)")

            // The extension: started on the anonymous identity, then held in memory.
            let ext = try DeviceProcess(["hold"] + common)
            let before = await ext.waitForLine("ready")
            #expect(before.contains("kind=anonymous"), "\(before)")

            // The app signs the user in.
            let app = try await DeviceProcess.run(["identify", "--user-id", "two-process-alice"] + common)
            #expect(app.status == 0, "\(app.output)")
            #expect(app.output.contains("external_id=two-process-alice"), "\(app.output)")

            // The extension wakes and checks its session.
            let held = await ext.finish(input: "\n")
            #expect(held.status == 0, "\(held.output)")
            #expect(held.afterReady.contains("external_id=two-process-alice"), "\(held.output)")

            // A fresh launch reads the store: the user, not an anonymous identity written over it.
            let status = try await DeviceProcess.run(["status"] + common)
            #expect(status.output.contains("external_id=two-process-alice"), "\(status.output)")
            let profiles = try await server.profiles(externalID: "two-process-alice")
            #expect(profiles.count == 1)
            if let id = profiles.first?["id"] as? String {
                #expect(try await server.liveSessions(profileID: id)?.count == 1, "one live session, not a fork")
            }
        }
    }
}

/// One `tessera-device` process with its standard input and output. Its output is read on a thread
/// of its own with blocking reads, and its end is waited for on another (no run loop, no
/// `readabilityHandler`).
final class DeviceProcess {
    struct Result: Sendable {
        var status: Int32
        var output: String
        /// What it printed after its "ready" line.
        var afterReady: String {
            guard let range = output.range(of: "ready\n") else { return "" }
            return String(output[range.upperBound...])
        }
    }

    private let process: ChildProcess
    private let output: Guarded<Data>
    private let chunks: AsyncStream<Void>

    init(_ arguments: [String]) throws {
        let process = try ChildProcess(
            executable: TwoProcessStoreTests.binary.path, arguments: arguments, input: .pipe, output: .pipe,
            errors: .output)
        let output = Guarded(Data())
        let (chunks, chunksContinuation) = AsyncStream<Void>.makeStream()
        self.process = process
        self.output = output
        self.chunks = chunks
        guard let reader = process.standardOutput else { preconditionFailure("standard output is a pipe") }
        Thread.detachNewThread {
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                output.withLock { $0.append(chunk) }
                chunksContinuation.yield()
            }
            chunksContinuation.finish()
        }
    }

    var text: String { String(decoding: output.withLock { $0 }, as: UTF8.self) }

    /// Waits until the process printed `line` (or closed its output); answers what it printed so far.
    func waitForLine(_ line: String) async -> String {
        if text.contains("\(line)\n") { return text }
        for await _ in chunks where text.contains("\(line)\n") { break }
        return text
    }

    /// Writes `input`, closes standard input, and waits for the process to end and its output to close.
    func finish(input text: String) async -> Result {
        process.standardInput?.write(Data(text.utf8))
        try? process.standardInput?.close()
        let status = await process.terminated().status
        for await _ in chunks {}
        return Result(status: status, output: self.text)
    }

    /// Runs a command to its end.
    static func run(_ arguments: [String]) async throws -> Result {
        try await DeviceProcess(arguments).finish(input: "")
    }
}
