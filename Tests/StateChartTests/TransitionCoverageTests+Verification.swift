import EntitlementCore
import EntitlementV2

extension TransitionCoverageTests {
    /// The chain's providers verifying at `setRequestor` while other things happen: a silent sign-in ending
    /// first (each way it can end), calls arriving (one past a full queue), a new `setRequestor`, and a
    /// provider verified on an interval answering or failing. The scripts hold provider answers only
    /// around calls; these orders need the machine driven by hand.
    static func verificationAtSetRequestorRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let acme = MVPD(id: "m", displayName: "M", enablePlatformServices: true)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [acme])
        let shared = AuthenticationToken(mvpdID: "m", requestorID: "other", userID: "u", expires: start.adding(.seconds(86_400)))
        var settings = EngineSettings()
        settings.providers = [ProviderLink(id: "live", verificationInterval: .seconds(60))]
        settings.queueLimit = 1
        var rows: Set<TransitionRow> = []
        func step(_ machine: inout EntitlementMachine, _ input: Input) -> [Action] {
            let effects = machine.handle(input, at: start).effects
            rows.formUnion(machine.lastTransitions)
            return effects
        }
        func request(_ effects: [Action]) -> OperationID {
            for effect in effects {
                switch effect {
                case .callBackend(let operation, _), .askProvider(let operation, _, _, _), .checkPlatformSignIn(let operation, _, _, _): return operation
                default: continue
                }
            }
            return OperationID(0, owner: nil)
        }
        func verifying(platform: Bool = false) -> (machine: EntitlementMachine, verification: OperationID, signIn: OperationID) {
            var machineSettings = settings
            machineSettings.platformSSO = platform
            var machine = EntitlementMachine(settings: machineSettings, deviceID: "d")
            machine.recordsTransitions = true
            _ = step(&machine, .callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])))
            let loaded = step(&machine, .configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty, others: platform ? [] : [shared]))
            let verification = request(loaded.filter { if case .askProvider = $0 { true } else { false } })
            return (machine, verification, request(loaded.filter { if case .askProvider = $0 { false } else { true } }))
        }
        // The device's profiles answer, or their read fails, before the provider does.
        var (answered, verification, signIn) = verifying()
        _ = step(&answered, .backendAnswered(signIn, .profiles([:])))
        _ = step(&answered, .providerAnswered(verification, .verified(.success(ProviderView(resources: ["a"])))))
        (answered, verification, signIn) = verifying()
        _ = step(&answered, .backendFailed(signIn, .timeout))
        _ = step(&answered, .providerAnswered(verification, .verified(.failure(.networkFailure))))
        // The platform is not signed in, before the provider answers.
        var (platform, platformVerification, partner) = verifying(platform: true)
        let partnerRequest = V2PartnerRequest(type: "saml", request: "PHJlcS8+", attributeNames: ["userID"])
        let check = step(
            &platform,
            .backendAnswered(
                partner,
                .session(
                    V2Session(actionName: .partnerProfile, actionType: .direct, reasonType: .none, sessionID: "s", serviceProvider: "r",
                        authenticationRequest: partnerRequest))))
        _ = step(&platform, .platformSignInChecked(request(check), nil))
        // Calls wait for `setRequestor`'s answer (one past the queue's limit is refused), then a new one ends the verification.
        _ = step(&platform, .callReceived(CallID(2), .checkAuthentication))
        _ = step(&platform, .callReceived(CallID(3), .checkAuthentication))
        _ = step(&platform, .callReceived(CallID(4), .setRequestor(requestorID: "r", serviceProviders: [])))
        _ = platformVerification
        return rows
    }
}
