/// The platform's provider picker of cookbook D: the partner's request it answers, its dialog, and
/// what each answer does.
extension EntitlementMachine {
    /// The partner name of the platform's single sign-on (`sessions/sso/{partner}`, `profiles/sso/{partner}`).
    static let platformPartner = "Apple"

    /// `POST sessions/sso/{partner}`: the request the platform's framework answers (asked before the
    /// picker, and before the silent check at `setRequestor`).
    func partnerSessionRequest(_ configuration: RequestorConfiguration) -> BackendRequest {
        .partnerSession(
            context(configuration), partner: Self.platformPartner, domainName: settings.domainName, redirectURL: settings.redirectURL)
    }

    /// The partner's request in a partner session's answer, or why there is none: the service fell back
    /// (`authenticate` or `resume` with a `…_fallback` reason, or `authorize`), failed, or answered
    /// something else.
    static func partnerRequest(_ result: Result<BackendResponse, BackendError>) -> Result<V2PartnerRequest, PartnerFallback> {
        switch result {
        case .success(.session(let session)):
            guard session.actionName == .partnerProfile, let request = session.authenticationRequest else {
                return .failure(PartnerFallback(
                    condition: .partnerFallback, why: "\(session.actionName.rawValue), \(session.reasonType.rawValue)"))
            }
            return .success(request)
        case .success:
            return .failure(PartnerFallback(condition: .malformedAnswer, why: "malformed backend response: not a session"))
        case .failure(let error):
            return .failure(PartnerFallback(condition: .failed, why: error.summary))
        }
    }

    /// Why a partner session gave no request: the row's condition and a line for the log.
    struct PartnerFallback: Error {
        var condition: TransitionGuard
        var why: String
    }

    /// The partner session of a login answered: the platform's picker with its request, or — the
    /// service fell back or failed — the provider dialog (the classic login; its session answers
    /// `authorize` when the device needs none).
    mutating func partnerSessionAnswered(
        _ flow: LoginFlow, _ result: Result<BackendResponse, BackendError>, _ configuration: RequestorConfiguration
    ) -> [Action] {
        switch Self.partnerRequest(result) {
        case .success(let request):
            moveAuthentication(to: .login(flow, .platformPicking), .partnerRequest, .presentTvProviderDialog)
            let dialog = platformDialog(flow, configuration)
            return [
                .emit(.presentTvProviderDialog(dialog), answering: []),
                .presentPlatformPicker(flow.id, dialog, requestorID: configuration.requestorID, request: request),
            ]
        case .failure(let fallback):
            moveAuthentication(to: .login(flow, .selectingProvider), fallback.condition, .displayProviderDialog)
            return [.log(.partnerSessionFellBack(fallback.why)), .emit(.displayProviderDialog(configuration.mvpds), answering: [])]
        }
    }

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
        guard case .configured(let configuration) = configuration, case .login(var flow, .platformPicking) = authentication,
            flow.id == flowID
        else { return [.log(.latePickerAnswerIgnored(flowID))] }
        let dialog = platformDialog(flow, configuration)
        func fallBack(_ notice: Notice, _ message: String, _ condition: TransitionGuard) -> [Action] {
            moveAuthentication(to: .login(flow, .selectingProvider), condition, .dismissTvProviderDialog, .status, .displayProviderDialog)
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
            let operation = nextOperation(.authentication)
            moveAuthentication(
                to: .login(flow, .readingProfile(operation: operation, attempt: 1)), .platformSignedIn, .readProfile)
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
