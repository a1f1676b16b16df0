import EntitlementEngine
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSupport
import EntitlementTestSupport
import Testing

@testable import EntitlementSimulatorServer

/// The simulator server's access log shortens the secrets the simulator minted by value, whatever names
/// them: the probe of 0.9.2 found 5 of 11 forms shown in clear (`?secret=`, `?bearer=`, `?pass=`,
/// `/sessions/x/CODE`, `next=page.…`), which name-based redaction cannot know.
@Suite("Access log: minted secrets by value")
struct AccessLogSecretsTests {
    static let code = "K7QH3MZP"
    static let page = "page.bW9yZS10aGFuLWEtc2VjcmV0LXZhbHVl"
    static let token = "at_c29tZS1hY2Nlc3MtdG9rZW4tdmFsdWU"

    static func book() -> MintedSecrets {
        let book = MintedSecrets()
        for secret in [code, page, token, "Basic dXNlcjpwYXNzd29yZA"] { book.insert(secret) }
        return book
    }

    @Test(arguments: [
        "/api/v2/sp?secret=\(token)", "/api/v2/sp?bearer=\(token)", "/api/v2/sp?pass=\(token)",
        "/api/v2/sp/sessions/x/\(code)", "/web/login?next=\(page)", "/api/v2/sp?code=\(code)", "/api/v2/sp?state=\(page)",
        "/\(token)/profile", "/x?q=\(PercentEncoding.encode(page))", "/x?q=\(PercentEncoding.encode(PercentEncoding.encode(token)))",
        "/x?auth=dXNlcjpwYXNzd29yZA", "/x?t=%4B7QH3MZP",
    ])
    func aMintedSecretIsNeverShownInClear(target: String) {
        let line = SimulatorServer.accessLogLine(
            HTTPAccessLogEntry(peer: "127.0.0.1", method: "GET", target: target, status: 200, bytes: 0, duration: .milliseconds(1)),
            minted: Self.book())
        for secret in [Self.code, Self.page, Self.token, "dXNlcjpwYXNzd29yZA"] {
            #expect(!line.contains(secret), "\(secret) in \(line)")
            #expect(!line.contains(PercentEncoding.encode(secret)) || PercentEncoding.encode(secret) == secret, "\(line)")
        }
        #expect(line.hasPrefix("127.0.0.1 \"GET "), "\(line)")
    }

    /// A target with no minted secret is shown as it is; what was not minted is not hidden.
    @Test func aTargetWithoutOneIsShownAsItIs() {
        let book = Self.book()
        expectEqual(book.redacting("/api/v2/sp/sessions?mvpd=acme-cable"), "/api/v2/sp/sessions?mvpd=acme-cable")
        expectEqual(book.redacting("/x?q=\(Self.token)&r=plain-value"), "/x?q=at_c…&r=plain-value")
    }

    /// The book keeps the newest secrets up to its limit: the oldest go, and a fresh book holds none.
    @Test func theBookIsBounded() {
        let book = MintedSecrets()
        for index in 0..<(MintedSecrets.limit + 10) { book.insert("secret-\(index)-value") }
        expectEqual(book.count, MintedSecrets.limit)
        expectEqual(book.redacting("/x?v=secret-0-value"), "/x?v=secret-0-value", "the oldest went")
        #expect(book.redacting("/x?v=secret-\(MintedSecrets.limit + 9)-value") != "/x?v=secret-\(MintedSecrets.limit + 9)-value")
        expectEqual(MintedSecrets().redacting("/x?v=secret-1-value"), "/x?v=secret-1-value")
    }
}
