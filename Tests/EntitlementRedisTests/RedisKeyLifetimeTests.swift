@testable import EntitlementCore
@testable import EntitlementEngine
@testable import EntitlementRedis
import EntitlementTestSupport
import Testing

/// How long a tokens key lives: with what it holds, and no shorter than a provider account needs.
@Suite("Redis key lifetimes")
struct RedisKeyLifetimeTests {
    let now = Timestamp(milliseconds: 1_000_000)

    func store() -> RedisTokenStorage {
        let now = self.now
        return RedisTokenStorage(client: RedisClient(), rememberFor: .seconds(86_400), now: { now })
    }

    @Test func aKeyLivesAsLongAsWhatItHoldsAndAProviderAccountForTheRememberedTime() {
        let login = AuthenticationToken(mvpdID: "m", requestorID: "r", userID: "u", expires: now.adding(.seconds(3_600)))
        expectEqual(store().lifetime(of: StoredTokens(authentication: login)), 3_600_000)
        expectEqual(store().lifetime(of: StoredTokens(selectedProvider: "m")), 86_400_000)
        let account = ["magazine": ProviderAccount(userToken: "t", kept: ["issue-1": "Basic x"])]
        #expect(store().lifetime(of: StoredTokens(authentication: login, providerAccounts: account)) == 86_400_000,
            "credentials kept for good do not expire with the login")
    }
}
