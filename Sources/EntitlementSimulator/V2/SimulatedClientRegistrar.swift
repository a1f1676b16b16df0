import EntitlementEngine
import EntitlementSupport
import Synchronization

/// The simulator's dynamic client registration (Adobe's *Retrieve client credentials* and
/// *Retrieve access token*): software statements it accepts,
/// client credentials it issued (they never expire), access tokens with their expiry, and the
/// bearer check every `/api/v2` request goes through.
package final class SimulatedClientRegistrar: Sendable {
    /// The software statement a test world registers with.
    package static let softwareStatement = "sim.software-statement.v2"
    /// How long an access token lives (the reference's sample: 6 hours).
    package let accessTokenLifetime: Duration

    private struct State {
        var credentials: [String: String] = [:]  // client id → secret
        var tokens: [String: Timestamp] = [:]  // access token → expiry
        var revokedStatements: Set<String> = []
        var refusesEveryToken = false
    }

    private let state = Mutex(State())
    private let clock: any EngineClock
    private let random: any RandomSource

    /// A registrar on `clock`, minting ids and secrets from `random`.
    package init(clock: any EngineClock, random: any RandomSource, accessTokenLifetime: Duration = .seconds(21_600)) {
        self.clock = clock
        self.random = random
        self.accessTokenLifetime = accessTokenLifetime
    }

    /// Forgets every access token issued so far (as the service does when client credentials
    /// change): the next request with one is refused with 401.
    package func invalidateAccessTokens() { state.withLock { $0.tokens.removeAll() } }

    /// While on, every access token is refused with 401, new ones too (a service that keeps refusing).
    package func refusesEveryAccessToken(_ refuses: Bool) { state.withLock { $0.refusesEveryToken = refuses } }

    /// Deletes every client registered so far, as a service does whose client was deleted: their
    /// access tokens die with them, and asking for a token with their credentials is `invalid_client`.
    package func deleteClients() {
        state.withLock { state in
            state.credentials.removeAll()
            state.tokens.removeAll()
        }
    }

    /// How many clients were registered and not deleted.
    package var clientCount: Int { state.withLock { $0.credentials.count } }

    /// Revokes a software statement: registering with it fails from now on.
    package func revoke(softwareStatement: String) { state.withLock { _ = $0.revokedStatements.insert(softwareStatement) } }

    /// Answers `registerClient` and `accessToken`; nil for any other request.
    package func answer(_ request: V2Request) -> V2Response? {
        switch request {
        case .registerClient(let statement, let redirectURI):
            let revoked = state.withLock { $0.revokedStatements.contains(statement) }
            guard statement == Self.softwareStatement, !revoked else { return .oauthError("invalid_software_statement") }
            let credentials = V2ClientCredentials(
                clientID: Base64URL.encode(random.bytes(9)), clientSecret: "secret." + Base64URL.encode(random.bytes(24)),
                issuedAtSeconds: clock.now().milliseconds / 1000, redirectURIs: redirectURI.map { [$0] } ?? [])
            state.withLock { $0.credentials[credentials.clientID] = credentials.clientSecret }
            return V2Response(status: 201, body: credentials.json)
        case .accessToken(let clientID, let clientSecret):
            let known = state.withLock { $0.credentials[clientID] }
            guard let known, ConstantTime.equals(known, clientSecret) else { return .oauthError("invalid_client") }
            let now = clock.now()
            let token = V2AccessToken(
                id: Base64URL.encode(random.bytes(6)), accessToken: "access." + Base64URL.encode(random.bytes(24)), createdAt: now,
                expiresInSeconds: Int64(accessTokenLifetime.components.seconds))
            state.withLock { $0.tokens[token.accessToken] = token.expires }
            return V2Response(status: 201, body: token.json)
        default:
            return nil
        }
    }

    /// The 401 for a request whose bearer token is missing, unknown or expired; nil when it may go on.
    package func refusal(bearer: String?) -> V2Response? {
        let (expires, refusesAll) = state.withLock { state in (bearer.flatMap { state.tokens[$0] }, state.refusesEveryToken) }
        guard let expires, clock.now() < expires, !refusesAll else {
            return .error(
                V2EnhancedError(
                    status: 401, code: "invalid_access_token_client_application",
                    message: "The access token is missing, unknown or expired.", action: .applicationRegistration))
        }
        return nil
    }
}
