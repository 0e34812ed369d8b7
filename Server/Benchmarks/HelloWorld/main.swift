import Hummingbird

/// A bare Hummingbird 2 server: the baseline the load benchmark compares `tessera serve` against.
///
/// Usage: `HelloWorld [--host 127.0.0.1] [--port 8081]`
var host = "127.0.0.1"
var port = 8081
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--host":
        guard let value = arguments.next() else { fatalError("--host needs a value") }
        host = value
    case "--port":
        guard let value = arguments.next(), let number = Int(value) else { fatalError("--port needs a number") }
        port = number
    default:
        fatalError("unknown argument \(argument); usage: HelloWorld [--host H] [--port P]")
    }
}

let router = Router()
router.get("/") { _, _ in "Hello, world!" }
router.post("/") { _, _ in "Hello, world!" }
let app = Application(router: router, configuration: .init(address: .hostname(host, port: port)))
try await app.runService()
