import Crypto
import HummingbirdBcrypt
import NIOPosix
import Synchronization
import TesseraTokens

/// Hashes and checks operator passwords with bcrypt, on NIO's blocking thread pool.
///
/// A bcrypt of cost 12 takes a few hundred milliseconds of one core: run on the cooperative pool
/// or an event loop it would stall every request behind it, so it runs on
/// `NIOThreadPool.singleton`. The password is first reduced to the base64url of its HMAC-SHA256: bcrypt
/// reads at most 72 bytes and stops at a NUL, and a 128-character password may be longer.
final class PasswordHasher: Sendable {
    /// bcrypt's log2 of rounds: 12 in production; tests use the minimum, 4.
    let cost: UInt8
    /// A hash of a random password at ``cost``, checked for logins of unknown emails so that they
    /// take as long as the others; made on first use.
    private let dummy = Mutex<String?>(nil)

    init(cost: UInt8 = 12) {
        self.cost = min(31, max(4, cost))
    }

    /// The bcrypt hash of `password`.
    func hash(_ password: String) async throws -> String {
        let (input, cost) = (Self.prepared(password), cost)
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(input, cost: cost) }
    }

    /// Whether `password` matches `hash`; false for a malformed hash.
    func verify(_ password: String, hash: String) async -> Bool {
        let input = Self.prepared(password)
        return (try? await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(input, hash: hash) }) ?? false
    }

    /// Checks `password` against a hash nobody's password matches: the work of a real check, for
    /// an email without a password.
    func verifyDummy(_ password: String) async {
        let existing = dummy.withLock { $0 }
        let hash: String
        if let existing {
            hash = existing
        } else {
            let made = (try? await self.hash(OpaqueToken.generate(prefix: "", byteCount: 32))) ?? ""
            hash = dummy.withLock { value in
                if value == nil { value = made }
                return value ?? made
            }
        }
        _ = await verify(password, hash: hash)
    }

    /// What bcrypt reads: the base64url of an HMAC-SHA256 of the password (43 ASCII characters, no
    /// NUL). The fixed key keeps the value apart from plain SHA-256 digests of passwords leaked elsewhere.
    static func prepared(_ password: String) -> String {
        Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Array(password.utf8), using: preparationKey)))
    }

    private static let preparationKey = SymmetricKey(data: Array("tessera operator password v1".utf8))
}
