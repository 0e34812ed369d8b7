import Logging
import TesseraServer

/// Opens the configured store for one command, as `serve` does, and reports failures as `Error: …`.
enum CLIStore {
    static func with<T>(_ configuration: ServerConfiguration, _ body: (any TesseraStore) async throws -> T)
        async throws -> T
    {
        var logger = Logger(label: "tessera")
        logger.logLevel = configuration.logLevel
        let store: any TesseraStore
        do {
            store = try await configuration.openStore(logger: logger)
        } catch {
            throw CLIError.reporting(error)
        }
        do {
            let result = try await body(store)
            try await store.close()
            return result
        } catch {
            try? await store.close()
            throw CLIError.reporting(error)
        }
    }
}
