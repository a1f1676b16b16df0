import EntitlementEngine

/// Which events can happen in a state, taking one, and the promises checked as it is taken and once
/// everything has settled.
extension FleetModel {
    /// Every event that can happen now, within the bounds left.
    var enabledEvents: [FleetEvent] {
        var events: [FleetEvent] = []
        for node in nodes.indices {
            if callsLeft > 0 {
                for call in FleetEvent.Call.alphabet(
                    stepUp: constants.stepUp, subscription: constants.subscription, authorize: constants.authorize, preauthorize: constants.preauthorize) {
                    events.append(.call(node: node, call))
                }
                if nodes[node].machine.loginChoosingProvider != nil { events.append(.abandonPicker(node: node)) }
            }
            let sent = nodes[node].requests.map { ($0.operation, $0.deadline) } + nodes[node].askedProvider.map { ($0.operation, $0.deadline) }
            for (operation, deadline) in sent {
                if now < deadline {
                    events.append(.answer(node: node, operation))
                    if faultsLeft > 0 { events.append(.fail(node: node, operation)) }
                } else {
                    events.append(.timeout(node: node, operation))
                }
            }
            for answer in nodes[node].answered {
                if now < answer.deadline {
                    events.append(.arrive(node: node, answer.operation))
                    if faultsLeft > 0 { events.append(.fail(node: node, answer.operation)) }
                } else {
                    events.append(.timeout(node: node, answer.operation))
                }
            }
            for timer in nodes[node].timers where timer.at <= now { events.append(.timer(node: node, timer.id)) }
            if store.up, nodes[node].knownVersion != store.version || nodes[node].viewHeldBack, nodes[node].followsStore {
                events.append(.look(node: node))
            }
        }
        if nextDeadline != nil { events.append(.advanceClock) }
        if userActionsLeft > 0, constants.subscription, !service.subscriptionValid.isEmpty { events.append(.providerForgetsTokens) }
        if userActionsLeft > 0 {
            for node in nodes.indices where nodes[node].platformPicker != nil {
                for choice in FleetEvent.PlatformChoice.allCases { events.append(.platformPicker(node: node, choice)) }
            }
            for page in pages where !page.used {
                switch page.kind {
                case .login:
                    events.append(.logIn(page: page.seq))
                    events.append(.cancelAtProvider(page: page.seq))
                case .logout:
                    events.append(.followLogout(page: page.seq))
                case .code:
                    events.append(.logIn(page: page.seq))
                case .platform:
                    break
                }
            }
        }
        for (index, redirect) in redirects.enumerated() where redirect.deliveries < 2 {
            for node in nodes.indices { events.append(.redirect(index, node: node)) }
        }
        if faultsLeft > 0 {
            events.append(store.up ? .storeDown : .storeUp)
            if constants.lostWrites, store.up, store.canLoseLastWrite { events.append(.storeLosesLastWrite) }
            for node in nodes.indices { events.append(.restart(node: node)) }
        } else if !store.up {
            events.append(.storeUp)
        }
        return events
    }

    /// The earliest deadline after now that some node waits for: a timer, or a request's.
    var nextDeadline: Timestamp? {
        var earliest: Timestamp?
        func consider(_ at: Timestamp) {
            if at > now, earliest.map({ at < $0 }) ?? true { earliest = at }
        }
        for node in nodes {
            for timer in node.timers { consider(timer.at) }
            for sent in node.requests { consider(sent.deadline) }
            for answer in node.answered { consider(answer.deadline) }
            for asked in node.askedProvider { consider(asked.deadline) }
        }
        return earliest
    }

    /// Takes `event`; ``problems`` then says what it broke.
    mutating func apply(_ event: FleetEvent) {
        problems = []
        told = []
        switch event {
        case .fail, .timeout, .storeDown, .restart, .storeLosesLastWrite: sawFailure = true
        default: break
        }
        switch event {
        case .call(let node, let call):
            callsLeft -= 1
            submit(call.entitlementCall, on: node)
        case .answer(let node, let named), .arrive(let node, let named), .fail(let node, let named), .timeout(let node, let named):
            guard let (operation, outstanding) = takeOutstanding(named, on: node) else { return }
            switch event {
            case .fail:
                faultsLeft -= 1
                deliver(Self.lost(outstanding, of: operation), to: node)
            case .timeout:
                deliver(.timerFired(.requestDeadline(operation)), to: node)
            default:
                switch outstanding {
                case .onItsWay(let answer): deliver(Self.arrival(answer, of: operation), to: node)
                case .backend(let request, let deadline): send(.backend(answer(request)), of: operation, deadline: deadline, to: node)
                case .provider(let asked):
                    send(.provider(asked.request, providerAnswer(to: asked, on: node)), of: operation, deadline: asked.deadline, to: node)
                }
            }
        case .timer(let node, let id):
            guard let index = nodes[node].timers.firstIndex(where: { $0.id == id }) else { return }
            nodes[node].timers.remove(at: index)
            deliver(.timerFired(id), to: node)
        case .advanceClock:
            if let next = nextDeadline { now = next }
        case .logIn(let page):
            userActionsLeft -= 1
            logIn(page: page)
        case .cancelAtProvider(let page):
            userActionsLeft -= 1
            cancel(page: page)
        case .followLogout(let page):
            userActionsLeft -= 1
            followLogout(page: page)
        case .redirect(let index, let node):
            redirects[index].deliveries += 1
            if index == newestLoginRedirect, now < newestPageOpened.adding(settings.redirectTimeout) { newestLoginDelivered = true }
            submit(.handleExternalURL(redirects[index].url), on: node)
        case .look(let node):
            storageCheck(node)
        case .storeDown:
            faultsLeft -= 1
            store.up = false
        case .storeUp:
            store.up = true
        case .providerForgetsTokens:
            userActionsLeft -= 1
            service.subscriptionValid = []
        case .storeLosesLastWrite:
            faultsLeft -= 1
            lostWrite = true
            store.loseLastWrite()
        case .restart(let node):
            faultsLeft -= 1
            nodes[node].generation += 1
            start(node: node)
        case .abandonPicker(let node):
            callsLeft -= 1
            if let flow = nodes[node].machine.loginChoosingProvider { deliver(.providerChoiceAbandoned(flow), to: node) }
        case .platformPicker(let node, let choice):
            userActionsLeft -= 1
            guard let flow = nodes[node].platformPicker else { return }
            nodes[node].platformPicker = nil
            if choice == .signIn {
                service.platformSignedIn = true
                noteLoginWithPlatform()
            }
            deliver(.platformPickerAnswered(flow, choice.answer), to: node)
        }
    }

    /// A request of a node's that an event names, or the answer to it on its way (late answers).
    private enum Outstanding {
        /// Given by the service or the provider, not yet at the node.
        case onItsWay(Answer)
        /// A backend request still at the service, and the time the shell stops waiting for it.
        case backend(BackendRequest, deadline: Timestamp)
        /// A provider's request still at the provider.
        case provider(ProviderRequestOut)
    }

    /// Takes the request `named` (by its number: the node's own id carries its owner) out of `node`'s
    /// shell: an answer on its way first, else a provider's request, else a backend request.
    private mutating func takeOutstanding(_ named: OperationID, on node: Int) -> (OperationID, Outstanding)? {
        if let index = nodes[node].answered.firstIndex(where: { $0.operation.rawValue == named.rawValue }) {
            let entry = nodes[node].answered.remove(at: index)
            return (entry.operation, .onItsWay(entry.answer))
        }
        if let index = nodes[node].askedProvider.firstIndex(where: { $0.operation.rawValue == named.rawValue }) {
            let asked = nodes[node].askedProvider.remove(at: index)
            return (asked.operation, .provider(asked))
        }
        if let index = nodes[node].requests.firstIndex(where: { $0.operation.rawValue == named.rawValue }) {
            let sent = nodes[node].requests.remove(at: index)
            return (sent.operation, .backend(sent.request, deadline: sent.deadline))
        }
        return nil
    }

    /// What the provider answers `asked` now (it acts on it): the subscription's answer, or a step-up
    /// provider's credentials (numbered for the open resource, else presenting the request's transaction).
    private mutating func providerAnswer(to asked: ProviderRequestOut, on node: Int) -> ProviderAnswer {
        if constants.subscription { return subscriptionAnswer(asked.request, token: asked.userToken, on: node) }
        return .credentials(
            asked.number.map { .success(ProviderCredentials(token: Self.openTokenPrefix + String($0))) }
                ?? providerAnswer(presenting: asked.transaction, on: node))
    }

    /// An answer just given to `node`'s request `operation`: it reaches the node at once, or with late
    /// answers starts on its way (``FleetEvent/arrive(node:_:)``), the shell still waiting until `deadline`.
    private mutating func send(_ answer: Answer, of operation: OperationID, deadline: Timestamp, to node: Int) {
        if constants.lateAnswers {
            nodes[node].answered.append((operation, answer, deadline))
        } else {
            deliver(Self.arrival(answer, of: operation), to: node)
        }
    }

    /// The input an answer to `operation` is when it reaches its node.
    private static func arrival(_ answer: Answer, of operation: OperationID) -> Input {
        switch answer {
        case .backend(.success(let response)): .backendAnswered(operation, response)
        case .backend(.failure(let error)): .backendFailed(operation, error)
        case .provider(_, let answer): .providerAnswered(operation, answer)
        }
    }

    /// The input a node sees when the connection carrying its request `operation` fails (a fault); with late
    /// answers the service or provider may have acted on it already.
    private static func lost(_ outstanding: Outstanding, of operation: OperationID) -> Input {
        let provider: ProviderRequest? =
            switch outstanding {
            case .onItsWay(.provider(let request, _)): request
            case .provider(let asked): asked.request
            case .onItsWay(.backend), .backend: nil
            }
        guard let provider else { return .backendFailed(operation, .network("the connection was reset")) }
        return .providerAnswered(operation, .failed(provider, .networkFailure))
    }

    /// A callback `node` handed out: every call it answers must be waiting (answered once), a login
    /// page opens in the web view, and a sign-in must follow a login the user made after the last
    /// logout or cancel.
    mutating func observe(_ callback: Callback, answering: [CallID], on node: Int) {
        if tellsScript, !callback.isTracking { told.append("< @\(Self.name(node)) \(callback.redactedDescription)") }
        for id in answering {
            if let index = nodes[node].waiting.firstIndex(of: id) {
                nodes[node].waiting.remove(at: index)
            } else {
                problems.append("node \(Self.name(node)) answered call \(id) again: \(callback)")
            }
        }
        if let probe, probe.node == node, answering.contains(probe.call), case .setAuthenticationStatus(let status, _) = callback {
            probeAnswer = status
        }
        let showedCode = nodes[node].showsCode
        if case .setAuthenticationStatus = callback, showedCode, answering.isEmpty { nodes[node].showsCode = false }
        if case .setAuthenticationStatus = callback, answering.isEmpty, nodes[node].waiting.isEmpty, !showedCode {
            // A node speaks only for calls it holds: a status answering none, with no call of the device
            // waiting on this node (nor a code it showed), tells the app of a flow it never asked about here.
            problems.append("node \(Self.name(node)) told a status answering no call while it holds none: \(callback)")
        }
        switch callback {
        case .navigateToUrl(let url):
            open(url)
        case .status(let report) where report.code == "REGCODE":
            open("code:" + report.message)
            if answering.isEmpty { nodes[node].showsCode = true }
            // The service's answer reaches the node with the event that asked it unless answers are late, and a
            // failed read shows the code (nothing says it is used): only then can the node know. A code whose
            // sign-in a logout request undid since has no profile to find: the node cannot tell it from a new one.
            if !sawFailure, !constants.lateAnswers,
                service.session.map({ "C\($0.code)" != report.message || ($0.loggedIn && service.profile) }) ?? true
            {
                problems.append("node \(Self.name(node)) showed the device a registration code the user already entered, or one the service no longer holds: \(callback)")
            }
        case .stepUpRequired(let resource, let advice):
            let held = store.tokens.pendingStepUps.contains { $0.resource == resource && $0.advice == advice && $0.phase == .awaiting }
            if !held { problems.append("node \(Self.name(node)) asked the app for a step-up the store does not hold: \(callback)") }
        case .setToken(let token, _) where constants.stepUp:
            if !lostWrite, let number = Self.transaction(granting: token), service.grantedAfterLogout.contains(number) {
                problems.append("node \(Self.name(node)) handed out a media token granted after a logout that came after its step-up: \(callback)")
            }
            if !lostWrite, let number = Self.openRequest(granting: token), number <= openAskedBeforeLogout {
                problems.append("node \(Self.name(node)) handed out a token asked for before a logout, after it: \(callback)")
            }
        case .providerSignInStatus(_, true, _, _):
            // Nothing told that the store did not hold: the sign-in the node reports was saved (a sign-out
            // saved since may follow it: the answer is then late, not wrong).
            let token = nodes[node].machine.providerAccounts[Self.subscriptionProvider]?.userToken
            if !(token.map { service.subscriptionStored.contains($0) } ?? false) {
                problems.append("node \(Self.name(node)) told the device it is signed in to the subscription with a token the store never held: \(callback)")
            }
        case .setToken where constants.subscription:
            break
        case .setToken(let token, _) where constants.authorize:
            if !lostWrite, let number = Self.decision(granting: token), number <= decisionsBeforeLogout {
                problems.append("node \(Self.name(node)) handed out a media token decided before a logout, after it: \(callback)")
            }
            fallthrough
        case .setAuthenticationStatus(1, _), .setToken:
            if !lostWrite, lastLoginPage < validFromPage {
                problems.append(
                    "node \(Self.name(node)) signed the device in after a logout or cancel, with no login since: \(callback)")
            }
        case .preauthorizedResources(let permitted) where !permitted.isEmpty:
            if !lostWrite, lastLoginPage < validFromPage {
                problems.append(
                    "node \(Self.name(node)) pre-authorized a resource after a logout or cancel, with no login since: \(callback)")
            }
        default:
            break
        }
    }

    /// A logout, or a cancel of a login whose page the device was sent to (the node waits for its redirect
    /// or reads its profile), once its step holds: every page opened before it is stale. A cancel that
    /// only closes a picker ends no page.
    mutating func noteHappenedBefore(_ input: Input, before: AuthenticationState.Kind, on node: Int) {
        guard case .callReceived(_, let call) = input else { return }
        switch call {
        case .setSelectedProvider, .logout:
            // The device chose again, cancelled or logged out: a login on an earlier page promises nothing.
            chosenFromPage = pages.count
            newestLoginRedirect = nil
            if case .logout = call { decisionsBeforeLogout = service.decisionsMade }
        default:
            break
        }
        switch (call, before) {
        case (.logout, _) where constants.stepUp:
            transactionsBeforeLogout = service.transactionsIssued
            openAskedBeforeLogout = service.openAsked
        case (.logout, _), (.setSelectedProvider(nil), .awaitingRedirect), (.setSelectedProvider(nil), .readingProfile),
            (.setSelectedProvider(nil), .awaitingSecondScreen):
            validFromPage = pages.count
        default:
            break
        }
    }
}

extension Callback {
    /// Whether the callback is tracking data (left out of a script).
    fileprivate var isTracking: Bool {
        if case .sendTrackingData = self { true } else { false }
    }
}
