/// The platform's provider picker of cookbook D: its dialog, and what each answer does.
extension EntitlementMachine {
    /// The N004 message.
    static let unsupportedProviderMessage =
        "The provider chosen in the platform picker is not supported through it; choose it here."

    /// The platform picker of `flow`, as the delegate saw it: the MVPDs the platform can sign in with.
    func platformDialog(_ flow: LoginFlow, _ configuration: RequestorConfiguration) -> TvProviderDialog {
        TvProviderDialog(id: "tv-provider-\(flow.id.rawValue)", mvpds: configuration.mvpds.filter(\.enablePlatformServices))
    }

    /// The platform's picker answered: read the partner profile for its assertion, fall back to the classic dialog
    /// (N003 / N004), or end the login (N005).
    mutating func platformPickerAnswered(_ flowID: FlowID, _ answer: PlatformPickerAnswer) -> [Action] {
        guard case .configured(let configuration) = configuration, case .platformPicking(var flow) = authentication,
            flow.id == flowID
        else { return [.log(.latePickerAnswerIgnored(flowID))] }
        let dialog = platformDialog(flow, configuration)
        func fallBack(_ notice: Notice, _ message: String, _ condition: TransitionGuard) -> [Action] {
            moveAuthentication(to: .selectingProvider(flow), condition, .dismissTvProviderDialog, .status, .displayProviderDialog)
            return [
                .emit(.dismissTvProviderDialog(dialog), answering: []),
                .emit(.status(notice.report(message)), answering: []),
                .emit(.displayProviderDialog(configuration.mvpds), answering: []),
            ]
        }
        switch answer {
        case .signedIn(let assertion):
            guard let mvpd = configuration.mvpd(assertion.mvpdID), mvpd.enablePlatformServices else {
                return fallBack(.platformUnsupportedProvider, Self.unsupportedProviderMessage, .unsupportedProvider)
            }
            flow.mvpd = mvpd
            let operation = nextOperation()
            moveAuthentication(
                to: .readingProfile(flow, operation: operation, attempt: 1), .platformSignedIn, .readProfile)
            return [
                .callBackend(
                    operation, .partnerProfile(context(configuration), partner: Self.platformPartner, assertion: assertion))
            ]
        case .otherProviders:
            return fallBack(.platformOtherProvider, "The user chose another TV provider in the platform picker.", .otherProviders)
        case .unsupportedProvider:
            return fallBack(.platformUnsupportedProvider, Self.unsupportedProviderMessage, .unsupportedProvider)
        case .cancelled:
            let notice = Notice.platformPickerCancelled.report("The user cancelled the platform picker.")
            return endLogin(
                flow, code: ErrorCode.providerNotSelected, reason: "The user cancelled the platform picker.", notice: notice,
                condition: .cancelled)
        }
    }
}
