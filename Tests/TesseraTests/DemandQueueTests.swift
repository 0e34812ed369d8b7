import Testing

@testable import Tessera

@Suite("Publisher demand bookkeeping")
struct DemandQueueTests {
    @Test("Values wait until demanded, and go out in order, one per unit of demand")
    func demand() {
        var queue = DemandQueue<Int>()
        queue.enqueue(1)
        queue.enqueue(2)
        queue.enqueue(3)
        #expect(queue.next() == nil, "no demand yet")
        queue.request(2)
        #expect(queue.next() == 1)
        #expect(queue.next() == 2)
        #expect(queue.next() == nil, "demand used up")
        #expect(queue.outstanding == 0)
        queue.request(0)
        #expect(queue.next() == nil)
        queue.request(1)
        #expect(queue.next() == 3)
        queue.request(5)
        #expect(queue.next() == nil, "nothing queued")
        #expect(queue.outstanding == 5, "demand is kept for later values")
        queue.enqueue(4)
        #expect(queue.next() == 4)
        #expect(queue.outstanding == 4)
    }

    @Test("Unlimited demand, and demand that adds up past Int.max, stay unlimited")
    func unlimited() {
        var queue = DemandQueue<Int>()
        queue.request(nil)
        for value in 0..<100 { queue.enqueue(value) }
        var received: [Int] = []
        while let value = queue.next() { received.append(value) }
        #expect(received == Array(0..<100))
        #expect(queue.outstanding == nil)
        queue.request(3)
        #expect(queue.outstanding == nil, "adding to unlimited stays unlimited")

        var saturating = DemandQueue<Int>()
        saturating.request(.max - 1)
        saturating.request(10)
        #expect(saturating.outstanding == nil)
    }

    @Test("After cancellation nothing is delivered, queued or demanded")
    func cancellation() {
        var queue = DemandQueue<Int>()
        queue.request(10)
        queue.enqueue(1)
        queue.cancel()
        #expect(queue.next() == nil)
        queue.enqueue(2)
        queue.request(nil)
        #expect(queue.next() == nil)
        #expect(queue.buffer.isEmpty)
        #expect(queue.isCancelled)
    }

    @Test("Negative demand is ignored")
    func negative() {
        var queue = DemandQueue<Int>()
        queue.request(2)
        queue.request(-5)
        #expect(queue.outstanding == 2)
    }
}
