import EntitlementEngine

/// A node's shell, as `AccessEnabler` runs it (`AccessEnabler+Mailbox.swift`, `+Storage.swift`), without
/// I/O: before each input from the mailbox the node compares its view's store version with the store's
/// (and reads again while the machine keeps a view of its own) and feeds `storageChanged` when the tokens
/// differ; an input that cannot be decided because the store is down, or whose save the store cannot take,
/// is replaced as the shell's own rules say (`AccessEnabler.input(insteadOf:notRead:)` and
/// `input(insteadOf:notSaved:)`); each step's save is a compare-and-set, decided again on a conflict (up
/// to `AccessEnabler.conflictRetries` times); secrets drawn and a failed save are fed back before anything
/// else, resubmitted calls ahead of the mailbox.
///
/// One event's inputs on one node run to the end before any other event: the mailbox of a real node may
/// interleave with other nodes between its items, which this model does not enumerate.
extension FleetModel {
    /// Starts (or restarts) `node`: a fresh machine whose `setRequestor` loads the configuration and reads
    /// the store (nothing when the store is down, as the shell's `configurationAnswered` does).
    mutating func start(node index: Int) {
        var node = nodes[index]
        node.machine = constants.freshMachine
        node.knownVersion = nil
        node.viewHeldBack = false
        node.followsStore = false
        node.requests = []
        node.answered = []
        node.askedProvider = []
        node.timers = []
        node.waiting = []
        node.showsCode = false
        node.platformPicker = nil
        node.lastCall = 0
        nodes[index] = node
        let call = submit(.setRequestor(requestorID: Self.requestorID, serviceProviders: []), on: index)
        guard let sent = nodes[index].requests.first, case .configuration = sent.request else {
            problems.append("node \(Self.name(index)): setRequestor (\(call)) asked for no configuration")
            return
        }
        nodes[index].requests.removeFirst()
        var stored = StoredTokens.empty
        if store.up {
            stored = store.tokens
            nodes[index].knownVersion = store.version
        }
        // A code the app showed before the node started again is the node's to end, as one it shows now.
        nodes[index].showsCode = stored.pendingRegistration.map { $0.expires > now } ?? false
        deliver(.configurationLoaded(sent.operation, constants.configuration, stored), to: index, reconciling: false)
    }

    /// The settings of every node: the simulated app's (its redirect URL and domain); on a device with a
    /// second screen, codes polled every 5 s and shown for a minute (so that everything settles within a
    /// few dozen polls); with step-ups, one provider answering for every resource and a step-up of the
    /// protected resource allowed a minute; with the platform's account, its single sign-on on.
    static func settings(secondScreen: Bool, stepUp: Bool = false, subscription: Bool = false, platform: Bool = false) -> EngineSettings {
        var settings = EngineSettings.simulated
        settings.platformSSO = platform
        if secondScreen { settings.secondScreen = SecondScreen(pollInterval: .seconds(5), codeLifetime: .seconds(60)) }
        if stepUp {
            settings.providers = [ProviderLink(id: stepUpProvider)]
            settings.stepUp = StepUpSettings(resources: [protectedResource], timeout: .seconds(60))
        }
        if subscription { settings.providers = [ProviderLink(id: subscriptionProvider, signsIn: true, renewsTokens: true)] }
        return settings
    }

    /// The device calls `call` on `node`: its id, once every input it led to has run.
    @discardableResult
    mutating func submit(_ call: EntitlementCall, on node: Int) -> CallID {
        nodes[node].lastCall += 1
        let id = CallID(nodes[node].lastCall)
        nodes[node].waiting.append(id)
        deliver(.callReceived(id, call), to: node)
        return id
    }

    /// Runs `input` through `node`'s mailbox and everything it leads to on that node (`reconciling`: the
    /// store is checked before it, as before every input the mailbox runs).
    mutating func deliver(_ input: Input, to node: Int, reconciling: Bool = true) {
        decide(input, on: node, reconciling: reconciling)
        drain(node)
    }

    /// Decides a mailbox input on the store's view: one that cannot be decided on it (the store cannot be
    /// read) is replaced as the shell's own rule says (`AccessEnabler.input(insteadOf:notRead:)`).
    private mutating func decide(_ input: Input, on node: Int, reconciling: Bool = true) {
        if reconciling, let failure = reconcile(node), let instead = AccessEnabler.input(insteadOf: input, notRead: failure) {
            process(instead, on: node)
        } else {
            process(input, on: node)
        }
    }

    /// A save notification reached `node`: it checks the store, and runs what that leads to.
    mutating func storageCheck(_ node: Int) {
        reconcile(node)
        drain(node)
    }

    /// Runs what the last input left on `node`: secrets and failed saves first, then resubmitted calls.
    private mutating func drain(_ node: Int) {
        while true {
            if !nodes[node].immediate.isEmpty {
                process(nodes[node].immediate.removeFirst(), on: node)
            } else if !nodes[node].mailbox.isEmpty {
                decide(nodes[node].mailbox.removeFirst(), on: node)
            } else {
                // Drained: a state kept for the search holds no emptied buffers.
                if nodes[node].immediate.capacity > 0 { nodes[node].immediate = [] }
                if nodes[node].mailbox.capacity > 0 { nodes[node].mailbox = [] }
                return
            }
        }
    }

    /// The shell's check of the store before an input: a version other than the view's (or any, while the
    /// machine keeps a view of its own) is read, and tokens other than the machine's are fed as
    /// `storageChanged`. A store that is down cannot be read: the failure is returned (the model's outage
    /// lasts past the shell's retry window; one shorter is the same as the store coming back first).
    @discardableResult
    mutating func reconcile(_ node: Int, force: Bool = false) -> TokenStorageError? {
        guard nodes[node].followsStore else { return nil }
        guard store.up else { return .unavailable("the store is down (past the retry window)") }
        if !force, !nodes[node].viewHeldBack, nodes[node].knownVersion == store.version { return nil }
        nodes[node].knownVersion = store.version
        let tokens = store.tokens
        guard nodes[node].machine.differs(from: tokens) else {
            nodes[node].viewHeldBack = false
            return nil
        }
        process(.storageChanged(tokens), on: node, onLostSave: .drop)
        nodes[node].viewHeldBack = nodes[node].machine.differs(from: tokens)
        return nil
    }

    /// A save that holds: the store takes it (and the subscription's token it holds is noted as stored).
    private mutating func write(_ tokens: StoredTokens) {
        store.write(tokens)
        if constants.subscription, let token = tokens.providerAccounts[Self.subscriptionProvider]?.userToken {
            service.subscriptionStored.insert(token)
        }
    }

    /// One input, its save first: taken when the save holds, decided again after a lost compare-and-set.
    mutating func process(_ input: Input, on node: Int, onLostSave: AccessEnabler.OnLostSave = .decideAgain) {
        // The device's calls are what a logout or cancel orders against (``noteHappenedBefore``) — when they
        // run: one queued until `setRequestor` completes is noted when it runs from the queue.
        let before: AuthenticationState.Kind? =
            if case .callReceived = input, case .configured = nodes[node].machine.configuration { nodes[node].machine.authentication.kind } else { nil }
        let signingInSilently = if constants.platform, case .signingIn = nodes[node].machine.configuration { true } else { false }
        defer { if signingInSilently { noteSilentPlatformSignIn(on: node) } }
        if store.up, nodes[node].knownVersion == store.version {
            // Any save the step asks for holds: it is taken in place, with nothing to go back to.
            let step = nodes[node].machine.handle(input, at: now)
            if let save = step.save {
                write(save.tokens)
                nodes[node].knownVersion = store.version
            }
            commit(step, of: input, on: node, before: before, notSaved: nil)
            return
        }
        var conflicts = 0
        while true {
            var next = nodes[node].machine
            let step = next.handle(input, at: now)
            var failure: TokenStorageError?
            if let save = step.save {
                if !store.up {
                    failure = .unavailable("the store is down (past the retry window)")
                } else if nodes[node].knownVersion != store.version {
                    if onLostSave == .drop { return }
                    if onLostSave == .decideAgain, conflicts < AccessEnabler.conflictRetries {
                        conflicts += 1
                        reconcile(node, force: true)
                        continue
                    }
                    failure = .conflict(current: StorageVersion(store.version))
                } else {
                    write(save.tokens)
                    nodes[node].knownVersion = store.version
                }
            }
            if let failure, let instead = AccessEnabler.input(insteadOf: input, notSaved: failure) {
                process(instead, on: node, onLostSave: onLostSave)
                return
            }
            nodes[node].machine = next
            commit(step, of: input, on: node, before: before, notSaved: failure)
            return
        }
    }

    /// Takes a decided step, its machine in place (`before`: the authentication before a device call): the
    /// rows it took (each must be in the table), then its effects.
    private mutating func commit(
        _ step: MachineStep, of input: Input, on node: Int, before: AuthenticationState.Kind?, notSaved failure: TokenStorageError?
    ) {
        for recorded in nodes[node].machine.lastRecorded where !TransitionTable.lists(recorded) {
            problems.append("node \(Self.name(node)) took a transition the table does not list: \(recorded.row)")
        }
        nodes[node].machine.forgetTransitions()  // a state kept for the search holds no rows
        if let following = step.storeFollowing { nodes[node].followsStore = following != .stop }
        if let before { noteHappenedBefore(input, before: before, on: node) }
        for action in step.effects { run(action, on: node) }
        for flow in step.secretsToDraw {
            let state = "g\(nodes[node].generation)-\(Self.name(node))-\(flow.rawValue)"
            nodes[node].immediate.append(.flowSecretsDrawn(flow, FlowSecrets(state: state)))
        }
        nodes[node].mailbox.insert(contentsOf: step.resubmitted.map { .callReceived($0.id, $0.call) }, at: 0)
        if let failure { nodes[node].immediate.insert(.storageWriteFailed(failure.description), at: 0) }
    }

    /// After an input `node` took while signing in silently at `setRequestor`: when that made it signed in
    /// with the platform's account, the sign-in is a login made now (cookbook I: a logout signs out of the
    /// app only, and the app signs in again at its next `setRequestor`).
    private mutating func noteSilentPlatformSignIn(on node: Int) {
        if case .signingIn = nodes[node].machine.configuration { return }
        guard case .authenticated(let token) = nodes[node].machine.authentication, token.source == .platformSSO else { return }
        noteLoginWithPlatform()
    }

    private mutating func run(_ action: Action, on node: Int) {
        switch action {
        case .emit(let callback, let answering):
            observe(callback, answering: answering, on: node)
        case .callBackend(let operation, let request), .loadConfiguration(let operation, let request):
            nodes[node].requests.append((operation, request, now.adding(settings.requestTimeout)))
        case .startTimer(.requestDeadline(let operation), let at):
            // A request's deadline is kept with the request: its answer is offered before it, its timeout at it.
            if let index = nodes[node].requests.firstIndex(where: { $0.operation == operation }) {
                nodes[node].requests[index].deadline = at
            } else if let index = nodes[node].askedProvider.firstIndex(where: { $0.operation == operation }) {
                nodes[node].askedProvider[index].deadline = at
            }
        case .cancelTimer(.requestDeadline):
            break  // the answer that cancels it took the request out already
        case .cancelRequest(let operation):
            nodes[node].requests.removeAll { $0.operation == operation }
            nodes[node].answered.removeAll { $0.operation == operation }
            nodes[node].askedProvider.removeAll { $0.operation == operation }
        case .startTimer(let id, let at):
            nodes[node].timers.removeAll { $0.id == id }
            nodes[node].timers.append((id, at))
        case .cancelTimer(let id):
            nodes[node].timers.removeAll { $0.id == id }
        case .log:
            break
        case .askProvider(let operation, provider: Self.stepUpProvider, .verify, _) where constants.stepUp:
            // The step-up provider answers for resources request by request and claims nothing ahead: its
            // verification at `setRequestor` says so, taken with the event that asked (it decides nothing the
            // step-up promises rest on, and answered as events it would only multiply the states).
            nodes[node].mailbox.append(.providerAnswered(operation, .verified(.success(.nothing))))
        case .askProvider(let operation, provider: Self.stepUpProvider, .credentials(let resource), let session) where constants.stepUp:
            var number: Int?
            if resource == Self.openResource {
                service.openAsked += 1
                number = service.openAsked
            }
            nodes[node].askedProvider.append(
                ProviderRequestOut(
                    operation: operation, request: .credentials(resource: resource), deadline: now.adding(settings.requestTimeout),
                    transaction: session.transactionID, number: number))
        case .askProvider(let operation, provider: Self.subscriptionProvider, let request, let session) where constants.subscription:
            nodes[node].askedProvider.append(
                ProviderRequestOut(operation: operation, request: request, deadline: now.adding(settings.requestTimeout), userToken: session.userToken))
        case .presentPlatformPicker(let flow, _, _, _) where constants.platform:
            nodes[node].platformPicker = flow
        case .dismissPlatformPicker(let flow) where constants.platform:
            if nodes[node].platformPicker == flow { nodes[node].platformPicker = nil }
        case .checkPlatformSignIn(let operation, _, _, _) where constants.platform:
            // The platform answers at once from its account: signed in, its assertion.
            nodes[node].mailbox.append(.platformSignInChecked(operation, service.platformSignedIn ? Self.platformAssertion : nil))
        case .askProvider, .presentPlatformPicker, .dismissPlatformPicker, .checkPlatformSignIn:
            problems.append("node \(Self.name(node)) asked for what the model does not have: \(action)")
        }
    }
}
