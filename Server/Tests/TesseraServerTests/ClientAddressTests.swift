import HTTPTypes
import NIOCore
import Testing

@testable import TesseraServer

@Suite("Client address and blocks")
struct ClientAddressTests {
    private let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    private let forwarded = HTTPField.Name("Forwarded")!

    private func key(_ values: [String], header: HTTPField.Name? = nil, remote: String? = "192.0.2.200") -> String {
        var headers = HTTPFields()
        for value in values { headers.append(HTTPField(name: header ?? forwardedFor, value: value)) }
        return ClientAddress.key(
            headers: headers, remote: remote.flatMap { try? SocketAddress(ipAddress: $0, port: 443) },
            trustedHeader: header ?? forwardedFor)
    }

    @Test("The right-most entry of the trusted header, across repeated fields")
    func rightmost() {
        #expect(key(["203.0.113.1"]) == "203.0.113.1")
        #expect(key(["10.1.1.1, 203.0.113.1"]) == "203.0.113.1")
        #expect(key(["10.1.1.1", "10.2.2.2,203.0.113.7"]) == "203.0.113.7")
        #expect(key(["203.0.113.1:8443"]) == "203.0.113.1")
        #expect(key(["[2001:db8::1]:8443"]) == "2001:db8:0:0::/64")
        #expect(key(["::ffff:203.0.113.5"]) == "203.0.113.5")
        #expect(
            key(["for=192.0.2.43, for=\"[2001:db8:cafe::17]:4711\";proto=https"], header: forwarded)
                == "2001:db8:cafe:0::/64")
        #expect(key(["for=198.51.100.17;by=203.0.113.60"], header: forwarded) == "198.51.100.17")
    }

    @Test("A missing or unusable header falls back to the socket's peer")
    func fallback() {
        #expect(key([]) == "192.0.2.200")
        #expect(key(["not-an-address"]) == "192.0.2.200")
        #expect(key(["203.0.113.1, "]) == "192.0.2.200")
        #expect(key(["unknown"], remote: nil) == "unknown")
        #expect(key([String(repeating: "1", count: 100)]) == "192.0.2.200")
        let headers: HTTPFields = [forwardedFor: "203.0.113.1"]
        let remote = try? SocketAddress(ipAddress: "192.0.2.200", port: 1)
        #expect(ClientAddress.key(headers: headers, remote: remote, trustedHeader: nil) == "192.0.2.200")
        #expect(ClientAddress.key(headers: headers, remote: nil, trustedHeader: nil) == "unknown")
    }

    @Test("IPv6 peers count per /64")
    func ipv6() throws {
        let one = try SocketAddress(ipAddress: "2001:db8:aa:bb:1:2:3:4", port: 1)
        let two = try SocketAddress(ipAddress: "2001:db8:aa:bb:ffff::", port: 2)
        #expect(ClientAddress.normalized(one) == "2001:db8:aa:bb::/64")
        #expect(ClientAddress.normalized(one) == ClientAddress.normalized(two))
    }

    @Test("Windows are fixed minutes; Retry-After is the rest of the window, at least 1")
    func windows() {
        let window = RateLimitWindow(containing: 1_795_000_000)
        #expect(window.start == 1_794_999_960)
        #expect(window.end == 1_795_000_020)
        #expect(window.retryAfter(now: 1_795_000_000) == 20)
        #expect(window.retryAfter(now: 1_795_000_020) == 1)
        #expect(RateLimitWindow(containing: 1_794_999_960).start == 1_794_999_960)
    }

    @Test("Blocks end with their window, yield to a raised limit, and stay within capacity")
    func blocks() {
        let blocks = RateLimitBlocks(capacity: 2)
        let a = RateLimitKey(projectID: "p", bucket: .anonymousStart, key: "a")
        let b = RateLimitKey(projectID: "p", bucket: .anonymousStart, key: "b")
        let c = RateLimitKey(projectID: "p", bucket: .anonymousStart, key: "c")
        #expect(blocks.isEmpty)
        blocks.block(a, until: 160, limit: 5, now: 100)
        #expect(!blocks.isEmpty)
        #expect(blocks.retryAfter(a, limit: 5, now: 100) == 60)
        #expect(blocks.retryAfter(a, limit: 4, now: 100) == 60)
        #expect(blocks.retryAfter(a, limit: 6, now: 100) == nil)
        #expect(blocks.retryAfter(a, limit: nil, now: 100) == nil)
        #expect(blocks.retryAfter(b, limit: 5, now: 100) == nil)
        blocks.block(b, until: 170, limit: 5, now: 100)
        blocks.block(c, until: 180, limit: 5, now: 100)
        #expect(blocks.retryAfter(a, limit: 5, now: 100) == nil)
        #expect(blocks.retryAfter(c, limit: 5, now: 100) == 80)
        #expect(blocks.retryAfter(b, limit: 5, now: 175) == nil)
        #expect(blocks.retryAfter(c, limit: 5, now: 180) == nil)
        #expect(blocks.isEmpty)
    }
}
