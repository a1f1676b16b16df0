import EntitlementEngine

/// A bounded exhaustive model check of a fleet: two or three nodes of one device sharing one token store,
/// one user, the service, the clock and faults (``FleetEvent``). Breadth first, it takes **every** event
/// in **every** state up to ``Bounds/depth`` events, and never explores a state twice (states are known by
/// a 64-bit hash of every node's machine and shell, the store, the service, the browser and the clock: orders of independent events that lead to the same state are
/// explored once). After every event it checks:
///
/// - every call answered at most once;
/// - every transition a machine took is in the transition table;
/// - no node tells the device it is signed in (status 1, a media token) after a logout or a cancel of its
///   login, unless the user logged in on a page opened since;
/// - a node speaks only for calls it holds: no `setAuthenticationStatus` answering no call from a node
///   where no call of the device waits (but for a registration code the app showed before the node started
///   again, whose end it tells);
/// - on a TV (``Bounds/secondScreen``), when nothing failed and answers are not late (then the node cannot
///   know), no node shows the device a registration code the user already entered, or one the service no
///   longer holds (the activation page refuses both);
/// - with the platform's account (``Bounds/platform``), the same promise about sign-ins: a sign-in through
///   the platform's picker is a login made when the user signs in, and a node's silent sign-in at
///   `setRequestor` one made when it completes (a logout signs out of the app only);
/// - with the TV provider's authorization (``Bounds/authorize``): no node hands out, after a logout, a media
///   token the service decided before it;
/// - with pre-authorization (``Bounds/preauthorize``), the sign-in promise about its answers too: no node
///   answers a pre-authorization with a permitted resource — from the service or its cache — after a logout
///   or cancel with no login since;
/// - with step-ups (``Bounds/stepUp``): no node asks the app for a step-up the store does not hold, no
///   transaction is presented twice, no node hands out a media token the provider granted after a
///   logout for a step-up asked before it, and none hands out, after a logout, a plain server
///   authorization (the provider's open resource) asked for before it;
///
/// and, from every state, once everything settles (the store back, every request answered, every deadline
/// passed, every node told of the last save):
///
/// - every call answered (none left waiting on a flow no node runs);
/// - every node answers `checkAuthentication` alike, as the store says, when the device asks each twice
///   round (convergence);
/// - with nothing failing (no fault, no request past its deadline), a login the user made on the newest
///   login page — opened after the device last chose, cancelled or logged out — whose redirect reached a
///   node before the login's deadline leaves the device signed in (progress).
///
/// Settling is one path (the store back first, then the oldest answer, a due timer, the clock, a node told of
/// a save, a provider dialog closed): a state the search goes on from settles through
/// its first settling event, which the search takes from it too, so its settling is checked in that
/// successor; the states of the last level are settled to the end, in place, and counted, not kept.
///
/// Breadth first, the first violation found is one of the shortest: its events are the counterexample (one
/// broken once everything settled may end with the first settling event).
package struct FleetChecker: Sendable {
    /// How far the check goes.
    package struct Bounds: Sendable, Hashable {
        /// Nodes of the device (2 or 3).
        package var nodes: Int
        /// Events per interleaving.
        package var depth: Int
        /// Device calls per interleaving.
        package var calls: Int
        /// User actions in the browser per interleaving.
        package var userActions: Int
        /// Faults per interleaving (a failed request, the store down, a node restarted).
        package var faults: Int
        /// Whether the device is a TV that shows a registration code for a second screen (cookbook E)
        /// instead of opening login pages.
        package var secondScreen: Bool
        /// Whether the device authorizes a resource a PIN protects, through a provider that asks for a
        /// step-up (and logs out), instead of logging in with a TV provider.
        package var stepUp: Bool
        /// Whether a fault may also be the store forgetting the last write it acknowledged (a Redis
        /// restarted without persistence, a failover to a replica behind).
        package var lostWrites: Bool
        /// Whether the device signs in to a direct subscription (a provider that signs in and renews its
        /// token) and reads an issue through it, instead of logging in with a TV provider.
        package var subscription: Bool
        /// Whether the device has the platform's TV-provider account (cookbook D): a login starts at the
        /// platform's picker, where the user signs in with the MVPD (the platform stays signed in, and a
        /// node's `setRequestor` signs the device in with it silently), picks another provider or cancels.
        package var platform: Bool
        /// Whether the device also asks the TV provider's authorization of a resource (cookbook F): a
        /// decision the service makes while the device's profile lives, its media token handed out.
        package var authorize: Bool
        /// Whether the device also pre-authorizes that resource (`checkPreauthorizedResources`, the cache
        /// allowed): the service permits it while the device's profile lives, and a node may answer from its cache.
        package var preauthorize: Bool
        /// Whether the service's answer to a backend request (and a provider's to a step-up's or a
        /// subscription's request) reaches its node as an event of its own, after the service acted on the
        /// request: other events (a logout through another node, a fault losing the answer, the node's
        /// deadline) may come between.
        package var lateAnswers: Bool

        /// Creates bounds.
        package init(
            nodes: Int = 2, depth: Int = 10, calls: Int = 3, userActions: Int = 2, faults: Int = 1, secondScreen: Bool = false,
            stepUp: Bool = false, lostWrites: Bool = false, subscription: Bool = false, platform: Bool = false, authorize: Bool = false,
            preauthorize: Bool = false, lateAnswers: Bool = false
        ) {
            self.lateAnswers = lateAnswers
            self.authorize = authorize
            self.preauthorize = preauthorize
            self.platform = platform
            self.subscription = subscription
            self.secondScreen = secondScreen
            self.stepUp = stepUp
            self.lostWrites = lostWrites
            self.nodes = min(max(nodes, 1), 3)
            self.depth = max(depth, 0)
            self.calls = max(calls, 0)
            self.userActions = max(userActions, 0)
            self.faults = max(faults, 0)
        }
    }

    /// What a check found.
    package struct Report: Sendable, CustomStringConvertible {
        /// Distinct states reached.
        package var states: Int
        /// Events taken (state to state), the ones that led to known states included.
        package var transitions: Int
        /// The deepest level whose states were all explored.
        package var depth: Int
        /// How long it took.
        package var elapsed: Duration
        /// States at each depth, from 0.
        package var statesByDepth: [Int]
        /// The shortest interleaving that breaks a promise, and what it breaks; nil when none does.
        package var counterexample: Counterexample? { counterexamples.first }
        /// The shortest interleaving for each promise broken in its own way (one unless the check keeps
        /// going after the first).
        package var counterexamples: [Counterexample] = []

        /// States per second.
        package var statesPerSecond: Double {
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return seconds > 0 ? Double(states) / seconds : 0
        }

        /// One line: states, transitions, depth, time, speed, verdict.
        package var description: String {
            let verdict = counterexample == nil ? "every promise kept" : "a promise broken"
            return "\(states) states, \(transitions) transitions, depth \(depth), \(elapsed), "
                + "\(Int(statesPerSecond)) states/s: \(verdict)"
        }
    }

    /// An interleaving that breaks a promise.
    package struct Counterexample: Sendable, CustomStringConvertible {
        /// The events, in order.
        package var events: [FleetEvent]
        /// The events as a script: each event, then the callbacks it led to (tracking data left out).
        package var script: [String] = []
        /// Whether the promise broke once everything settled after them (rather than at the last event).
        package var atQuiescence: Bool
        /// What broke.
        package var problems: [String]

        /// The problems, then the events as a script.
        package var description: String {
            problems.map { "broken: \($0)" }.joined(separator: "\n") + "\n"
                + (script.isEmpty ? events.map(\.description) : script).map { "  \($0)" }.joined(separator: "\n")
                + (atQuiescence ? "\n  (then everything settles: the store back, every answer, every deadline)" : "")
        }
    }

    /// The bounds.
    package var bounds: Bounds
    /// Whether the check goes on after a broken promise, to find the shortest interleaving of every other
    /// way a promise breaks (a state that breaks one is not explored further).
    package var keepsGoing: Bool

    /// A checker within `bounds`.
    package init(bounds: Bounds = Bounds(), keepsGoing: Bool = false) {
        self.bounds = bounds
        self.keepsGoing = keepsGoing
    }

    /// Explores every interleaving within the bounds; stops at the first broken promise unless it
    /// ``keepsGoing``. `progress` hears each depth finished (depth, states so far).
    package func run(progress: (Int, Int) -> Void = { _, _ in }) -> Report {
        let clock = ContinuousClock()
        let started = clock.now
        var first = FleetModel(nodes: bounds.nodes, bounds: bounds)
        var report = Report(states: 1, transitions: 0, depth: 0, elapsed: .zero, statesByDepth: [1])
        var kinds: Set<String> = []
        func found(_ counterexample: Counterexample) {
            guard kinds.insert(Self.kind(of: counterexample.problems)).inserted else { return }
            var scripted = counterexample
            scripted.script = replay(counterexample.events).script
            report.counterexamples.append(scripted)
        }
        // Each explored state's parent and the event that led to it, to print a counterexample.
        var trail: [(parent: Int32, event: FleetEvent?)] = [(-1, nil)]
        var visited: Set<Int> = [first.fingerprint()]
        if let problems = first.problemsOnceSettled() {
            found(Counterexample(events: [], atQuiescence: true, problems: problems))
        }
        var frontier: [Explored] = [Explored(state: first, trail: 0)]
        var depth = 0
        while keepsGoing || report.counterexamples.isEmpty, depth < bounds.depth, !frontier.isEmpty {
            var next: [Explored] = []
            var reached = 0
            // States of the last level are checked and counted, not kept: nothing is explored from them.
            let goesOn = depth + 1 < bounds.depth
            frontier.reverse()
            search: while let explored = frontier.popLast() {
                let (state, index) = (explored.state, explored.trail)
                let events = state.enabledEvents
                if let deferred = explored.settledThrough, !events.contains(deferred), let problems = state.problemsOnceSettled() {
                    found(Counterexample(events: Self.events(to: index, in: trail), atQuiescence: true, problems: problems))
                    if keepsGoing { continue } else { break search }
                }
                for event in events {
                    var after = state
                    after.apply(event)
                    report.transitions += 1
                    if !after.problems.isEmpty {
                        found(Counterexample(events: Self.events(to: index, in: trail) + [event], atQuiescence: false, problems: after.problems))
                        if keepsGoing { continue } else { break search }
                    }
                    guard visited.insert(after.fingerprint()).inserted else { continue }
                    reached += 1
                    guard goesOn else {
                        if let problems = (consume after).problemsOnceSettled() {
                            found(Counterexample(events: Self.events(to: index, in: trail) + [event], atQuiescence: true, problems: problems))
                            if keepsGoing { continue } else { break search }
                        }
                        continue
                    }
                    trail.append((index, event))
                    let here = Int32(trail.count - 1)
                    // A state the search goes on from settles through its first settling event, which the
                    // search takes too: what settling it finds, the search finds in that successor.
                    if let (first, searched) = after.settlingEvent, searched {
                        next.append(Explored(state: after, trail: here, settledThrough: first))
                        continue
                    }
                    if let problems = after.problemsOnceSettled() {
                        found(Counterexample(events: Self.events(to: here, in: trail), atQuiescence: true, problems: problems))
                        if keepsGoing { continue } else { break search }
                    }
                    next.append(Explored(state: after, trail: here))
                }
            }
            depth += 1
            report.statesByDepth.append(reached)
            report.states += reached
            if report.counterexamples.isEmpty { report.depth = depth }
            progress(depth, report.states)
            frontier = next
        }
        report.elapsed = clock.now - started
        return report
    }

    /// A state reached, waiting to be explored: its index in the trail, and the settling event whose
    /// successor stands for its settling (nil: it was settled itself).
    private struct Explored {
        var state: FleetModel
        var trail: Int32
        var settledThrough: FleetEvent?
    }

    /// Plays `events` from the first state, as a counterexample lists them: the problems they break (at the
    /// event that breaks one, or once everything settles after the last), or none; and the script of what
    /// happened (each event, then the callbacks it led to).
    package func replay(_ events: [FleetEvent]) -> (problems: [String], script: [String]) {
        var state = FleetModel(nodes: bounds.nodes, bounds: bounds)
        state.tellsScript = true
        var script: [String] = []
        for named in events {
            // Matched as printed: a request is named by its number, and the node's own id carries its owner.
            guard let event = state.enabledEvents.first(where: { $0.description == named.description }) else {
                return (["\(named) cannot happen there"], script)
            }
            state.apply(event)
            script += [event.description] + state.told
            if !state.problems.isEmpty { return (state.problems, script) }
        }
        return (state.problemsOnceSettled() ?? [], script)
    }

    /// A broken promise's kind: its first problem without the names, numbers and callbacks that vary.
    static func kind(of problems: [String]) -> String {
        let first = problems.first ?? ""
        let words = first.prefix { $0 != ":" }.split(separator: " ").filter { word in
            !word.contains("#") && !["main", "b", "c"].contains(word) && !word.contains(where: \.isNumber)
        }
        return words.joined(separator: " ")
    }

    private static func events(to index: Int32, in trail: [(parent: Int32, event: FleetEvent?)]) -> [FleetEvent] {
        var events: [FleetEvent] = []
        var at = index
        while at >= 0, let event = trail[Int(at)].event {
            events.append(event)
            at = trail[Int(at)].parent
        }
        return events.reversed()
    }
}

extension FleetModel {
    /// Lets everything settle — the store back, every request answered, every due timer fired, the clock
    /// past every deadline, every node told of the last save — then asks every node `checkAuthentication`
    /// twice round, and returns what is broken (nil: nothing): calls left waiting, nodes that answer
    /// differently or otherwise than the store says, a login completed in time left signed out, or a
    /// promise broken on the way.
    ///
    /// The search settles the states of its last level this way, and those whose settling starts outside
    /// its bounds; the others settle through their successors (``FleetChecker``). Sparing the states a
    /// clean settling passed through (by their hashes), or keeping what the asking found for each settled
    /// state, was tried and measured no faster: hashing cost what it spared.
    consuming func problemsOnceSettled() -> [String]? {
        var world = self  // the search gives up the states of its last level: those are not copied
        var found: [String] = []
        var settled = false
        for _ in 0..<200 {
            guard let (event, _) = world.settlingEvent else {
                settled = true
                break
            }
            if case .call = event { world.callsLeft += 1 }
            if case .platformPicker = event { world.userActionsLeft += 1 }
            world.apply(event)
            found += world.problems
        }
        if !settled { found.append("the fleet does not settle: it still has work after 200 events") }
        found += world.problemsWhenAsked()
        return found.isEmpty ? nil : found
    }

    /// What a settled fleet breaks when each node follows the store once more and the device asks every
    /// node whether it is signed in, twice round.
    private mutating func problemsWhenAsked() -> [String] {
        var found: [String] = []
        // Each node follows the store once more, as its next input would make it.
        for node in nodes.indices {
            problems = []
            storageCheck(node)
            found += problems
        }
        for (index, node) in nodes.enumerated() where !node.waiting.isEmpty {
            found.append("node \(Self.name(index)) leaves calls \(node.waiting) unanswered once everything settled")
        }
        // The device asks every node whether it is signed in, twice round (a node's first answer may save
        // what it kept in memory while the store was away, which the others then follow).
        var answers: [Int?] = []
        for _ in 0..<2 {
            let version = store.version
            answers = nodes.indices.map { node in
                problems = []
                let status = askedWhetherSignedIn(on: node)
                found += problems
                return status
            }
            // No node saved while answering: asked again, each would answer the same.
            if store.version == version { break }
        }
        let stored = store.tokens.authentication == nil ? 0 : 1
        if answers.contains(where: { $0 != stored }) {
            let said = answers.enumerated().map { "\(Self.name($0.offset)) \($0.element.map(String.init) ?? "no status")" }
            found.append("once everything settled the nodes answer checkAuthentication differently: \(said.joined(separator: ", ")); the store: \(stored)")
        }
        if !sawFailure, newestLoginRedirect != nil, newestLoginDelivered, lastLoginPage >= validFromPage, stored == 0 {
            found.append("the user logged in on the newest login page and its redirect reached a node in time, nothing failing, yet once everything settled the device is signed out")
        }
        return found
    }
}

extension FleetModel {
    /// The next event of settling (nil: settled): the store back, the oldest request answered (or timed
    /// out), a due timer fired, the clock moved to the next deadline, a node told of the last save, a
    /// picker the device shows closed — in that order, so settling is one path. `searched`: whether the
    /// search takes the same event from this state (all but closing the picker, which the app does here
    /// as a duty, beyond the bounds' calls).
    var settlingEvent: (event: FleetEvent, searched: Bool)? {
        if !store.up { return (.storeUp, true) }
        for (index, node) in nodes.enumerated() {
            if let sent = node.requests.first {
                return (now < sent.deadline ? .answer(node: index, sent.operation) : .timeout(node: index, sent.operation), true)
            }
            if let answer = node.answered.first {
                return (now < answer.deadline ? .arrive(node: index, answer.operation) : .timeout(node: index, answer.operation), true)
            }
            if let asked = node.askedProvider.first {
                return (now < asked.deadline ? .answer(node: index, asked.operation) : .timeout(node: index, asked.operation), true)
            }
        }
        for (index, node) in nodes.enumerated() {
            if let timer = node.timers.first(where: { $0.at <= now }) { return (.timer(node: index, timer.id), true) }
        }
        if nextDeadline != nil { return (.advanceClock, true) }
        for (index, node) in nodes.enumerated() where node.knownVersion != store.version {
            return (.look(node: index), true)
        }
        for (index, node) in nodes.enumerated() where node.machine.authentication.isShowingThePicker {
            // The app answers the provider dialog it shows (the cookbook's duty): here, by closing it.
            return (.call(node: index, .cancel), false)
        }
        for (index, node) in nodes.enumerated() where node.platformPicker != nil {
            // So with the platform's picker: the user closes it.
            return (.platformPicker(node: index, .cancel), false)
        }
        return nil
    }

    /// The status `checkAuthentication` on `node` answers (nil: none answered it).
    mutating func askedWhetherSignedIn(on node: Int) -> Int? {
        probe = (node, CallID(nodes[node].lastCall + 1))
        defer { probe = nil }
        probeAnswer = nil
        submit(.checkAuthentication, on: node)
        return probeAnswer
    }
}

extension AuthenticationState {
    /// Whether the device is asked to choose a provider (`displayProviderDialog`).
    fileprivate var isShowingThePicker: Bool {
        if case .login(_, .selectingProvider) = self { true } else { false }
    }
}
