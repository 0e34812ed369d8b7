import Foundation
import Logging
import ServiceLifecycle

/// Keeps this node's row in the database's node registry fresh, off the request path: one upsert
/// every ``ServerConfiguration/nodeHeartbeatInterval``, and the row deleted on a graceful shutdown.
///
/// The row was inserted when the node started, under the migration lock (``makeNode``); a failed
/// heartbeat is logged and tried again at the next interval (the row reappears if it was deleted).
struct NodeRegistryService: Service {
    let store: any TesseraStore
    let node: NodeRecord
    let interval: Duration
    let now: @Sendable () -> Date
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                break
            }
            guard !Task.isShuttingDownGracefully else { break }
            var beat = node
            beat.heartbeatAt = Int64(now().timeIntervalSince1970.rounded(.down))
            do {
                try await store.heartbeat(node: beat)
            } catch {
                logger.warning("node heartbeat failed", metadata: ["error": "\(error)"])
            }
        }
        do {
            try await store.removeNode(id: node.id)
            logger.notice("left the node registry", metadata: ["node": "\(node.id)"])
        } catch {
            logger.warning("could not leave the node registry", metadata: ["error": "\(error)"])
        }
    }

    /// A node ID unique per process: host name, process ID and random characters.
    static func makeNodeID() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "node"
        let suffix = String(UUID().uuidString.prefix(8)).lowercased()
        return "\(host)-\(ProcessInfo.processInfo.processIdentifier)-\(suffix)"
    }
}
