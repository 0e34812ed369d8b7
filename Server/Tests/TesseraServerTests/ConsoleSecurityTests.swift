import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import TesseraTokens
import Testing

@testable import TesseraServer

/// Issue 25, deliver 2 (the security review): exact loopback, server-issued form tokens.
@Suite("Console: loopback cookies and server-issued form tokens")
struct ConsoleSecurityTests {
    @Test("Only loopback addresses (and localhost) are plain-HTTP loopback; names that start with 127. are not")
    func loopback() {
        for authority in [
            "127.0.0.1", "127.0.0.1:8080", "127.1.2.3:1", "127.255.255.255", "[::1]", "[::1]:8080",
            "[0:0:0:0:0:0:0:1]", "[::0:1]:9", "localhost", "LOCALHOST:8080",
        ] {
            #expect(ConsoleHTTP.isLoopback(authority: authority), "\(authority)")
        }
        for authority in [
            "127.0.0.1.example.com", "127.evil.example", "127.0.0.1.nip.io:8080", "127.0.0", "127.0.0.256",
            "127.0.0.1:80x", "128.0.0.1", "[::2]", "[::1]x", "[::1]:", "[1::1]", "localhost.example.com",
            "0177.0.0.1", "", "[::ffff:127.0.0.1]",
        ] {
            #expect(!ConsoleHTTP.isLoopback(authority: authority), "\(authority)")
        }
    }

    @Test("Form tokens: the server's own verify, under the current or a previous master key; made-up ones do not")
    func formTokens() throws {
        let old = MasterKey.generate()
        let keys = MasterKeyring(current: MasterKey.generate(), previous: [old])
        let token = ConsoleFormToken.issue(keys)
        #expect(ConsoleFormToken.isIssued(token, keys))
        #expect(ConsoleFormToken.isIssued(ConsoleFormToken.issue(MasterKeyring(current: old)), keys))
        #expect(!ConsoleFormToken.isIssued(ConsoleFormToken.issue(MasterKeyring(current: .generate())), keys))
        #expect(!ConsoleFormToken.isIssued(OpaqueToken.generate(prefix: ""), keys))
        #expect(!ConsoleFormToken.isIssued(token + "x", keys))
        #expect(!ConsoleFormToken.isIssued("", keys))
        #expect(!ConsoleFormToken.isIssued(".", keys))
    }

    @Test("Sign-in refuses a made-up form token even when the cookie carries the same value")
    func forgedFormToken() async throws {
        try await withConsole(role: .viewer) { environment, api, _, account in
            let forged = OpaqueToken.generate(prefix: "")
            let body =
                "csrf=\(forged)&email=\(ConsoleURL.encode(account.email))&password=\(ConsoleURL.encode("correct horse battery"))"
            let page = try await api.client.execute(
                uri: "/console/login", method: .post,
                headers: [
                    .cookie: "\(ConsoleHTTP.formCookie)=\(forged)", .contentType: "application/x-www-form-urlencoded",
                ], body: ByteBuffer(string: body)
            ) { response in
                ConsoleBrowser.Page(
                    status: response.status, headers: response.headers, html: String(buffer: response.body))
            }
            #expect(page.status == .forbidden)
            #expect(page.errorCode == "csrf_token_invalid")
            #expect(
                !page.headers[values: .setCookie].contains {
                    $0.hasPrefix(ConsoleHTTP.sessionCookie + "=") && !$0.hasPrefix(ConsoleHTTP.sessionCookie + "=;")
                })
        }
    }

    @Test("Owners unlock an operator on the Operators page; it is audited with the owner's email")
    func unlockButton() async throws {
        try await withConsole(role: .viewer) { environment, api, _, victim in
            let (owner, ownerAccount) = try await signedInBrowser(environment, api, role: .owner)
            let guesser = ConsoleBrowser(api)
            try await guesser.get("/console/login")
            for _ in 0..<OperatorAccounts.failuresPerEmail {
                try await guesser.post("/console/login", [("email", victim.email), ("password", "wrong wrong wrong")])
            }
            let locked = try await guesser.post(
                "/console/login", [("email", victim.email), ("password", "correct horse battery")])
            #expect(locked.status == .tooManyRequests)
            #expect(locked.html.contains("locked until"))
            let page = try await owner.get("/console/operators")
            #expect(page.html.contains("locked until"))
            let unlocked = try await owner.post("/console/operator-unlock", [("email", victim.email)])
            #expect(unlocked.location == "operators?notice=unlocked")
            let after = try await owner.get("/console/operators")
            #expect(!after.html.contains("locked until"))
            try await guesser.get("/console/login")
            let signIn = try await guesser.post(
                "/console/login", [("email", victim.email), ("password", "correct horse battery")])
            #expect(signIn.status == .seeOther)
            let audit = try await environment.store.operatorAudit(before: nil, limit: 50)
            #expect(audit.contains { $0.kind == .unlocked && $0.actorEmail == ownerAccount.email })
            #expect(audit.contains { $0.kind == .signedIn && $0.operatorEmail == victim.email })
        }
    }
}
