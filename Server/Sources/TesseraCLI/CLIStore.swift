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
        } catch let error as MasterKeyError {
            throw CLIError(description: error.description)
        } catch let error as ConfigurationError {
            throw CLIError(description: error.description)
        } catch let error as MigrationError {
            throw CLIError(description: error.description)
        }
        do {
            let result = try await body(store)
            try await store.close()
            return result
        } catch let error as CoreError {
            try? await store.close()
            throw CLIError(description: error.message)
        } catch let error as MasterKeyError {
            try? await store.close()
            throw CLIError(description: error.description)
        } catch let error as ConfigurationError {
            try? await store.close()
            throw CLIError(description: error.description)
        } catch {
            try? await store.close()
            throw error
        }
    }
}
