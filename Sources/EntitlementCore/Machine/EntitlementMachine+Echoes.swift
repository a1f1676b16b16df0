import EntitlementSupport

/// Secrets echoed back: an MVPD may quote the flow's `state` in its `error_description` prose, a
/// service may name a session code in an error message. Whatever the machine writes from such outside
/// text — a status message, a failure's description, a sign-in message, tracking details, a log —
/// has every secret the machine holds (the running flows' states and codes, a second screen's
/// registration code) replaced by `…`, by value, whatever name (or none) stands before it.
extension EntitlementMachine {
    /// Secrets shorter than this are not looked for (too likely to be an ordinary word of the text).
    static let shortestEchoedSecret = 6

    /// Whether `input` brings text from outside the engine into what it may write.
    static func bringsOutsideText(_ input: Input) -> Bool {
        switch input {
        case .callReceived(_, .handleExternalURL), .backendFailed, .configurationFailed, .providerAnswered: true
        default: false
        }
    }

    /// The secrets of the flows under way, long enough to look for.
    var secretsHeld: [String] {
        var held: [String] = []
        func hold(_ secret: String?) {
            guard let secret, secret.utf8.count >= Self.shortestEchoedSecret else { return }
            if held.isEmpty { held.reserveCapacity(3) }
            held.append(secret)
        }
        switch authentication {
        case .login(let flow, let step):
            hold(flow.secrets?.state)
            hold(flow.code)
            if case .awaitingSecondScreen(let registration, _) = step { hold(registration.code) }
        case .logout(let flow, _):
            hold(flow.secrets?.state)
        default: break
        }
        return held
    }

    /// `effects` with `secrets` replaced by `…` in every text made from outside text. The
    /// registration code's own status (`REGCODE`) and URLs the app is sent to keep theirs: they are
    /// what the app is given on purpose.
    static func concealing(_ secrets: [String], in effects: [Action]) -> [Action] {
        func clean(_ text: String) -> String {
            secrets.reduce(text) { text, secret in ByteSearch.replacing(secret, with: "…", in: text) ?? text }
        }
        return effects.map { action in
            switch action {
            case .emit(.status(var report), let answering) where report.code != Notice.registrationCode.code:
                report.message = clean(report.message)
                return .emit(.status(report), answering: answering)
            case .emit(.tokenRequestFailed(let resource, let code, let description), let answering):
                return .emit(.tokenRequestFailed(resource: resource, errorCode: code, errorDescription: clean(description)), answering: answering)
            case .emit(.providerSignInStatus(let provider, let signedIn, let code, let message), let answering):
                return .emit(
                    .providerSignInStatus(provider: provider, signedIn: signedIn, errorCode: code, message: clean(message)),
                    answering: answering)
            case .emit(.sendTrackingData(let event, let data), let answering):
                return .emit(.sendTrackingData(event, data.map(clean)), answering: answering)
            case .log(.silentSignInFailed(let why)): return .log(.silentSignInFailed(clean(why)))
            case .log(.partnerSessionFellBack(let why)): return .log(.partnerSessionFellBack(clean(why)))
            default: return action
            }
        }
    }
}
