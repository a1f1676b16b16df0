import EntitlementCore
import Foundation
import EntitlementTestSupport
import Testing

/// The logout mark a logout leaves with a provider chain (``StoredTokens/loggedOut``): written only with
/// a chain, later than the mark it replaces, read back as written, and left out of the first save after
/// its lifetime — so a device's record does not keep it for good.
@Suite("Logout marks")
struct LogoutMarkTests {
    static let start = Timestamp(milliseconds: 10_000)
    static let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])

    static func configured(chain: Bool) -> EntitlementMachine {
        var settings = EngineSettings()
        if chain { settings.providers = [ProviderLink(id: "live")] }
        var machine = EntitlementMachine(settings: settings, deviceID: "d")
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
        let loaded = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty), at: start)
        // The chain's provider is asked what the user may access before `setRequestor` is answered.
        for case .askProvider(let operation, _, .verify, _) in loaded.effects {
            _ = machine.handle(.providerAnswered(operation, .verified(.success(.nothing))), at: start)
        }
        return machine
    }

    @Test func aMarkReadsBackAsWrittenAndOtherTokensAreWrittenAsBefore() throws {
        let marked = StoredTokens(loggedOut: Self.start)
        try expectEqual(JSONDecoder().decode(StoredTokens.self, from: JSONEncoder().encode(marked)), marked)
        #expect(!marked.holdsNothing, "a mark alone is something the store keeps")
        let plain = String(decoding: try JSONEncoder().encode(StoredTokens(selectedProvider: "m")), as: UTF8.self)
        #expect(!plain.contains("loggedOut"))
    }

    @Test func aLogoutWithAChainSavesAMarkEachLaterThanTheLast() {
        var machine = Self.configured(chain: true)
        let first = machine.handle(.callReceived(CallID(2), .logout), at: Self.start)
        expectEqual(first.save?.tokens, StoredTokens(deviceID: "d", loggedOut: Self.start))
        let second = machine.handle(.callReceived(CallID(3), .logout), at: Self.start)
        expectEqual(second.save?.tokens.loggedOut, Self.start.adding(.milliseconds(1)), "a second logout in the same millisecond is told apart")
        #expect(machine.holdsNothingButALogoutMark, "a host may forget the session: the store keeps the mark")
    }

    @Test func aLogoutWithoutAChainLeavesTheStoreEmpty() {
        var machine = Self.configured(chain: false)
        let step = machine.handle(.callReceived(CallID(2), .logout), at: Self.start)
        #expect(step.save == nil)
        expectEqual(machine.storedTokens, .empty)
    }

    @Test func theFirstSaveAfterTheMarksLifetimeLeavesItOut() {
        var machine = Self.configured(chain: true)
        _ = machine.handle(.callReceived(CallID(2), .logout), at: Self.start)
        let lifetime = EngineSettings().requestTimeout * 2
        // A save within the lifetime keeps the mark; one after it leaves the mark out.
        let within = machine.handle(.callReceived(CallID(3), .setSelectedProvider("m")), at: Self.start.adding(lifetime - .seconds(1)))
        expectEqual(within.save?.tokens.loggedOut, Self.start)
        let after = machine.handle(.callReceived(CallID(4), .setSelectedProvider(nil)), at: Self.start.adding(lifetime))
        expectEqual(after.save?.tokens, .empty, "\(String(describing: after.save?.tokens))")
    }
}

/// The model check knows machines by their fingerprint: every field a machine keeps between inputs is
/// hashed into it, or named as fixed at creation.
@Suite("Machine fingerprint")
struct MachineFingerprintTests {
    @Test func everyHeldFieldIsFingerprintedOrNamedAsFixed() {
        let fields = EntitlementMachine(deviceID: "d").heldFieldNames
        let named = EntitlementMachine.fingerprintedHeldFields.union(EntitlementMachine.heldFieldsNotFingerprinted)
        expectEqual(fields, named, "not named: \(fields.subtracting(named).sorted()); no longer fields: \(named.subtracting(fields).sorted())")
    }
}
