import Foundation

@testable import Tessera

/// An in-memory keychain of generic-password items that fails the way devices do.
final class FakeKeychain: KeychainAccess {
    /// A failure mode of the whole keychain.
    enum Fault: Sendable, Hashable, CustomStringConvertible {
        /// Locked (before the first unlock, or a `WhenUnlocked` item while locked): every call fails
        /// with `errSecInteractionNotAllowed`.
        case locked
        /// Before the first unlock and during pre-warming: reads and updates answer "not found" for
        /// items that exist; adds meet the hidden item (`errSecDuplicateItem`) or fail as locked.
        case spuriousNotFound
        /// An app without the keychain entitlement: every call fails with -34018.
        case missingEntitlement
        /// An invalid query: every call fails with -50.
        case invalidParameter

        var description: String {
            switch self {
            case .locked: return "locked"
            case .spuriousNotFound: return "spurious not found"
            case .missingEntitlement: return "missing entitlement"
            case .invalidParameter: return "invalid parameter"
            }
        }
    }

    private struct State {
        var items: [String: Data] = [:]
        var fault: Fault?
        var calls: [String] = []
        /// Answers for the next reads of an account, before the items are consulted.
        var scriptedReads: [String: [KeychainRead]] = [:]
        /// Runs once, before the next add.
        var beforeAdd: (@Sendable () -> Void)?
    }

    private let state = Locked(State())

    var items: [String: Data] { state.withLock { $0.items } }
    var calls: [String] { state.withLock { $0.calls } }
    var writes: [String] { calls.filter { !$0.hasPrefix("read") } }

    func setFault(_ fault: Fault?) { state.withLock { $0.fault = fault } }
    func setItem(_ data: Data?, account: String) { state.withLock { $0.items[account] = data } }
    func scriptReads(_ account: String, _ answers: KeychainRead...) {
        state.withLock { $0.scriptedReads[account, default: []].append(contentsOf: answers) }
    }
    func beforeNextAdd(_ body: @escaping @Sendable () -> Void) { state.withLock { $0.beforeAdd = body } }

    func read(account: String) -> KeychainRead {
        state.withLock { state in
            state.calls.append("read \(account)")
            if var queue = state.scriptedReads[account], !queue.isEmpty {
                let answer = queue.removeFirst()
                state.scriptedReads[account] = queue
                return answer
            }
            switch state.fault {
            case .locked: return .failed(.interactionNotAllowed)
            case .spuriousNotFound: return .failed(.itemNotFound)
            case .missingEntitlement: return .failed(.missingEntitlement)
            case .invalidParameter: return .failed(.invalidParameter)
            case nil: return state.items[account].map { .found($0) } ?? .failed(.itemNotFound)
            }
        }
    }

    func add(_ data: Data, account: String) -> KeychainStatus {
        let hook = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state.beforeAdd = nil }
            return state.beforeAdd
        }
        hook?()
        return state.withLock { state in
            state.calls.append("add \(account)")
            switch state.fault {
            case .locked: return .interactionNotAllowed
            case .spuriousNotFound: return state.items[account] == nil ? .interactionNotAllowed : .duplicateItem
            case .missingEntitlement: return .missingEntitlement
            case .invalidParameter: return .invalidParameter
            case nil:
                guard state.items[account] == nil else { return .duplicateItem }
                state.items[account] = data
                return .success
            }
        }
    }

    func update(_ data: Data, account: String) -> KeychainStatus {
        state.withLock { state in
            state.calls.append("update \(account)")
            switch state.fault {
            case .locked: return .interactionNotAllowed
            case .spuriousNotFound: return .itemNotFound
            case .missingEntitlement: return .missingEntitlement
            case .invalidParameter: return .invalidParameter
            case nil:
                guard state.items[account] != nil else { return .itemNotFound }
                state.items[account] = data
                return .success
            }
        }
    }

    func delete(account: String) -> KeychainStatus {
        state.withLock { state in
            state.calls.append("delete \(account)")
            switch state.fault {
            case .locked: return .interactionNotAllowed
            case .spuriousNotFound: return .itemNotFound
            case .missingEntitlement: return .missingEntitlement
            case .invalidParameter: return .invalidParameter
            case nil: return state.items.removeValue(forKey: account) == nil ? .itemNotFound : .success
            }
        }
    }
}
