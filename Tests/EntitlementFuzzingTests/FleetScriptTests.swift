import EntitlementEngine
import Foundation
import EntitlementTestSupport
import Testing

@testable import EntitlementFuzzing

/// A broken promise `entitle check` finds prints as a script `entitle run` plays (``FleetScript``): it fails
/// while the promise breaks and passes once the engine keeps it; the scripts kept in `Tests/FleetScripts`
/// keep every promise.
@Suite("Fleet scripts")
struct FleetScriptTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FleetScripts")
    static let bounds = FleetChecker.Bounds(nodes: 2, depth: 8, calls: 3, userActions: 2, faults: 1)
    static let events: [FleetEvent] = [
        .call(node: 0, .chooseProvider), .answer(node: 0, OperationID(2, owner: nil)), .logIn(page: 0), .redirect(0, node: 0),
        .call(node: 1, .cancel),
    ]

    /// The printed counterexample reads back as its events, plays as the check played them, and fails
    /// with the broken promise where the world breaks it (here a call a node leaves waiting).
    @Test func aCounterexamplePrintsAsAScriptThatFailsWhileThePromiseBreaks() throws {
        let replayed = FleetChecker(bounds: Self.bounds).replay(Self.events)
        let counterexample = FleetChecker.Counterexample(
            events: Self.events, script: replayed.script, atQuiescence: true, problems: ["a promise, as the check words it"])
        let text = FleetScript.text(of: counterexample, within: Self.bounds)
        #expect(text.hasPrefix("# broken: a promise, as the check words it\n# (once everything settles after the last event)\nfleet check --nodes 2"))
        #expect(text.contains("\n#   < @b setAuthenticationStatus(0, \"PROVIDER_NOT_SELECTED_ERROR\")\n"), "the callbacks, as comments:\n\(text)")
        #expect(FleetScript.isFleetScript(text))
        let script = try FleetScript(parsing: text)
        #expect(script.bounds.nodes == 2 && script.bounds.calls == 3 && script.bounds.userActions == 2 && script.bounds.faults == 1)
        expectEqual(script.events.map(\.text), Self.events.map(\.description))
        #expect(script.run() == nil, "the engine keeps every promise in this interleaving")

        var broken = FleetModel(nodes: 2, bounds: Self.bounds)
        broken.nodes[1].waiting.append(CallID(9))
        let failure = try #require(script.run(from: broken))
        #expect(failure.hasPrefix("a promise broke once everything settled after the last event:"), "\(failure)")
        #expect(failure.contains("node b leaves calls [#9] unanswered once everything settled"), "\(failure)")
        #expect(failure.contains("> @b setSelectedProvider nil"), "what was played:\n\(failure)")
    }

    /// A line that cannot happen where it stands fails the script, with what can.
    @Test func anEventThatCannotHappenThereFailsWithWhatCan() throws {
        let text = "fleet check --nodes 2\n> @main setSelectedProvider acme-cable\n! backend answers @main request op#9\nexpect every promise kept\n"
        let failure = try #require(try FleetScript(parsing: text).run())
        #expect(failure.hasPrefix("line 3: `! backend answers @main request op#9` cannot happen here; what can:"), "\(failure)")
        #expect(failure.contains("\n  ! backend answers @main request op#2\n"), "\(failure)")
    }

    /// A script that is not one is refused with its line: no header, bounds out of range, a line that is
    /// no event, no expectation, anything after it.
    @Test(arguments: [
        ("> @main logout\nexpect every promise kept\n", 1, "begins `fleet check`"),
        ("fleet check --nodes 4\nexpect every promise kept\n", 1, "--nodes 4"),
        ("fleet check --calls\nexpect every promise kept\n", 1, "takes a number"),
        ("fleet check --depth 3\nexpect every promise kept\n", 1, "the bounds are"),
        ("# a comment\nfleet check\n< @main setAuthenticationStatus(1, \"\")\nexpect every promise kept\n", 3, "an event"),
        ("fleet check\n> @main logout\n", 1, "ends `expect every promise kept`"),
        ("fleet check\nexpect every promise kept\n> @main logout\n", 3, "nothing may follow"),
    ])
    func whatIsNoFleetScriptIsRefusedWithItsLine(text: String, line: Int, message: String) {
        #expect(throws: FleetScriptError.self) { try FleetScript(parsing: text) }
        do {
            _ = try FleetScript(parsing: text)
        } catch {
            #expect(error.line == line && error.message.contains(message), "\(error)")
        }
    }

    /// The counterexamples found against 0.9.2, kept as fleet scripts: each keeps every promise now.
    @Test func everyKeptFleetScriptKeepsEveryPromise() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasSuffix(".scenario") }.sorted()
        #expect(files.count >= 2, "\(files)")
        for file in files {
            let text = try String(contentsOf: Self.folder.appendingPathComponent(file), encoding: .utf8)
            let script = try FleetScript(parsing: text)
            #expect(!script.events.isEmpty, "\(file)")
            #expect(script.run() == nil, "\(file): \(script.run() ?? "")")
        }
    }
}
