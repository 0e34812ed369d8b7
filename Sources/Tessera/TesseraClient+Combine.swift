#if canImport(Combine)
    public import Combine
    import Foundation

    extension TesseraClient {
        /// The session state as a Combine publisher: the current state first, then every change,
        /// delivered on the main queue.
        public nonisolated var sessionPublisher: AnyPublisher<Availability<Session>, Never> {
            BroadcastPublisher(broadcaster: sessionBroadcaster).eraseToAnyPublisher()
        }

        /// The profile state as a Combine publisher: the current state first, then every change,
        /// delivered on the main queue.
        public nonisolated var profilePublisher: AnyPublisher<Availability<Profile>, Never> {
            BroadcastPublisher(broadcaster: profileBroadcaster).eraseToAnyPublisher()
        }
    }

    /// A publisher over a ``StateBroadcaster``: each subscription observes it and hands values to the
    /// subscriber on the main queue, honouring demand.
    struct BroadcastPublisher<Value: Sendable & Equatable>: Publisher {
        typealias Output = Value
        typealias Failure = Never

        let broadcaster: StateBroadcaster<Value>

        func receive<S: Subscriber>(subscriber: S) where S.Input == Value, S.Failure == Never {
            let subscription = BroadcastSubscription(subscriber: subscriber)
            subscriber.receive(subscription: subscription)
            subscription.observe(broadcaster)
        }
    }

    /// One subscription: a thin Combine shell over ``DemandQueue``, which keeps the demand and the
    /// buffer (tested without Combine). The subscriber is only called on the main queue, outside any lock.
    final class BroadcastSubscription<S: Subscriber>: Subscription, @unchecked Sendable
    where S.Failure == Never, S.Input: Sendable & Equatable {
        private struct State {
            var subscriber: S?
            var queue = DemandQueue<S.Input>()
            var observerID: Int?
            var removeObserver: (@Sendable (Int) -> Void)?
        }

        private let state: Locked<State>

        init(subscriber: S) {
            state = Locked(State(subscriber: subscriber))
        }

        func observe(_ broadcaster: StateBroadcaster<S.Input>) {
            let id = broadcaster.addObserver { [weak self] value in self?.enqueue(value) }
            let cancelled = state.withLock { state -> Bool in
                state.observerID = id
                state.removeObserver = { broadcaster.removeObserver($0) }
                return state.subscriber == nil
            }
            if cancelled { broadcaster.removeObserver(id) }
        }

        func request(_ demand: Subscribers.Demand) {
            state.withLock { $0.queue.request(demand.max) }
            scheduleDrain()
        }

        func cancel() {
            let (id, remove) = state.withLock { state -> (Int?, (@Sendable (Int) -> Void)?) in
                state.subscriber = nil
                state.queue.cancel()
                return (state.observerID, state.removeObserver)
            }
            if let id, let remove { remove(id) }
        }

        private func enqueue(_ value: S.Input) {
            state.withLock { $0.queue.enqueue(value) }
            scheduleDrain()
        }

        private func scheduleDrain() {
            DispatchQueue.main.async { self.drain() }
        }

        private func drain() {
            while true {
                let next = state.withLock { state -> (S, S.Input)? in
                    guard let subscriber = state.subscriber, let value = state.queue.next() else { return nil }
                    return (subscriber, value)
                }
                guard let (subscriber, value) = next else { return }
                let more = subscriber.receive(value)
                state.withLock { $0.queue.request(more.max) }
            }
        }
    }
#endif
