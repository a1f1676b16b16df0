import EntitlementEngine
import EntitlementSimulator
import EntitlementTestSupport
import Testing

/// The simulated platform's picker follows its script in the order pickers reach the user.
@Suite("Simulated platform picker")
struct SimulatedPlatformTests {
    static let dialog = TvProviderDialog(
        id: "tv-provider-1", mvpds: [MVPD(id: "acme-cable", displayName: "Acme Cable", logoURL: "", enablePlatformServices: true)])
    static let request = V2PartnerRequest(type: "saml", request: "PHNhbWxwOkF1dGhuUmVxdWVzdC8+", attributeNames: [])

    /// A picker the engine dismissed before its task ran never reached the user: it must not take the
    /// choice scripted for the next one (under a busy test run it once did, and the next picker was
    /// cancelled instead of held open).
    @Test func aPickerDismissedBeforeItsTaskRanLeavesTheScriptAlone() async {
        let platform = SimulatedPlatform(simulator: Simulator(clock: ManualClock()), deviceID: "device-1")
        platform.script(.choose(mvpdID: "acme-cable"))
        let (gate, open) = AsyncStream<Void>.makeStream()
        let dismissed = Task {
            for await _ in gate { break }  // runs only once the task is already cancelled
            return await platform.pickProvider(Self.dialog, requestorID: "sim-requestor", request: Self.request)
        }
        dismissed.cancel()
        open.yield()
        open.finish()
        await expectEqual(dismissed.value, .cancelled)
        await expectEqual(platform.pickProvider(Self.dialog, requestorID: "sim-requestor", request: Self.request), .unsupportedProvider("acme-cable"))
        expectEqual(platform.presentedDialogs.count, 2)
    }

    /// A held picker the engine dismissed late, after the next picker was held open, leaves that next one
    /// held: its cancellation once ended the next picker's hold, and a settle then waited for an answer
    /// the script was never told to give (the scenario suite hung on a busy machine).
    @Test func aLateDismissalLeavesTheNextHeldPickerHeld() async {
        let platform = SimulatedPlatform(simulator: Simulator(clock: ManualClock()), deviceID: "device-1")
        platform.script(.wait, .wait)
        let first = Task { await platform.pickProvider(Self.dialog, requestorID: "sim-requestor", request: Self.request) }
        while platform.presentedDialogs.count < 1 { await Task.yield() }
        let second = Task { await platform.pickProvider(Self.dialog, requestorID: "sim-requestor", request: Self.request) }
        while platform.presentedDialogs.count < 2 { await Task.yield() }
        first.cancel()
        // Failing here leaves both tasks as they are: one of them would wait for an answer nobody gives.
        guard platform.holdsPicker else {
            Issue.record("the first picker's dismissal ended the second one's hold")
            return
        }
        #expect(platform.answerOpenPicker(.otherProviders))
        await expectEqual(second.value, .otherProviders)
        await expectEqual(first.value, .cancelled)
    }
}
