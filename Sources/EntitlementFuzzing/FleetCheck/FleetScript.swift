import EntitlementEngine
import EntitlementSupport

/// An interleaving of ``FleetEvent``s as a script `entitle run` plays: what `entitle check` prints for a
/// broken promise, to keep as a test that fails until the engine is fixed and passes from then on.
///
/// ```text
/// # broken: node b signed the device in after a logout or cancel, with no login since: …
/// fleet check --nodes 2 --calls 3 --user 2 --faults 1
/// > @main setSelectedProvider acme-cable
/// #   < @main navigateToUrl(…)
/// ! backend answers @main request op#2
/// > @b logout
/// expect every promise kept
/// ```
///
/// The first line that is not a comment (`#`) names the check and its bounds (the flags of `entitle
/// check`: the calls, browser actions and faults the events may use). Each event line is one event as
/// the check prints it; the script plays them from the first state — the real machines, with the check's
/// model of each node's shell and of the world — and fails at the first line that cannot happen there or
/// that breaks a promise, or when a promise breaks once everything settles after the last. The callbacks
/// each event led to are comments (`#   < …`): they say what happened, and a fix may change them.
package struct FleetScript: Sendable {
    /// The bounds the events are played within.
    package var bounds: FleetChecker.Bounds
    /// The event lines, with their line numbers in the text.
    package var events: [(line: Int, text: String)]

    /// Whether `text` is a fleet script (its first line that is not a comment begins `fleet check`), not a
    /// scenario.
    package static func isFleetScript(_ text: String) -> Bool {
        firstLine(of: text)?.text.hasPrefix(header) == true
    }

    /// Reads a fleet script: its header, its event lines, and `expect every promise kept` last.
    package init(parsing text: String) throws(FleetScriptError) {
        guard let (headerLine, headerText) = Self.firstLine(of: text), headerText.hasPrefix(Self.header) else {
            throw FleetScriptError(line: 1, message: "a fleet script begins `\(Self.header)` and its bounds")
        }
        bounds = try Self.bounds(in: headerText, line: headerLine)
        events = []
        var expected = false
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where index + 1 > headerLine {
            let line = String(raw.trimming(" \t\r"))
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            guard !expected else { throw FleetScriptError(line: index + 1, message: "nothing may follow `\(Self.expectation)`") }
            if line == Self.expectation {
                expected = true
            } else if line.hasPrefix(">") || line.hasPrefix("!") {
                events.append((index + 1, line))
            } else {
                throw FleetScriptError(line: index + 1, message: "an event (`>` or `!`), a comment (`#`) or `\(Self.expectation)`: `\(line.prefix(80))`")
            }
        }
        guard expected else { throw FleetScriptError(line: headerLine, message: "a fleet script ends `\(Self.expectation)`") }
    }

    /// The script of `counterexample` within `bounds`: the broken promises as comments, the header, each
    /// event followed by the callbacks it led to (comments), and the expectation.
    package static func text(of counterexample: FleetChecker.Counterexample, within bounds: FleetChecker.Bounds) -> String {
        var lines = counterexample.problems.map { "# broken: \($0)" }
        if counterexample.atQuiescence { lines.append("# (once everything settles after the last event)") }
        lines.append(headerLine(bounds))
        let events = Set(counterexample.events.map(\.description))
        let script = counterexample.script.isEmpty ? counterexample.events.map(\.description) : counterexample.script
        for line in script { lines.append(events.contains(line) ? line : "#   " + line) }
        lines.append(expectation)
        return lines.joined(separator: "\n") + "\n"
    }

    /// Plays the events: nil when every promise held, else what failed, with the line.
    package func run() -> String? {
        run(from: FleetModel(nodes: bounds.nodes, bounds: bounds))
    }

    /// Plays the events from `first` (a test's state).
    func run(from first: FleetModel) -> String? {
        var state = first
        state.tellsScript = true
        var played: [String] = []
        for (line, text) in events {
            let enabled = state.enabledEvents
            guard let event = enabled.first(where: { $0.description == text }) else {
                return "line \(line): `\(text)` cannot happen here; what can:\n"
                    + enabled.map { "  \($0.description)" }.joined(separator: "\n")
            }
            state.apply(event)
            played += [text] + state.told
            if !state.problems.isEmpty {
                return "line \(line): a promise broke at `\(text)`:\n" + Self.report(state.problems, played)
            }
        }
        if let problems = state.problemsOnceSettled() {
            return "a promise broke once everything settled after the last event:\n" + Self.report(problems, played)
        }
        return nil
    }

    private static let header = "fleet check"
    private static let expectation = "expect every promise kept"

    private static func report(_ problems: [String], _ played: [String]) -> String {
        (problems.map { "  broken: \($0)" } + ["  after:"] + played.map { "    \($0)" }).joined(separator: "\n")
    }

    private static func headerLine(_ bounds: FleetChecker.Bounds) -> String {
        "\(header) --nodes \(bounds.nodes) --calls \(bounds.calls) --user \(bounds.userActions) --faults \(bounds.faults)"
            + (bounds.secondScreen ? " --second-screen" : "") + (bounds.stepUp ? " --step-up" : "") + (bounds.subscription ? " --subscription" : "") + (bounds.lostWrites ? " --lost-writes" : "")
            + (bounds.platform ? " --platform" : "") + (bounds.authorize ? " --authorize" : "") + (bounds.preauthorize ? " --preauthorize" : "")
            + (bounds.lateAnswers ? " --late-answers" : "")
    }

    private static func firstLine(of text: String) -> (line: Int, text: String)? {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw.trimming(" \t\r"))
            if !line.isEmpty, !line.hasPrefix("#") { return (index + 1, line) }
        }
        return nil
    }

    private static func bounds(in header: String, line: Int) throws(FleetScriptError) -> FleetChecker.Bounds {
        var bounds = FleetChecker.Bounds()
        var words = header.split(separator: " ").dropFirst(2).map(String.init)[...]
        let switches: [String: WritableKeyPath<FleetChecker.Bounds, Bool>] = [
            "--second-screen": \.secondScreen, "--step-up": \.stepUp, "--subscription": \.subscription, "--lost-writes": \.lostWrites,
            "--platform": \.platform, "--authorize": \.authorize, "--preauthorize": \.preauthorize, "--late-answers": \.lateAnswers,
        ]
        while let flag = words.popFirst() {
            if let field = switches[flag] {
                bounds[keyPath: field] = true
                continue
            }
            guard let value = words.popFirst().flatMap({ Int($0) }), (0...16).contains(value) else {
                throw FleetScriptError(line: line, message: "`\(flag)` takes a number from 0 to 16")
            }
            switch flag {
            case "--nodes" where (2...3).contains(value): bounds.nodes = value
            case "--calls": bounds.calls = value
            case "--user": bounds.userActions = value
            case "--faults": bounds.faults = value
            default: throw FleetScriptError(line: line, message: "`\(flag) \(value)`: the bounds are --nodes 2|3, --calls, --user, --faults, --second-screen, --step-up, --subscription, --lost-writes, --platform, --authorize, --preauthorize, --late-answers")
            }
        }
        return bounds
    }
}

/// A fleet script that cannot be read: the line and what is wrong.
package struct FleetScriptError: Error, Sendable, CustomStringConvertible {
    /// The line (from 1).
    package var line: Int
    /// What is wrong.
    package var message: String

    /// `line N: message`.
    package var description: String { "line \(line): \(message)" }
}
