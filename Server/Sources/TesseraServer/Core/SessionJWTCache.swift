import Foundation
import Synchronization
import TesseraTokens

/// Session JWTs signed in the current second, so one session's concurrent requests share a signature.
///
/// An ES256 signature costs about as much CPU as serving a whole small request. A session often
/// asks several times within one second — an app backend that validates every API call of a user
/// with `authenticate`, an app that wakes with several requests in flight — and within one second
/// the claims are identical (`iat`, `nbf` and `exp` are whole seconds), so the token already signed
/// is exactly the token that would be signed again, apart from ECDSA's random nonce.
///
/// An entry is reused only when every claim and the signing key are equal: a session whose expiry,
/// profile or `external_id` changed, or a project whose signing key rotated, gets a new signature.
/// The cache never decides whether a session is alive; the server checks that before it asks.
final class SessionJWTCache: Sendable {
    private struct Entry {
        let claims: SessionClaims
        let keyID: String
        let token: String
    }

    /// One shard's entries, all signed in the same second (`second`): an entry of an earlier second
    /// can never be reused (its `iat` is that second), so a shard that sees a new second starts over.
    private struct Generation {
        var second: Date = .distantPast
        var entries: [String: Entry] = [:]
    }

    private final class Shard: Sendable {
        let generation = Mutex(Generation())
    }

    private static let shardCount = 16
    private let shards: [Shard]
    private let capacityPerShard: Int

    /// - Parameter capacity: the most sessions remembered at once (each entry is one token, ~600 bytes).
    init(capacity: Int = 32_768) {
        capacityPerShard = max(1, capacity / Self.shardCount)
        shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    private func shard(_ sessionID: String) -> Shard {
        var hasher = Hasher()
        hasher.combine(sessionID)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(Self.shardCount))]
    }

    /// The token signed for exactly these claims with this key, if there is one.
    func token(for claims: SessionClaims, keyID: String) -> String? {
        shard(claims.sessionID).generation.withLock { generation in
            guard generation.second == claims.issuedAt, let entry = generation.entries[claims.sessionID],
                entry.keyID == keyID, entry.claims == claims
            else { return nil }
            return entry.token
        }
    }

    /// Remembers a token just signed.
    ///
    /// Costs one dictionary insert when the cache never hits (the heartbeat real devices bring: no
    /// session twice in a second): the entries of a past second are dropped all at once, keeping the
    /// dictionary's storage, when the first token of a new second arrives — never copied or filtered.
    func store(_ token: String, for claims: SessionClaims, keyID: String) {
        shard(claims.sessionID).generation.withLock { generation in
            if generation.second != claims.issuedAt {
                // A token of an earlier second (a request that signed just before the second turned)
                // is not remembered: it could only be reused in a second that has passed.
                guard generation.second < claims.issuedAt else { return }
                generation.second = claims.issuedAt
                generation.entries.removeAll(keepingCapacity: true)
            } else if generation.entries.count >= capacityPerShard, generation.entries[claims.sessionID] == nil {
                // More sessions in one second than the bound: start over rather than grow.
                generation.entries.removeAll(keepingCapacity: true)
            }
            generation.entries[claims.sessionID] = Entry(claims: claims, keyID: keyID, token: token)
        }
    }

    /// How many sessions' tokens are remembered now, at most the capacity given to ``init(capacity:)``
    /// (rounded down to a multiple of the shard count): the bound that keeps the server's memory flat
    /// however many sessions heartbeat through it.
    var count: Int {
        shards.reduce(0) { total, shard in total + shard.generation.withLock { $0.entries.count } }
    }

    /// Forgets a session's token (after a revoke, so nothing of it lingers in memory).
    func remove(sessionID: String) {
        shard(sessionID).generation.withLock { _ = $0.entries.removeValue(forKey: sessionID) }
    }
}
