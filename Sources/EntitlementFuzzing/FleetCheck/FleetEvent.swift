import EntitlementEngine

/// One thing that can happen in a fleet: a device call on a node, a backend answer or failure, a timer,
/// the clock moving to the next deadline, the user acting in the browser, a redirect reaching a node, a
/// node reading the store after a save notification, or a fault (the store down or back, a node
/// restarted). ``FleetChecker`` enumerates their every order.
package enum FleetEvent: Sendable, Hashable, CustomStringConvertible {
    /// A call the device can make (the model's alphabet of calls).
    package enum Call: Sendable, Hashable, CaseIterable {
        case getAuthentication, chooseProvider, cancel, checkAuthentication, logout
        /// `getAuthorization` of the resource a PIN protects (``FleetModel/protectedResource``).
        case authorize
        /// `getAuthorization` of a resource the same provider grants without a step-up (``FleetModel/openResource``):
        /// a plain server authorization.
        case authorizeOpen
        /// The app reports the step-up done, or cancelled.
        case completeStepUp, cancelStepUp
        /// The user signs in to the direct subscription, the device reads its issue (``FleetModel/issue``),
        /// the user signs out of the subscription.
        case signIn, readIssue, signOut
        /// `getAuthorization` of a resource the TV provider decides on (``FleetModel/channel``), with
        /// ``FleetChecker/Bounds/authorize``.
        case watch
        /// `checkPreauthorizedResources` of that resource, the cache allowed, with ``FleetChecker/Bounds/preauthorize``.
        case preview

        /// The calls of a check: a TV-provider login's (with `authorize`, the TV provider's authorization
        /// too; with `preauthorize`, its pre-authorization), or (`stepUp`) a provider's authorizations — one a
        /// PIN protects, one it grants at once — and a logout.
        static func alphabet(stepUp: Bool, subscription: Bool = false, authorize: Bool = false, preauthorize: Bool = false) -> [Call] {
            if subscription { return [.signIn, .readIssue, .signOut, .logout] }
            if stepUp { return [.authorize, .authorizeOpen, .completeStepUp, .cancelStepUp, .logout] }
            return [.getAuthentication, .chooseProvider, .cancel, .checkAuthentication, .logout] + (authorize ? [.watch] : [])
                + (preauthorize ? [.preview] : [])
        }

        var entitlementCall: EntitlementCall {
            switch self {
            case .getAuthentication: .getAuthentication(forceAuthn: false, data: [:])
            case .chooseProvider: .setSelectedProvider(FleetModel.mvpd.id)
            case .cancel: .setSelectedProvider(nil)
            case .checkAuthentication: .checkAuthentication
            case .logout: .logout
            case .authorize: .getAuthorization(resource: FleetModel.protectedResource, data: [:])
            case .authorizeOpen: .getAuthorization(resource: FleetModel.openResource, data: [:])
            case .completeStepUp: .completeStepUp(resource: FleetModel.protectedResource, succeeded: true)
            case .cancelStepUp: .completeStepUp(resource: FleetModel.protectedResource, succeeded: false)
            case .signIn: .signIn(provider: FleetModel.subscriptionProvider, credentials: ["username": "bob", "password": "pw"])
            case .readIssue: .getAuthorization(resource: FleetModel.issue, data: [:])
            case .signOut: .signOut(provider: FleetModel.subscriptionProvider)
            case .watch: .getAuthorization(resource: FleetModel.channel, data: [:])
            case .preview: .checkPreauthorizedResources([FleetModel.channel], cache: true)
            }
        }

        var script: String {
            switch self {
            case .getAuthentication: "getAuthentication"
            case .chooseProvider: "setSelectedProvider \(FleetModel.mvpd.id)"
            case .cancel: "setSelectedProvider nil"
            case .checkAuthentication: "checkAuthentication"
            case .logout: "logout"
            case .authorize: "getAuthorization \(FleetModel.protectedResource)"
            case .authorizeOpen: "getAuthorization \(FleetModel.openResource)"
            case .completeStepUp: "completeStepUp \(FleetModel.protectedResource) succeeded"
            case .cancelStepUp: "completeStepUp \(FleetModel.protectedResource) failed"
            case .signIn: "signIn \(FleetModel.subscriptionProvider) username bob password pw"
            case .readIssue: "getAuthorization \(FleetModel.issue)"
            case .signOut: "signOut \(FleetModel.subscriptionProvider)"
            case .watch: "getAuthorization \(FleetModel.channel)"
            case .preview: "checkPreauthorizedResources [\(FleetModel.channel)]"
            }
        }
    }

    /// What the user does in the platform's picker (``FleetChecker/Bounds/platform``).
    package enum PlatformChoice: Sendable, Hashable, CaseIterable {
        /// Signs in with the MVPD: the platform's account is signed in from then on.
        case signIn
        /// Picks "Other TV Providers": the engine's own dialog follows.
        case otherProviders
        /// Cancels the picker.
        case cancel

        var answer: PlatformPickerAnswer {
            switch self {
            case .signIn: .signedIn(FleetModel.platformAssertion)
            case .otherProviders: .otherProviders
            case .cancel: .cancelled
            }
        }

        var script: String {
            switch self {
            case .signIn: "signs in with \(FleetModel.mvpd.id)"
            case .otherProviders: "picks another provider"
            case .cancel: "cancels"
            }
        }
    }

    /// The device calls `call` on `node`.
    case call(node: Int, Call)
    /// The service (or, for a provider's request, the provider) answers `node`'s request `operation` (it
    /// acts on the request now; the answer reaches the node at once, or with
    /// ``FleetChecker/Bounds/lateAnswers`` travels until ``arrive(node:_:)``).
    case answer(node: Int, OperationID)
    /// The service's (or the provider's) answer to `node`'s request `operation`, given earlier, reaches the
    /// node (``FleetChecker/Bounds/lateAnswers``).
    case arrive(node: Int, OperationID)
    /// `node`'s request `operation` fails (the network: a fault); with ``FleetChecker/Bounds/lateAnswers``, also
    /// an answer on its way is lost (the service acted, the node sees the connection fail).
    case fail(node: Int, OperationID)
    /// `node`'s request `operation` passed its deadline unanswered: the machine's deadline timer for it fires (no fault: the clock).
    case timeout(node: Int, OperationID)
    /// `node`'s due timer fires.
    case timer(node: Int, TimerID)
    /// The clock moves to the next deadline any node waits for.
    case advanceClock
    /// The user logs in on the page opened `page`-th.
    case logIn(page: Int)
    /// The user cancels at the MVPD on the page opened `page`-th.
    case cancelAtProvider(page: Int)
    /// The browser follows the MVPD's logout page opened `page`-th.
    case followLogout(page: Int)
    /// The browser hands the `redirect`-th redirect to `node` (again, if it did before).
    case redirect(Int, node: Int)
    /// `node` reads the store (a save notification reached it).
    case look(node: Int)
    /// The store goes down.
    case storeDown
    /// The store is back, with its data.
    case storeUp
    /// The store forgets the last write it acknowledged (``FleetChecker/Bounds/lostWrites``): its tokens are
    /// as before that write, under a new version.
    case storeLosesLastWrite
    /// `node`'s process dies and starts again: its requests, timers and calls are lost.
    case restart(node: Int)
    /// The host running `node` gives up the provider picker open there (its time limit passed, or the
    /// session closes): `AccessEnabler.abandonProviderChoice(_:)`, a call's budget.
    case abandonPicker(node: Int)
    /// The subscription's service forgets every token it gave (a user action's budget): each is found
    /// invalid at its next use, and renewed.
    case providerForgetsTokens
    /// The user answers the platform's picker the device shows through `node` (a user action).
    case platformPicker(node: Int, PlatformChoice)

    /// The event as a line of a fleet script.
    package var description: String {
        let name = FleetModel.name
        switch self {
        case .call(let node, let call): return "> @\(name(node)) \(call.script)"
        case .answer(let node, let operation): return "! backend answers @\(name(node)) request \(operation)"
        case .arrive(let node, let operation): return "! backend's answer to @\(name(node)) request \(operation) arrives"
        case .fail(let node, let operation): return "! backend fails @\(name(node)) request \(operation) with network"
        case .timeout(let node, let operation): return "! backend request \(operation) of @\(name(node)) times out"
        case .timer(let node, let timer): return "! timer \(timer) fires @\(name(node))"
        case .advanceClock: return "! clock advances to the next deadline"
        case .logIn(let page): return "! user logs in as alice on page \(page)"
        case .cancelAtProvider(let page): return "! user cancels at the provider on page \(page)"
        case .followLogout(let page): return "! web view follows the logout on page \(page)"
        case .redirect(let index, let node): return "> @\(name(node)) handleExternalURL $redirect\(index)"
        case .look(let node): return "! @\(name(node)) reads the store (a save notification)"
        case .storeDown: return "! storage goes down"
        case .storeUp: return "! storage is back"
        case .storeLosesLastWrite: return "! storage loses the last write"
        case .restart(let node): return "! @\(name(node)) engine restarts"
        case .abandonPicker(let node): return "! @\(name(node)) host gives up the provider choice"
        case .providerForgetsTokens: return "! provider \(FleetModel.subscriptionProvider) forgets its tokens"
        case .platformPicker(let node, let choice): return "! user \(choice.script) in the platform picker @\(name(node))"
        }
    }
}
