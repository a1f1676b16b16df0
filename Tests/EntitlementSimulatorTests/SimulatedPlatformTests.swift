import EntitlementEngine
import EntitlementSimulator
import EntitlementTestSupport
import Testing

/// The simulated platform's picker follows its script in the order the engine shows pickers (as a session
/// sees them), else in the order they reach the user.
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

    /// A picker the engine was seen showing takes the choice scripted when it was shown, also when the engine
    /// dismisses it before its task runs: the next picker gets the next choice. (Taken by the next picker,
    /// a `.wait` meant for a picker a host gave up held the next one open, and a settle skipped its answer.)
    @Test func aPickerShownThenDismissedBeforeItsTaskRanTakesItsOwnChoice() async {
        let platform = SimulatedPlatform(simulator: Simulator(clock: ManualClock()), deviceID: "device-1")
        let next = TvProviderDialog(id: "tv-provider-2", mvpds: Self.dialog.mvpds)
        platform.script(.wait)
        platform.engineShowed(Self.dialog)
        #expect(platform.holdsPicker, "the picker shown is held open before its task asks")
        platform.script(.otherProviders)
        let (gate, open) = AsyncStream<Void>.makeStream()
        let dismissed = Task {
            for await _ in gate { break }  // runs only once the task is already cancelled
            return await platform.pickProvider(Self.dialog, requestorID: "sim-requestor", request: Self.request)
        }
        dismissed.cancel()
        platform.engineShowed(next)
        #expect(!platform.holdsPicker, "the next picker shown is answered, not held")
        open.yield()
        open.finish()
        await expectEqual(dismissed.value, .cancelled)
        await expectEqual(platform.pickProvider(next, requestorID: "sim-requestor", request: Self.request), .otherProviders)
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
