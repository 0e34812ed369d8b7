// tessera-device: plays one app installation from the terminal against a running Tessera server.
//
//   tessera-device start     [--server URL] [--key pk_…] [--state-dir DIR]
//   tessera-device identify  --token IDENTITY_TOKEN
//   tessera-device identify  --user-id USER_ID
//   tessera-device status
//   tessera-device sign-out
//   tessera-device hold      (starts, prints "ready", waits for a line on stdin, then checks the session)
//
// The server URL and publishable key also come from TESSERA_SERVER_URL and TESSERA_PUBLISHABLE_KEY.
// State lives in an encrypted file store under --state-dir (default ./.tessera-device), its key in a
// separate key file there: that only keeps the session token from casual reading. Several processes may
// share one --state-dir, as an app and its extensions share an app group container: `hold` plays an
// extension that stays in memory while another process (the app) signs in or out.

import Foundation
import Tessera

struct Options {
    var command = ""
    var server = ProcessInfo.processInfo.environment["TESSERA_SERVER_URL"] ?? "http://127.0.0.1:8080"
    var key = ProcessInfo.processInfo.environment["TESSERA_PUBLISHABLE_KEY"] ?? ""
    var stateDirectory = ".tessera-device"
    var token: String?
    var userID: String?
}

struct UsageError: Error, CustomStringConvertible {
    var description: String
}

let usage = """
    usage: tessera-device <start|identify|status|sign-out|hold> [--server URL] [--key pk_…] [--state-dir DIR]
                          [--token IDENTITY_TOKEN | --user-id USER_ID]
    """

func parse(_ arguments: [String]) throws -> Options {
    var options = Options()
    var rest = arguments[...]
    guard let command = rest.popFirst() else { throw UsageError(description: usage) }
    options.command = command
    while let flag = rest.popFirst() {
        guard let value = rest.popFirst() else { throw UsageError(description: "\(flag) needs a value\n\(usage)") }
        switch flag {
        case "--server": options.server = value
        case "--key": options.key = value
        case "--state-dir": options.stateDirectory = value
        case "--token": options.token = value
        case "--user-id": options.userID = value
        default: throw UsageError(description: "unknown option \(flag)\n\(usage)")
        }
    }
    return options
}

func describe(_ client: TesseraClient) async -> String {
    var lines: [String] = []
    lines.append("installation: \(await client.installationID?.uuidString.lowercased() ?? "-")")
    switch client.sessionState {
    case .available(let session, let validated):
        lines.append("session:      \(session.id) (expires \(session.expiresAt), validated \(validated))")
    case .unavailable(let reason):
        lines.append("session:      none (\(reason.rawValue))")
    }
    if let profile = await client.profile {
        lines.append("profile:      \(profile.id) \(profile.kind.rawValue) external_id=\(profile.externalID ?? "null")")
    }
    if let capabilities = await client.capabilities {
        lines.append("capabilities: kind=\(capabilities.kind.rawValue) authenticated=\(capabilities.authenticated)")
    }
    if let token = await client.appAccountToken { lines.append("appAccountToken: \(token.uuidString.lowercased())") }
    return lines.joined(separator: "\n")
}

func run() async -> Int32 {
    do {
        let options = try parse(Array(CommandLine.arguments.dropFirst()))
        guard let url = URL(string: options.server), url.scheme != nil else {
            throw UsageError(description: "not a URL: \(options.server)")
        }
        guard options.key.hasPrefix("pk_") else {
            throw UsageError(description: "a publishable key (pk_…) is needed: --key or TESSERA_PUBLISHABLE_KEY")
        }
        let store = EncryptedFileStore(directory: URL(fileURLWithPath: options.stateDirectory))
        let client = TesseraClient(
            configuration: TesseraConfiguration(
                serverURL: url, publishableKey: options.key, credentialStore: store,
                logHandler: { message in
                    if message.level >= .warning { FileHandle.standardError.write(Data("\(message)\n".utf8)) }
                }, observesApplicationLifecycle: false))
        try await client.start()
        switch options.command {
        case "start":
            print(await describe(client))
        case "status":
            try await client.refreshSession()
            print(await describe(client))
        case "identify":
            let capabilities: Capabilities
            if let token = options.token {
                capabilities = try await client.identify(signedIdentityToken: token)
            } else if let userID = options.userID {
                capabilities = try await client.identify(userID: userID)
            } else {
                throw UsageError(description: "identify needs --token or --user-id")
            }
            print("identified: kind=\(capabilities.kind.rawValue) authenticated=\(capabilities.authenticated)")
            print(await describe(client))
        case "hold":
            // Unbuffered: whoever waits for "ready" reads the state with it.
            FileHandle.standardOutput.write(Data("\(await describe(client))\nready\n".utf8))
            _ = readLine()
            do {
                try await client.refreshSession()
            } catch {
                FileHandle.standardError.write(Data("refresh: \(error)\n".utf8))
            }
            // A session ended on the server is replaced in the background: wait for one.
            for await state in client.sessionUpdates where state.value != nil { break }
            print(await describe(client))
        case "sign-out":
            try await client.signOut()
            print("signed out")
            print(await describe(client))
        default:
            throw UsageError(description: usage)
        }
        await client.stop()
        return 0
    } catch let error as UsageError {
        FileHandle.standardError.write(Data("\(error.description)\n".utf8))
        return 64
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        return 1
    }
}

exit(await run())
