/// The rows a step took, held against what the step does: every effect a chart can show must be named
/// by one of the step's rows, so the recorded ``TransitionRow/actions`` cannot drift from the code.
extension MachineStep {
    /// The effects of this step that none of `rows` names, each described as the row actions that
    /// could have named it (`"navigateToUrl"`, `"status|failQueue|failCall"`); empty when the rows
    /// account for the whole step. Logs and tracking data are not drawn, and neither is the save: a
    /// step saves whatever it changed of the stored fields, whichever row changed them
    /// (`MachineStep.save`), so no row names it.
    package func effectsNotInRows(_ rows: [TransitionRow]) -> [String] {
        let named = Set(rows.flatMap(\.actions))
        var claims: [[TransitionAction]] = effects.compactMap(Self.rowActions(for:))
        if !secretsToDraw.isEmpty { claims.append([.drawSecrets]) }
        if !resubmitted.isEmpty { claims.append([.runQueue, .resendRequest]) }
        var unclaimed: [String] = []
        for claim in claims where !claim.contains(where: { named.contains($0.rawValue) }) {
            let described = claim.map(\.rawValue).joined(separator: "|")
            if !unclaimed.contains(described) { unclaimed.append(described) }
        }
        return unclaimed
    }

    /// The row actions that name `effect`; nil for effects no row draws.
    static func rowActions(for effect: Action) -> [TransitionAction]? {
        switch effect {
        case .emit(let callback, _): rowActions(for: callback)
        case .loadConfiguration: [.loadConfiguration, .resendRequest]
        case .askProvider: [.askProvider]
        case .callBackend(_, let request): rowActions(for: request) + [.resendRequest]
        case .presentPlatformPicker: [.presentTvProviderDialog]
        case .dismissPlatformPicker: [.dismissTvProviderDialog]
        case .checkPlatformSignIn: [.checkPlatformSignIn]
        // A request's deadline is part of the request (started beside it, cancelled by its answer, and
        // stopping it when it passes): no row draws it.
        case .startTimer(.requestDeadline, _), .cancelTimer(.requestDeadline), .cancelRequest: nil
        case .startTimer: [.startTimer]
        case .cancelTimer: [.cancelTimer]
        case .log: nil
        }
    }

    private static func rowActions(for callback: Callback) -> [TransitionAction]? {
        switch callback {
        case .setRequestorComplete: [.setRequestorComplete, .failQueue]
        case .displayProviderDialog: [.displayProviderDialog]
        case .setAuthenticationStatus: [.setAuthenticationStatus, .failQueue, .failCall]
        case .navigateToUrl: [.navigateToUrl]
        case .sendTrackingData: nil
        case .setToken: [.setToken]
        case .tokenRequestFailed: [.tokenRequestFailed, .failQueue, .failCall]
        case .selectedProvider: [.selectedProvider, .failQueue, .failCall]
        case .setMetadataStatus: [.setMetadataStatus, .failQueue, .failCall]
        case .preauthorizedResources: [.preauthorizedResources, .failQueue, .failCall]
        case .presentTvProviderDialog: [.presentTvProviderDialog]
        case .dismissTvProviderDialog: [.dismissTvProviderDialog]
        case .status: [.status, .failQueue, .failCall]
        case .entitlementsChanged: [.entitlementsChanged]
        case .providerSignInStatus: [.providerSignInStatus]
        case .stepUpRequired: [.stepUpRequired]
        }
    }

    private static func rowActions(for request: BackendRequest) -> [TransitionAction] {
        switch request {
        case .configuration: [.loadConfiguration]
        case .createSession: [.createSession]
        case .resumeSession: [.resumeSession]
        case .session: [.checkSession, .pollRegistration]
        case .partnerSession: [.requestPartnerSession]
        case .profiles: [.readProfiles]
        case .profile, .profileByCode, .partnerProfile: [.readProfile, .pollRegistration]
        case .authorize: [.authorize]
        case .preauthorize: [.preauthorize]
        case .logout: [.requestLogout]
        }
    }
}
