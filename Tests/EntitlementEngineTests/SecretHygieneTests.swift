import EntitlementEngine
import EntitlementSimulator
import Synchronization
import Testing

@Suite("Secrets never reach log lines in clear", .checksExactlyOnce)
struct SecretHygieneTests {
    @Test func noMintedSecretStateOrVerifierAppearsInAnyLogLine() async throws {
        let lines = Mutex<[String]>([])
        let session = SimulatedSession(echo: { event in lines.withLock { $0.append(event.redactedDescription) } })
        await session.signIn()
        await session.enabler.getAuthorization("news-channel")
        await session.enabler.checkPreauthorizedResources(["news-channel"])
        _ = await session.collect()
        let logoutURL = try #require(await {
            await session.enabler.logout()
            return session.ledger.take().lastNavigation
        }())
        await session.enabler.handleExternalURL(try #require(await session.userAgent.follow(logoutURL).appURL))
        _ = await session.collect()

        // Everything secret that existed in this run: what the simulator minted, plus the flows' states and verifier.
        var secrets = await session.simulator.issuedSecrets
        let navigations = session.ledger.callbacks.compactMap { if case .navigateToUrl(let url) = $0 { url } else { nil } }
        secrets += navigations.compactMap { queryValue("state", in: $0) }
        secrets.append(PKCE.verifier(from: SeededRandomSource(seed: 1 &* 2 &+ 2).bytes(32)))
        #expect(secrets.count > 8)
        let log = lines.withLock { $0 }.joined(separator: "\n")
        #expect(log.contains("handleExternalURL"), "the log does record the calls")
        for secret in secrets {
            #expect(!log.contains(secret), "a secret reached the log: \(Redactor.shorten(secret))")
        }
        await session.expectClean()
    }
}
