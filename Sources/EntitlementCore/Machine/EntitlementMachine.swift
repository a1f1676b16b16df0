import EntitlementSupport

/// The engine's pure state machine: `handle(input, at:) -> MachineStep`, no I/O, clock or randomness.
///
/// Six orthogonal regions: ``configuration`` (with the queue of calls held until `setRequestor`
/// completes), ``authentication`` (login flows and logout), ``authorizations`` (one small machine
/// per resource, answered by the TV provider or another provider of the chain), the calls region
/// (refusals, read-only answers, pre-authorizations and metadata reads) and, with a provider chain,
/// the entitlements region (``Callback/entitlementsChanged(_:)``) and the accounts region (providers
/// the user signs in to). The owner (`AccessEnabler`) turns calls, backend answers and timers into `Input`s and
/// runs the returned `MachineStep` (its save first, then its actions in order); tests drive this struct directly.
///
/// Every state change goes through a recording helper, so with ``recordsTransitions`` on, each
/// input reports the ``TransitionRow``s it took (``lastTransitions``); `TransitionTable` lists them
/// all and `StateCharts/` draws them.
///
/// Invariant: every accepted call ends in exactly one terminal callback, whose
/// `Action.emit(_:answering:)` names it; a refused call is answered by one `status` callback.
package struct EntitlementMachine: Sendable {
    /// A call held until `setRequestor` completes (or, configured, until an account knows what a new token grants).
    package struct QueuedCall: Sendable, Hashable {
        /// The call's id.
        package var id: CallID
        /// The call.
        package var call: EntitlementCall

        /// Creates a queued call.
        package init(id: CallID, call: EntitlementCall) {
            self.id = id
            self.call = call
        }
    }

    /// A pre-authorization waiting for the backend.
    struct PendingPreauthorization: Sendable, Hashable {
        var operation: OperationID
        var call: CallID
        /// Everything the caller asked about, in the caller's order.
        var resources: [String]
        /// Decisions already known (from the cache, or an earlier answer whose other items asked to retry).
        var known: [String: Bool]
        /// Items an earlier answer could not decide, as the P100 report names them.
        var failures: [String] = []
    }

    /// A pre-authorization decision kept for reuse.
    package struct CachedDecision: Sendable, Hashable {
        /// Whether the user may watch the resource.
        package var authorized: Bool
        /// When the decision stops being reused.
        package var expires: Timestamp
    }

    // MARK: - State

    /// What an input seldom writes, behind one copy-on-write reference (``held``). The engine decides each
    /// step on a copy of the machine: a step that writes none of these fields copies a few words, not the
    /// whole machine. The properties below read and write them in place.
    struct Held: Sendable {
        /// The settings, shared by the machines whose owner boxed them once (``SharedSettings``).
        let sharedSettings: Boxed<EngineSettings>
        let deviceID: String
        var regions = RegionStates()
        var authorizations: [AuthorizationRequest] = []
        var queue: [QueuedCall] = []
        var authorizationExpiries: [String: Timestamp] = [:]
        var preauthorizationCache: [String: CachedDecision] = [:]
        var selectedProviderID: String?
        var options: [String: String] = [:]
        var chainBox: Boxed<ChainState>?
        var preauthorizations: [PendingPreauthorization] = []
        var requestsSent: [OperationID: (request: BackendRequest, attempt: Int)] = [:]
        var persistedBox: Boxed<StoredTokens>?
        var persistedBeforeSave: Boxed<StoredTokens>?
        var nextCacheSweep = Timestamp(milliseconds: .min)
        var expiredFlowStateBox: Boxed<String>?
        var foreignStoreBox: Boxed<StoredTokens>?
        var configurationOperation = OperationID(0, owner: .configuration)
        var backendPausedUntil = Timestamp(milliseconds: .min)
        var lastFlow: UInt64 = 0
        var lastOperation: UInt64 = 0
        var stepUps: [PendingStepUp] = []
        var stepUpCalls: [StepUpCall] = []
        var logoutMark: Timestamp?
        // The small fields last, packed behind the optional's tag byte: inline between word-sized ones each
        // would take a word, and the box would be a size class larger (the bench's resting sessions).
        var persistedLeftOut = false
        var configurationFailures: UInt16 = 0
    }

    /// The fields an input seldom writes (``Held``).
    var held: CopyOnWrite<Held>

    /// Whether this machine and `other` share the fields an input seldom writes: true for a copy that
    /// has since handled only inputs that write none of them.
    package func sharesSeldomWrittenFields(with other: EntitlementMachine) -> Bool { held.sharesStorage(with: other.held) }

    /// Settings fixed at creation.
    package var settings: EngineSettings { held.value.sharedSettings.value }
    /// The device id sent with every request.
    package var deviceID: String { held.value.deviceID }
    /// The configuration and authentication regions' states, which only their move helpers set
    /// (`EntitlementMachine+RegionStates.swift`: the compiler holds the rule).
    var regions: RegionStates {
        _read { yield held.value.regions }
        _modify { yield &held.value.regions }
    }
    /// The configuration region.
    package var configuration: ConfigurationState { regions.configuration }
    /// The authentication region. A copy, not a read in place: a step switches over it and moves the
    /// region in the same breath, and a borrowed subject would be destroyed under its own cases (the
    /// box's exclusivity is not checked).
    package var authentication: AuthenticationState { regions.authentication }
    /// The authorization region: one request machine per (resource, data), in arrival order.
    package internal(set) var authorizations: [AuthorizationRequest] {
        _read { yield held.value.authorizations }
        _modify { yield &held.value.authorizations }
    }
    /// Calls held until `setRequestor` completes (or, configured, until an account knows what a new token grants), oldest first.
    package internal(set) var queue: [QueuedCall] {
        _read { yield held.value.queue }
        _modify { yield &held.value.queue }
    }
    /// When the last decision for each resource stops counting (its `notAfter`), for `TTL_AUTHZ`
    /// metadata only: decisions are never reused for playback, so every authorization asks again.
    package internal(set) var authorizationExpiries: [String: Timestamp] {
        _read { yield held.value.authorizationExpiries }
        _modify { yield &held.value.authorizationExpiries }
    }
    /// Pre-authorization decisions by resource, reused while fresh when `cache` is true; cleared
    /// whenever the authentication changes.
    package internal(set) var preauthorizationCache: [String: CachedDecision] {
        _read { yield held.value.preauthorizationCache }
        _modify { yield &held.value.preauthorizationCache }
    }
    /// The provider the user chose; a later login skips the picker while it is set.
    package internal(set) var selectedProviderID: String? {
        get { held.value.selectedProviderID }
        set {
            held.value.selectedProviderID = newValue
            savedFieldsWritten = true
        }
    }
    /// The options sent with every backend request.
    package internal(set) var options: [String: String] {
        _read { yield held.value.options }
        _modify { yield &held.value.options }
    }
    /// What each provider of the chain (by id) last verified the user may access.
    package internal(set) var providerViews: [String: ProviderView] {
        get { chainState.views }
        set { chainState.views = newValue }
    }
    /// What the user holds with each provider that takes a sign-in (saved with the tokens).
    package internal(set) var providerAccounts: [String: ProviderAccount] {
        get { chainState.accounts }
        set { chainState.accounts = newValue }
    }
    /// What each such account is doing (the accounts region).
    package internal(set) var accountWork: [String: AccountWork] {
        get { chainState.work }
        set { chainState.work = newValue }
    }
    /// Providers whose token was renewed and not used successfully since: another "invalid" signs out.
    var renewedRecently: Set<String> {
        get { chainState.renewedRecently }
        set { chainState.renewedRecently = newValue }
    }
    /// What the app was last told it may access (``announceEntitlements()``).
    var announcedEntitlements: Entitlements {
        get { chainState.announced }
        set { chainState.announced = newValue }
    }
    /// The verifications a configuration asked the chain's providers for, while `setRequestor` waits for
    /// them (``SetRequestorWait``); nil once it is answered.
    package internal(set) var setRequestorWait: SetRequestorWait? {
        get { held.value.chainBox?.value.setRequestorWait }  // read after every input: no copy of the chain's state
        set { chainState.setRequestorWait = newValue }
    }

    /// The step-ups of the device as the store holds them (``PendingStepUp``; saved with the tokens).
    var stepUps: [PendingStepUp] {
        get { held.value.stepUps }
        set {
            held.value.stepUps = newValue
            savedFieldsWritten = true
        }
    }
    /// With a provider chain, the device's last logout as the store holds it (`StoredTokens.loggedOut`;
    /// saved with the tokens).
    var logoutMark: Timestamp? {
        get { held.value.logoutMark }
        set {
            held.value.logoutMark = newValue
            savedFieldsWritten = true
        }
    }
    /// The step-ups this instance holds or completes, each by one call of its request: when that
    /// request ends, its outcome is published to the store (``publishStepUpOutcomes(_:)``).
    var stepUpCalls: [StepUpCall] {
        _read { yield held.value.stepUpCalls }
        _modify { yield &held.value.stepUpCalls }
    }

    /// The provider chain's state, in one box that is nil while it holds nothing: a machine without a
    /// chain carries one word for it.
    struct ChainState: Sendable, Equatable {
        var views: [String: ProviderView] = [:]
        var accounts: [String: ProviderAccount] = [:]
        var work: [String: AccountWork] = [:]
        var renewedRecently: Set<String> = []
        var announced = Entitlements.none
        var setRequestorWait: SetRequestorWait?

        static let empty = ChainState()
    }

    private var chainState: ChainState {
        get { held.value.chainBox?.value ?? .empty }
        set {
            held.value.chainBox = newValue == .empty ? nil : Boxed(newValue)
            savedFieldsWritten = true
        }
    }

    /// Whether ``handle(_:at:)`` records the rows it takes in ``lastTransitions`` (the engine
    /// turns it on when a monitor listens).
    package var recordsTransitions = false
    /// The rows the last input took, in order (empty unless ``recordsTransitions``).
    package var lastTransitions: [TransitionRow] { lastRecorded.map(\.row) }
    /// The rows the last input took, as recorded (``lastTransitions`` spells them out).
    package private(set) var lastRecorded: [RecordedRow] = []
    /// Lets go of the recorded rows and their storage, once read (a checker that keeps many machines).
    package mutating func forgetTransitions() {
        lastRecorded = []
    }
    /// The input rows are recorded under: the one being handled.
    var rowInput = TransitionInput.anyInput

    var preauthorizations: [PendingPreauthorization] {
        _read { yield held.value.preauthorizations }
        _modify { yield &held.value.preauthorizations }
    }
    /// Every backend request sent and not answered yet, with its attempt: a request the service
    /// asks to retry is sent again as it was (`EntitlementMachine+Retries.swift`).
    var requestsSent: [OperationID: (request: BackendRequest, attempt: Int)] {
        _read { yield held.value.requestsSent }
        _modify { yield &held.value.requestsSent }
    }
    /// Until when the service asked this device to send nothing (a `429`; the distant past when it did
    /// not): requests due before then wait for it (`EntitlementMachine+Retries.swift`).
    var backendPausedUntil: Timestamp {
        get { held.value.backendPausedUntil }
        set { held.value.backendPausedUntil = newValue }
    }
    /// What the machine last saved (or loaded): a save happens when ``storedTokens`` differs.
    package internal(set) var persisted: StoredTokens {
        // Read in place: the box's value never changes (a write puts another box), and the box read is
        // held for the read.
        _read {
            if let box = persistedBox { yield box.value } else { yield StoredTokens.empty }
        }
        set { persistedBox = newValue == .empty ? nil : Boxed(newValue) }
    }
    /// ``persisted``, boxed: it changes only when tokens are saved, and inline it would be a third of the machine.
    var persistedBox: Boxed<StoredTokens>? {
        get { held.value.persistedBox }
        set {
            held.value.persistedBox = newValue
            savedFieldsWritten = true
        }
    }
    /// Whether a field ``storedTokens`` is made of, or ``persisted``, was written since ``handle(_:at:)``
    /// last compared them: an input that wrote none (most calls answered from local state) cannot
    /// need a save, and the comparison is skipped.
    var savedFieldsWritten = true
    /// What storage held before the save the last input asked for: restored when that save fails.
    /// Boxed: it is set only for the input that saves, and an inline copy would make every machine larger.
    var persistedBeforeSave: Boxed<StoredTokens>? {
        get { held.value.persistedBeforeSave }
        set { held.value.persistedBeforeSave = newValue }
    }
    /// When the caches are next swept for expired entries.
    var nextCacheSweep: Timestamp {
        get { held.value.nextCacheSweep }
        set { held.value.nextCacheSweep = newValue }
    }
    /// How often (in engine time) expired cache entries are evicted: at most one sweep per minute,
    /// so a sweep's cost is spread however many inputs arrive.
    static let cacheSweepInterval = Duration.seconds(60)
    /// The `state` of the last login that expired, so a late redirect is refused as `expired`.
    var expiredFlowState: String? {
        get { held.value.expiredFlowStateBox?.value }
        set { held.value.expiredFlowStateBox = newValue.map(Boxed.init) }
    }
    var now = Timestamp(milliseconds: 0)
    /// The tracking GUID of the last user id hashed (``trackingGUID(_:)``), boxed: inline it would be
    /// 32 bytes of every machine.
    var lastTrackingGUID: Boxed<(userID: String, guid: String)>?
    /// What storage holds when it holds more than this instance took up (another instance's registration
    /// code, a login it did not follow mid-flow): a logout or a cancel here saves over it, so it ends that
    /// too. Nil while this instance's view is the store's.
    var foreignStore: StoredTokens? {
        get { held.value.foreignStoreBox?.value }
        set { held.value.foreignStoreBox = newValue.map(Boxed.init) }
    }
    /// The operation of the last `setRequestor` (its configuration): a provider's session is named by it.
    var configurationOperation: OperationID {
        get { held.value.configurationOperation }
        set { held.value.configurationOperation = newValue }
    }
    /// How many configurations failed in a row (the pause before a call configures again doubles with each).
    var configurationFailures: UInt16 {
        get { held.value.configurationFailures }
        set { held.value.configurationFailures = newValue }
    }

    /// Creates a machine in `unconfigured` / `unknown`.
    package init(settings: EngineSettings = EngineSettings(), deviceID: String) {
        self.init(sharing: Boxed(settings), deviceID: deviceID)
    }

    /// Creates a machine whose settings are `settings`' value, shared with other machines (a host's).
    package init(sharing settings: Boxed<EngineSettings>, deviceID: String) {
        held = CopyOnWrite(Held(sharedSettings: settings, deviceID: deviceID))
    }

    /// Whether ``persisted`` was left out of this resting machine because it was ``storedTokens`` (``resting()``).
    var persistedLeftOut: Bool {
        get { held.value.persistedLeftOut }
        set { held.value.persistedLeftOut = newValue }
    }

    // MARK: - Input

    /// Feeds one input observed at `now` and returns what to do: its `MachineStep` (the save that must
    /// hold first, the effects in order, the secrets to draw and the held calls to feed back).
    package mutating func handle(_ input: Input, at now: Timestamp) -> MachineStep {
        self.now = now
        lastRecorded.removeAll(keepingCapacity: true)
        rowInput = input.transitionInput
        let saveFailed = if case .storageWriteFailed = input { true } else { false }
        if !saveFailed, persistedBeforeSave != nil { persistedBeforeSave = nil }
        if now >= nextCacheSweep { evictExpiredCacheEntries() }
        // Secrets held before the input: a flow the input ends forgets its own.
        let echoable = Self.bringsOutsideText(input) ? secretsHeld : []
        let drawingBefore = regions.authentication.flowDrawingSecrets
        let callsParked = !queue.isEmpty && configuration.kind == .configured
        let followedBefore = configuration.configuredRequestorID
        var step = MachineStep()
        if case .callReceived(let id, .setRequestor(let requestorID, _)) = input {
            // The service-provider URLs are the transport's business (the V2 client's base URL).
            (step.effects, step.save) = setRequestorCalled(id, requestorID: requestorID)
        } else {
            step.effects = transition(input)
        }
        let answered = input.answeredOperation
        let answeredSetRequestor = setRequestorWait == nil ? nil : answerSetRequestorIfVerified()
        if let answeredSetRequestor { step.effects.append(answeredSetRequestor) }
        if !stepUpCalls.isEmpty { publishStepUpOutcomes(step.effects) }
        if !echoable.isEmpty { step.effects = Self.concealing(echoable + secretsHeld, in: step.effects) }
        if hasProviderChain, let changed = announceEntitlements() { step.effects.append(changed) }
        noteRequestsSent(&step.effects)
        // The answered request's deadline cancelled first, each request sent followed by its own.
        if step.effects.contains(where: { $0.request != nil }) {
            step.effects = withRequestDeadlines(step.effects, cancelling: answered)
        } else if let answered {
            step.effects.insert(.cancelTimer(.requestDeadline(answered)), at: 0)
        }
        // Persistence is automatic: whatever the input changed is saved once, before any callback,
        // so a call the delegate makes to another instance already sees it.
        // After a failed save the next save waits for the next input (no retry loop).
        if !saveFailed, case .configured(let configuration) = configuration, savedFieldsWritten {
            let stored = StoredAuthentication(authentication)
            // The saved snapshot read through its box (``persisted``'s accessor is a coroutine, which allocates its frame).
            let differs = if let saved = persistedBox { storedTokensDiffer(from: saved.value, stored) } else { storedTokensDiffer(from: .empty, stored) }
            if differs {
                dropLapsedLogoutMark()
                step.save = persist(storedTokens(stored), configuration)
            }
            savedFieldsWritten = false
        }
        // A flow that came to draw its secrets (a login or logout preparing) has the shell draw them.
        if let drawing = regions.authentication.flowDrawingSecrets, drawing != drawingBefore { step.secretsToDraw = [drawing] }
        // Calls wait in the queue only until a requestor is configured (and, configured, while an account
        // finds out what its token grants): then they run, in order.
        if case .configured = configuration, !queue.isEmpty, setRequestorWait == nil, !findingOutWhatATokenGrants {
            if callsParked, answeredSetRequestor == nil { stayConfiguration(.accountVerified, input: .anyInput, .runQueue) }
            step.resubmitted = queue
            queue.removeAll()
        }
        let followed = configuration.configuredRequestorID
        if followed != followedBefore { step.storeFollowing = followed.map { .follow(requestorID: $0) } ?? .stop }
        return step
    }

    /// The regions' transitions for one input other than `setRequestor`: the step's effects
    /// (``handle(_:at:)`` adds the save, the secrets to draw and the calls to resubmit, which follow
    /// from the states the regions moved to).
    mutating func transition(_ input: Input) -> [Action] {
        if let retry = retryAsked(by: input) { return retry }
        switch input {
        case .callReceived(_, .setRequestor):
            return []  // handled by `handle(_:at:)`, which keeps its save
        case .callReceived(let id, let call):
            return callReceived(id, call)
        case .optionsChanged(let options):
            recordCall()
            self.options = options
            return []
        case .configurationLoaded(let operation, let configuration, let stored, let others):
            return configurationLoaded(operation, configuration, stored, others: others)
        case .configurationFailed(let operation, let error):
            return configurationFailed(operation, error)
        case .flowSecretsDrawn(let flow, let secrets):
            return flowSecretsDrawn(flow, secrets)
        case .backendAnswered(let operation, let response):
            return backendFinished(operation, .success(response))
        case .backendFailed(let operation, let error):
            return backendFinished(operation, .failure(error))
        case .providerAnswered(let operation, let result):
            return providerAnswered(operation, result)
        case .timerFired(.retry(let operation)):
            return resend(operation)
        case .timerFired(.providerVerification(let provider)):
            return verificationDue(provider)
        case .timerFired(.stepUp(let answered)):
            return stepUpTimedOut(answered)
        case .timerFired(.requestDeadline(let operation)):
            return requestDeadlinePassed(operation)
        case .timerFired(.renewalElsewhere(let provider)):
            guard case .configured(let configuration) = configuration else { return [] }
            return renewalElsewhereEnded(provider, configuration)
        case .timerFired(let timer):
            return timerFired(timer)
        case .storageChanged(let stored):
            // The accounts first: the authentication's own view (kept mid-flow) is judged with them.
            let adopted = adoptProviderAccounts(stored)
            return adopted + storageChanged(stored)
        case .storageWriteFailed(let reason):
            return storageWriteFailed(reason)
        case .callNotSaved(let id, _, let reason):
            recordCall(nil, .status)
            return refuse(id, .notSaved(Redactor.redact(String(reason.prefix(200)))))
        case .callNotRead(let id, _, let reason):
            recordCall(nil, .status)
            return refuse(id, .notRead(Redactor.redact(String(reason.prefix(200)))))
        case .renewalNotMarked(let provider, let reason):
            return renewalNotMarked(provider, reason: Redactor.redact(String(reason.prefix(200))))
        case .platformPickerAnswered(let flow, let answer):
            return platformPickerAnswered(flow, answer)
        case .platformSignInChecked(let operation, let assertion):
            return platformSignInChecked(operation, assertion)
        case .providerChoiceAbandoned(let flow):
            return providerChoiceAbandoned(flow)
        }
    }

    // MARK: - Calls

    /// Holds `call` in the queue until `setRequestor` is answered (`condition` says why it waits), or
    /// refuses it when the queue is full.
    private mutating func holdUntilSetRequestorAnswered(_ id: CallID, _ call: EntitlementCall, _ condition: TransitionGuard) -> [Action] {
        guard queue.count < settings.queueLimit else {
            stayConfiguration(.queueFull, .status)
            return refuse(id, .queueFull(limit: settings.queueLimit))
        }
        stayConfiguration(condition, .enqueue)
        queue.append(QueuedCall(id: id, call: call))
        return []
    }

    private mutating func callReceived(_ id: CallID, _ call: EntitlementCall) -> [Action] {
        switch configuration {
        case .unconfigured, .configuring, .signingIn:
            return holdUntilSetRequestorAnswered(id, call, .queueHasRoom)
        case .failed(let requestorID, _, let retryAt):
            guard now >= retryAt else {
                stayConfiguration(.retryNotDue, .failCall)
                return failWithoutConfiguration(id, call)
            }
            return configureAgain(requestorID, for: QueuedCall(id: id, call: call))
        case .configured where setRequestorWait != nil:
            // Configured, but `setRequestor` is not answered before the providers said what they verify.
            return holdUntilSetRequestorAnswered(id, call, .verifyingProviders)
        case .configured where call.dependsOnProviderViews && findingOutWhatATokenGrants && queue.count < settings.queueLimit:
            // An account here holds a token it has not verified yet (adopted from another instance, signed in
            // or renewed here) and is finding out what it grants: the call waits for that answer, as calls
            // wait for the verification at `setRequestor`, rather than be decided without it.
            stayConfiguration(.accountUnverified, .enqueue)
            queue.append(QueuedCall(id: id, call: call))
            return []
        case .configured(let configuration):
            let expired = expireAuthenticationIfNeeded(configuration)
            let answer: [Action]
            switch call {
            case .setRequestor: answer = []  // handled before the regions
            case .checkAuthentication: answer = checkAuthentication(id)
            case .getAuthentication(let force, let data): answer = getAuthentication(id, force: force, data: data, configuration)
            case .setSelectedProvider(let providerID):
                if providerID == nil { saveOverForeignStore() }
                answer = setSelectedProvider(id, providerID, configuration)
            case .handleExternalURL(let url): answer = handleExternalURL(id, url, configuration)
            case .getSelectedProvider:
                recordCall(.localAnswer, .selectedProvider)
                answer = [.emit(.selectedProvider(currentProvider(configuration)), answering: [id])]
            case .checkAuthorization(let resource, let data):
                answer = requestAuthorization(id, resource: resource, data: data, isCheck: true, configuration)
            case .getAuthorization(let resource, let data):
                answer = requestAuthorization(id, resource: resource, data: data, isCheck: false, configuration)
            case .checkPreauthorizedResources(let resources, let cache):
                answer = checkPreauthorizedResources(id, resources, cache: cache, configuration)
            case .getMetadata(let key): answer = getMetadata(id, key, configuration)
            case .logout:
                saveOverForeignStore()
                answer = logout(id, configuration)
            case .signIn(let provider, let credentials): answer = signIn(id, provider, credentials, configuration)
            case .signOut(let provider): answer = signOut(id, provider, configuration)
            case .completeStepUp(let resource, let succeeded): answer = completeStepUp(id, resource, succeeded: succeeded, configuration)
            }
            // Most calls find the authentication unexpired: their answer is returned as it was made.
            return expired.isEmpty ? answer : expired + answer
        }
    }

    /// The requestor's configuration failed and its pause is over: `call` is held while the engine
    /// configures again, as for a `setRequestor` nobody made (its `setRequestorComplete` answers no call).
    private mutating func configureAgain(_ requestorID: String, for call: QueuedCall) -> [Action] {
        queue.append(call)
        let operation = nextOperation(.configuration)
        configurationOperation = operation
        moveConfiguration(
            to: .configuring(requestorID: requestorID, operation: operation, calls: []), .retryDue, .enqueue, .loadConfiguration)
        return [
            .log(.configurationRetried(requestorID: requestorID, failures: Int(configurationFailures))),
            .loadConfiguration(
                operation, .configuration(RequestContext(requestorID: requestorID, deviceID: deviceID, options: options))),
        ]
    }

    /// Each call's documented failure when no requestor could be configured.
    mutating func failWithoutConfiguration(_ id: CallID, _ call: EntitlementCall) -> [Action] {
        let why = "The requestor is not configured."
        switch call {
        case .setRequestor: return []
        case .checkAuthentication, .logout: return authenticationStatus(0, ErrorCode.userNotAuthenticated, answering: [id])
        case .getAuthentication: return authenticationStatus(0, ErrorCode.genericAuthentication, answering: [id])
        case .setSelectedProvider: return authenticationStatus(0, ErrorCode.providerNotSelected, answering: [id])
        case .handleExternalURL: return refuse(id, .requestorNotConfigured)
        case .getSelectedProvider: return [.emit(.selectedProvider(nil), answering: [id])]
        case .checkAuthorization(let resource, _), .getAuthorization(let resource, _):
            return authorizationFailed(resource, ErrorCode.genericAuthorization, why, answering: [id])
        case .checkPreauthorizedResources: return [.emit(.preauthorizedResources([]), answering: [id])]
        case .getMetadata(let key): return [.emit(.setMetadataStatus(nil, encrypted: false, key: key), answering: [id])]
        case .completeStepUp(let resource, _): return refuse(id, .noStepUpPending(resource: resource))
        case .signIn(let provider, _), .signOut(let provider):
            return [.emit(.providerSignInStatus(provider: provider, signedIn: false, errorCode: ErrorCode.providerUnknownError, message: why), answering: [id])]
        }
    }

    // MARK: - Recording transitions

    /// Records a row (when recording is on).
    mutating func record(
        _ region: TransitionRow.Region, from: String, to: String, input: TransitionInput? = nil, _ condition: TransitionGuard?,
        _ actions: [TransitionAction]
    ) {
        guard recordsTransitions else { return }
        lastRecorded.append(RecordedRow(region: region, from: from, input: input ?? rowInput, condition: condition, to: to, actions: actions))
    }

    /// Records a row of one resource's authorization machine. Not inlined, nor ``recordCall``: inlined,
    /// they crash Swift 6.3.1's optimizer (an ownership check in CopyPropagation).
    @inline(never)
    mutating func recordAuthorization(
        from: AuthorizationRequest.Kind, to: AuthorizationRequest.Kind, _ condition: TransitionGuard? = nil,
        _ actions: TransitionAction...
    ) {
        record(.authorization, from: from.rawValue, to: to.rawValue, condition, actions)
    }

    /// Records a row of the calls region.
    @inline(never)
    mutating func recordCall(
        from: PendingCallKind = .idle, to: PendingCallKind = .idle, _ condition: TransitionGuard? = nil,
        _ actions: TransitionAction...
    ) {
        record(.calls, from: from.rawValue, to: to.rawValue, condition, actions)
    }
}
