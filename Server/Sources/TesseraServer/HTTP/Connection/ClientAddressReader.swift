import HTTPTypes
import Hummingbird

/// How this server reads a request's client address (``ClientAddress``): from the socket's peer,
/// or from the trusted proxy header when one is configured.
struct ClientAddressReader: Sendable {
    let trustedHeader: HTTPField.Name?

    init(configuration: ServerConfiguration) {
        trustedHeader = configuration.trustedProxyHeader.flatMap { HTTPField.Name($0) }
    }

    /// The counter key of the request's client.
    func key(_ request: Request, context: TesseraRequestContext) -> String {
        ClientAddress.key(headers: request.headers, remote: context.remoteAddress, trustedHeader: trustedHeader)
    }
}

extension ClientAddressReader {
    /// The origin of an admin call's events: the secret key and the client address.
    func secretKeyOrigin(_ request: Request, context: TesseraRequestContext) -> EventOrigin {
        EventOrigin(actor: .secretKey, clientAddress: key(request, context: context))
    }
}
