import EntitlementEngine
import EntitlementSimulator

extension ScenarioRun {
    // MARK: - Steps

    /// Runs one step against the engine it addresses.
    mutating func perform(_ step: Step) async throws(Stop) {
        let name = step.engine ?? Scenario.mainEngine
        let tag = label(name)
        switch step.kind {
        case .expect(let expectation):
            guard let observed = engines[name]?.pending.first else {
                throw Stop(expected: tag + describe(expectation), actual: "no callback")
            }
            engines[name]?.pending.removeFirst()
            guard match(expectation, observed) else {
                throw Stop(expected: tag + describe(expectation), actual: tag + observed.redactedDescription)
            }
            noteMatched(observed, at: step.line, tag: tag)
        case .expectNothing:
            if let extra = engines[name]?.pending.first { throw Stop(expected: "no callback", actual: tag + extra.redactedDescription) }
        case .expectInAnyOrder(let expectations):
            try matchInAnyOrder(expectations, engine: name, line: step.line)
        case .expectOneOf(let expectations):
            let tag = label(name)
            let described = expectations.map { describe($0) }.joined(separator: " | ")
            guard let observed = engines[name]?.pending.first else { throw Stop(expected: "\(tag)one of: \(described)", actual: "no callback") }
            engines[name]?.pending.removeFirst()
            guard expectations.contains(where: { match($0, observed) }) else {
                throw Stop(expected: "\(tag)one of: \(described)", actual: tag + observed.redactedDescription)
            }
            noteMatched(observed, at: step.line, tag: tag)
        case .call(let call):
            try requireNothingPending()
            history.append("\(step.line): \(step.text)")
            try await perform(call, on: name)
            await absorb()
        case .act(let action):
            try requireNothingPending()
            history.append("\(step.line): \(step.text)")
            try await perform(action, on: name)
            await absorb()
        }
    }

    /// Every engine's callbacks must have been expected before the next `>` or `!` step.
    func requireNothingPending() throws(Stop) {
        for name in scenario.engineNames {
            if let extra = engines[name]?.pending.first {
                throw Stop(expected: "every earlier callback to be expected first", actual: "unexpected \(label(name))\(extra.redactedDescription)")
            }
        }
    }

    /// Lets every engine settle — and the calls their app made from inside callbacks run — and
    /// queues what each emitted (minus ignored callbacks; with the backend requests in between
    /// when the script checks them).
    mutating func absorb() async {
        var settling = true
        while settling {
            settling = false
            for name in scenario.engineNames {
                guard let engine = engines[name] else { continue }
                await engine.session.settle()
                if await engine.app.finishCalls() { settling = true }
            }
        }
        for name in scenario.engineNames {
            guard let ledger = engines[name]?.session.ledger else { continue }
            let observed = ledger.takeEntries().compactMap { entry -> ObservedCallback? in
                switch entry {
                case .callback: ObservedCallback(entry)
                case .backendRequest: scenario.checksBackendRequests ? ObservedCallback(entry) : nil
                case .providerRequest: scenario.checksProviderRequests ? ObservedCallback(entry) : nil
                }
            }
            let ignored = scenario.ignored
            engines[name]?.pending += observed.filter { !ignored.contains($0.name) }
        }
    }

    /// The next `expectations.count` callbacks of engine `name`, each matched to the first
    /// expectation of the block still unmatched that it fits.
    mutating func matchInAnyOrder(_ expectations: [Expectation], engine name: String, line: Int) throws(Stop) {
        var unmatched = expectations
        let tag = label(name)
        while !unmatched.isEmpty {
            let described = unmatched.map { describe($0) }.joined(separator: "; ")
            guard let observed = engines[name]?.pending.first else {
                throw Stop(expected: "\(tag)in any order: \(described)", actual: "no callback")
            }
            engines[name]?.pending.removeFirst()
            var found: Int?
            for (index, expectation) in unmatched.enumerated() where match(expectation, observed) {
                found = index
                break
            }
            guard let index = found else {
                throw Stop(expected: "\(tag)one of, in any order: \(described)", actual: tag + observed.redactedDescription)
            }
            unmatched.remove(at: index)
            noteMatched(observed, at: line, tag: tag)
        }
    }

    /// Notes a matched callback (or `⇢` request) in the history a failure quotes.
    private mutating func noteMatched(_ observed: ObservedCallback, at line: Int, tag: String) {
        history.append("\(line): \(observed.name.hasPrefix("⇢") ? "" : "< ")\(tag)\(observed.redactedDescription)")
    }
}
