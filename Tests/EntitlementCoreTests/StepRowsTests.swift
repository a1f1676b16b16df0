import EntitlementEngine
import EntitlementTestSupport
import Testing

/// `MachineStep.effectsNotInRows(_:)` names what a step did that its rows do not: the check every
/// scenario's replay runs (`TraceReplayer(checkingRows:)`) sees a row that forgot an action.
@Suite("A step's effects against its rows")
struct StepRowsTests {
    static let login = TransitionRow(
        region: .authentication, from: "creatingSession", input: "backendAnswered", condition: "loginNeeded", to: "awaitingRedirect",
        actions: ["startTimer", "navigateToUrl"])

    @Test func aRowThatForgotAnEffectIsNamed() {
        let step = MachineStep(
            save: nil,
            effects: [
                .startTimer(.redirectDeadline(FlowID(1)), at: Timestamp(milliseconds: 1_000)),
                .emit(.navigateToUrl("https://sp.example/page"), answering: []),
                .emit(.sendTrackingData(.mvpdSelection, []), answering: []),
                .log(.joined(CallID(1), flow: "the running login")),
            ],
            secretsToDraw: [], resubmitted: [])
        #expect(step.effectsNotInRows([Self.login]).isEmpty, "tracking data and logs are not drawn")
        var forgetful = Self.login
        forgetful.actions = ["startTimer"]
        expectEqual(step.effectsNotInRows([forgetful]), ["navigateToUrl"])
        expectEqual(step.effectsNotInRows([]), ["startTimer", "navigateToUrl"])
        let drawing = MachineStep(save: nil, effects: [], secretsToDraw: [FlowID(2)], resubmitted: [])
        expectEqual(drawing.effectsNotInRows([]), ["drawSecrets"])
    }
}
