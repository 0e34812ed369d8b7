import Crypto
import Foundation
import Hummingbird
import TesseraTokens

/// A one-time value shown on the page a redirect lands on (Post/Redirect/Get): a new key, a webhook
/// secret, an enrollment link.
///
/// It is held server-side (in the store, so any node can show it), sealed with AES-GCM under a key
/// derived from the operator's session cookie, which the database does not hold (only its hash): the
/// row alone reveals nothing. The redirect names it (`?flash=ID`); the first view deletes it, so a
/// reload, the back button or a copied URL shows it no more. It expires after ten minutes unviewed.
enum ConsoleFlash {
    /// How long an unviewed flash is kept.
    static let seconds: Int64 = 600

    /// The sealing key of a session cookie's token for one flash.
    static func key(sessionToken: String, id: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Array(sessionToken.utf8)),
            salt: Array("tessera console flash".utf8), info: Array(id.utf8), outputByteCount: 32)
    }

    /// The fields sealed: URL-encoded, then AES-GCM (nonce, ciphertext and tag combined).
    static func seal(_ fields: [(String, String)], sessionToken: String, id: String) throws -> [UInt8] {
        let text = fields.map { ConsoleURL.encode($0.0) + "=" + ConsoleURL.encode($0.1) }.joined(separator: "&")
        let box = try AES.GCM.seal(Array(text.utf8), using: key(sessionToken: sessionToken, id: id))
        guard let combined = box.combined else { throw CoreError.invalidRequest("The flash could not be sealed.") }
        return Array(combined)
    }

    /// The fields of a sealed flash; nil when it does not open with this cookie.
    static func open(_ sealed: [UInt8], sessionToken: String, id: String) -> ConsoleForm? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let bytes = try? AES.GCM.open(box, using: key(sessionToken: sessionToken, id: id))
        else { return nil }
        return ConsoleForm(urlEncoded: Array(bytes))
    }

    /// A new flash ID: 16 random bytes, base64url.
    static func newID() -> String { OpaqueToken.generate(prefix: "", byteCount: 16) }
}

/// The token of the sign-in and enrollment forms: one the server issued, proved by an HMAC under a
/// key derived from the master key (so every node of a deployment accepts every node's tokens), and
/// paired with the browser by the form cookie (double submit). A token a cookie-injecting attacker
/// made up has no valid MAC.
enum ConsoleFormToken {
    static func key(_ master: MasterKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: master.key, salt: Array("tessera console form token".utf8), info: [],
            outputByteCount: 32)
    }

    /// A new token: `RANDOM.MAC`, both base64url.
    static func issue(_ keys: MasterKeyring) -> String {
        let random = OpaqueToken.generate(prefix: "", byteCount: 24)
        return random + "." + mac(random, key(keys.current))
    }

    /// Whether the server issued `token` (under the current master key or a previous one).
    static func isIssued(_ token: String, _ keys: MasterKeyring) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return false }
        let random = String(parts[0])
        let sent = Array(parts[1].utf8)
        return ([keys.current] + keys.previous).contains { master in
            OpaqueToken.constantTimeEquals(Array(mac(random, key(master)).utf8), sent)
        }
    }

    private static func mac(_ random: String, _ key: SymmetricKey) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(random.utf8), using: key)
        return Data(code).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

extension ConsoleController {
    /// A `303` to `url` carrying a flash of `fields` for this console session (Post/Redirect/Get).
    func redirect(_ request: ConsoleRequest, to url: ConsoleURL, flash fields: [(String, String)]) async throws
        -> Response
    {
        let id = ConsoleFlash.newID()
        let now = core.currentTime().seconds
        let sealed = try ConsoleFlash.seal(fields, sessionToken: request.sessionToken, id: id)
        try await core.store.saveConsoleFlash(
            id: id, sessionID: request.session.id, sealed: sealed, expiresAt: now + ConsoleFlash.seconds, now: now)
        var url = url
        url.query.append(("flash", id))
        return ConsoleHTTP.redirect(url)
    }

    /// The flash the page's URL names, taken (so never shown twice), and its notice; when the URL
    /// names one that is gone, a notice saying so.
    func takeFlash(_ request: ConsoleRequest) async throws -> (fields: ConsoleForm?, message: ConsoleMessage?) {
        guard let id = request.query.value("flash") else { return (nil, nil) }
        let now = core.currentTime().seconds
        guard id.utf8.count <= 64,
            let sealed = try await core.store.takeConsoleFlash(id: id, sessionID: request.session.id, now: now),
            let fields = ConsoleFlash.open(sealed, sessionToken: request.sessionToken, id: id)
        else {
            return (nil, .notice("This result was shown once already; it is not kept, and nothing was done again."))
        }
        return (fields, fields["notice"].map { .notice($0) })
    }
}
