import EntitlementEngine
import EntitlementScenarios
import EntitlementTestSupport
import Foundation
import Testing

@Suite("Scenario runner: exhaustive, deterministic, with readable failures")
struct ScenarioRunnerTests {
    static let header = "ignore sendTrackingData\n> setRequestor sim-requestor\n< setRequestorComplete success\n"

    func run(_ body: String, file: String = "r.scenario") async throws -> ScenarioResult {
        await ScenarioRunner().run(try ScenarioParser.parse(Self.header + body, file: file))
    }

    @Test func aDifferentArgumentFailsAtItsLineWithContext() async throws {
        let result = try await run("> checkAuthentication\n< setAuthenticationStatus 1 \"\"\n")
        let failure = try #require(result.failure)
        expectEqual(failure.line, 5)
        expectEqual(failure.step, "< setAuthenticationStatus 1 \"\"")
        expectEqual(failure.expected, "setAuthenticationStatus \"1\" \"\"")
        expectEqual(failure.actual, "setAuthenticationStatus \"0\" \"USER_NOT_AUTHENTICATED_ERROR\"")
        expectEqual(failure.context, ["2: > setRequestor sim-requestor", "3: < setRequestorComplete \"success\"", "4: > checkAuthentication"])
        #expect(failure.description.hasPrefix("r.scenario:5: scenario failed"))
    }

    static let login = "> setSelectedProvider acme-cable\n< navigateToUrl *\n! user logs in as alice with wonderland\n< setAuthenticationStatus 1 \"\"\n"

    @Test func anyOrderMatchesEachCallbackOnceAndNamesWhatIsLeft() async throws {
        let body = Self.login + "! backend fails authorize with denial not_included \"No.\"\n> getAuthorization news-channel\n"
        let passing = try await run(body + "< any order {\n< tokenRequestFailed news-channel * *\n< status Z100 error \"No.\"\n< }\n")
        #expect(passing.passed, "\(passing.failure?.description ?? "")")
        let failure = try #require(
            try await run(body + "< any order {\n< tokenRequestFailed news-channel * *\n< status Z999 error *\n< }\n").failure)
        #expect(failure.line == 10 && failure.step == "< any order { … }")
        expectEqual(failure.expected, "one of, in any order: tokenRequestFailed \"news-channel\" * *; status \"Z999\" \"error\" *")
        expectEqual(failure.actual, "status \"Z100\" \"error\" \"No.\"")
    }

    /// `< one of {`: the next callback matches one of the block's expectations, whichever the sources
    /// allow; a callback matching none fails and names them all.
    @Test func oneOfAcceptsEitherOutcomeAndNamesThemWhenNoneCame() async throws {
        let body = "> checkAuthentication\n"
        for block in ["< one of {\n< setAuthenticationStatus 1 \"\"\n< setAuthenticationStatus 0 *\n< }\n",
                      "< one of {\n< setAuthenticationStatus 0 *\n< setAuthenticationStatus 1 \"\"\n< }\n"] {
            let passing = try await run(body + block)
            #expect(passing.passed, "\(passing.failure?.description ?? "")")
        }
        let failure = try #require(try await run(body + "< one of {\n< setAuthenticationStatus 1 \"\"\n< selectedProvider nil\n< }\n").failure)
        #expect(failure.line == 5 && failure.step == "< one of { … }")
        expectEqual(failure.expected, "one of: setAuthenticationStatus \"1\" \"\" | selectedProvider nil")
        expectEqual(failure.actual, "setAuthenticationStatus \"0\" \"USER_NOT_AUTHENTICATED_ERROR\"")
    }

    @Test func backendRequestsAreCheckedOnceAScriptExpectsOne() async throws {
        let script = "> setRequestor sim-requestor\n< setRequestorComplete success\n⇢ configuration\n"
        let failure = try #require(await ScenarioRunner().run(try ScenarioParser.parse(script, file: "r.scenario")).failure)
        #expect(failure.line == 2 && failure.actual == "⇢ configuration", "the request comes before the callback")
    }

    @Test func aRegexGroupCapturesPartOfAValue() async throws {
        let body = "> setSelectedProvider acme-cable\n< navigateToUrl $code=~\"/sim-requestor/([A-Z0-9]+)$\"\n"
        let failure = try #require(try await run(body + "> getMetadata DEVICEID\n< setMetadataStatus DEVICEID $code false\n").failure)
        #expect(failure.expected.hasPrefix("setMetadataStatus \"DEVICEID\" $code (= \""), "\(failure.expected)")
        #expect(!failure.expected.contains("https://"), "the group, not the URL")
    }

    @Test func anAnswerStillHeldAtTheEndIsReported() async throws {
        let held = try #require(
            try await run(Self.login + "! backend holds preauthorize\n> checkPreauthorizedResources [news-channel]\n").failure)
        expectEqual(held.step, "end of script")
        #expect(held.actual.hasPrefix("a preauthorize answer is still held: `! backend releases preauthorize`"), "\(held.actual)")
        let allowing = "allow pending calls\n" + Self.header + Self.login + "! backend holds preauthorize\n> checkPreauthorizedResources [news-channel]\n"
        #expect(await ScenarioRunner().run(try ScenarioParser.parse(allowing, file: "r.scenario")).passed, "unless the script allows it")
    }

    @Test func aProviderRequestStillHeldAtTheEndIsReported() async throws {
        let script = """
            ignore sendTrackingData
            provider live server grants match-1
            > setRequestor sim-requestor
            < setRequestorComplete success
            < entitlementsChanged [live]
            ! provider live holds its answers
            > getAuthorization match-1

            """
        let held = try #require(await ScenarioRunner().run(try ScenarioParser.parse(script, file: "r.scenario")).failure)
        expectEqual(held.step, "end of script")
        expectEqual(held.actual, "a request to live is still held: `! provider live releases its answers`, or say `allow pending calls`")
        let released = script + "! provider live releases its answers\n< setToken * match-1\n"
        #expect(await ScenarioRunner().run(try ScenarioParser.parse(released, file: "r.scenario")).passed, "released, it is answered")
        let unknown = try #require(
            await ScenarioRunner().run(try ScenarioParser.parse(script.replacingOccurrences(of: "provider live holds", with: "provider vod holds"), file: "r.scenario")).failure)
        expectEqual(unknown.actual, "no provider 'vod'")
    }

    @Test func secretsAreShortenedInReportsButCodesAndIdsAreNot() {
        expectEqual(ScenarioValue.text("media.Xq3v9Zt0aB7yL2kP4sD8fG1h").redactedDescription, "\"medi…\"")
        expectEqual(ScenarioValue.text("USER_NOT_AUTHENTICATED_ERROR").redactedDescription, "\"USER_NOT_AUTHENTICATED_ERROR\"")
        expectEqual(ScenarioValue.text("b45a4ae78cf6552fb8f510e7a83497fb").redactedDescription.count, 34, "a hash is not a secret")
    }

    @Test func aSignInLineShowsItsFieldsNeverWhatTheUserTyped() async throws {
        let script = """
            ignore sendTrackingData
            provider magazine subscription
            subscriber ann password "s3cret-pass" of magazine issues issue-1
            > setRequestor sim-requestor
            < setRequestorComplete success
            > signIn magazine username=ann password=s3cret-wrong
            < providerSignInStatus magazine 1 "" *

            """
        let result = await ScenarioRunner().run(try ScenarioParser.parse(script, file: "s.scenario"))
        let failure = try #require(result.failure)
        expectEqual(failure.context.last, "6: > signIn magazine password=… username=…")
        #expect(!failure.description.contains("s3cret"), "\(failure)")
        let failingStep = try #require(try await ScenarioRunner().run(
            ScenarioParser.parse(script.replacingOccurrences(of: "< providerSignInStatus", with: "> @main signIn magazine pin=1234\n< providerSignInStatus"), file: "s.scenario")
        ).failure)
        expectEqual(failingStep.step, "> @main signIn magazine pin=…", "\(failingStep)")
    }

    @Test func aMissingCallbackFails() async throws {
        let failure = try #require(try await run("< selectedProvider nil\n").failure)
        #expect(failure.line == 4 && failure.actual == "no callback")
    }

    @Test func anUnexpectedCallbackFailsBeforeTheNextStep() async throws {
        let failure = try #require(try await run("> checkAuthentication\n> getSelectedProvider\n< selectedProvider nil\n").failure)
        expectEqual(failure.line, 5)
        #expect(failure.actual.hasPrefix("unexpected setAuthenticationStatus"))
    }

    @Test func aLeftoverCallbackFailsAtTheEnd() async throws {
        let failure = try #require(try await run("> getSelectedProvider\n").failure)
        #expect(failure.step == "end of script" && failure.actual == "selectedProvider nil")
    }

    @Test func anUnansweredCallFailsUnlessAllowed() async throws {
        let failure = try #require(try await run("> getAuthentication\n< displayProviderDialog *\n").failure)
        expectEqual(failure.step, "end of script")
        expectEqual(failure.actual, "#2 getAuthentication() got no terminal callback")
        let allowed = await ScenarioRunner().run(
            try ScenarioParser.parse("allow pending calls\n" + Self.header + "> getAuthentication\n< displayProviderDialog *\n", file: "a"))
        #expect(allowed.passed)
    }

    @Test func anUncapturedReferenceIsAClearFailure() async throws {
        let failure = try #require(try await run("> handleExternalURL $never\n").failure)
        expectEqual(failure.expected, "$never to be captured earlier")
    }

    @Test func aRefusedSetOptionsCanBeExpected() async throws {
        let result = try await run("> setOptions visitorID=v1 colour=blue\n< optionsRefused [colour]\n> setOptions visitorID=v2\n")
        #expect(result.passed, "\(result.failure?.description ?? "")")
    }

    @Test(.backgroundThread) func runsAreDeterministic() async throws {
        let text = Self.header + """
            > setSelectedProvider acme-cable
            < navigateToUrl $url=*
            ! user logs in as alice with wonderland
            < setAuthenticationStatus 1 ""
            > getAuthorization news-channel
            > getAuthorization movies-hd
            < setToken $a=* news-channel
            < setToken $b=* movies-hd
            < setToken $a news-channel
            """
        // The last line is wrong on purpose: the failure (with its token values) must be identical every run.
        var reports: Set<String> = []
        for _ in 0..<5 {
            let result = await ScenarioRunner().run(try ScenarioParser.parse(text, file: "d"))
            reports.insert(result.failure?.description ?? "passed")
        }
        expectEqual(reports.count, 1)
        expectEqual(reports.first?.contains("scenario failed"), true)
    }

    @Test func runsReportTheTransitionsTheyExercised() async throws {
        let result = try await run("""
            > setSelectedProvider acme-cable
            < navigateToUrl *
            ! user logs in as alice with wonderland
            < setAuthenticationStatus 1 ""
            """)
        #expect(result.passed)
        let rows = Set(result.transitionsExercised.map(\.description))
        for expected in [
            "configuration: unconfigured --> configuring : setRequestor / loadConfiguration",
            "configuration: configuring --> configured : configurationLoaded [current] / setRequestorComplete, restoreTokens, runQueue",
            "authentication: unknown --> unauthenticated : configurationLoaded [noValidStoredToken]",
            "authentication: unauthenticated --> preparingLogin : setSelectedProvider / trackSelection, drawSecrets",
            "authentication: preparingLogin --> creatingSession : flowSecretsDrawn / createSession",
            "authentication: creatingSession --> awaitingRedirect : backendAnswered [loginNeeded] / startTimer, navigateToUrl",
            "authentication: awaitingRedirect --> readingProfile : handleExternalURL [accepted] / cancelTimer, readProfile",
            "authentication: readingProfile --> authenticated : backendAnswered [profileMatchesFlow] / setAuthenticationStatus",
        ] {
            #expect(rows.contains(expected), "\(expected)")
        }
        expectEqual(rows.count, 8, "\(rows.sorted())")
    }
}

/// "Changing one expected value in any scenario makes it fail with a report that names the line":
/// every literal expected value of every scenario in the library is changed in turn.
@Suite("Scenario library mutation check")
struct ScenarioMutationTests {
    /// Every version of the step with exactly one literal expected value changed.
    static func mutations(of step: Step) -> [Step] {
        guard case .expect(let expectation) = step.kind else { return [] }
        var steps: [Step] = []
        for index in expectation.arguments.indices {
            for changed in mutations(of: expectation.arguments[index]) {
                var copy = expectation
                copy.arguments[index] = changed
                var mutated = step
                mutated.kind = .expect(copy)
                steps.append(mutated)
            }
        }
        return steps
    }

    /// Every version of the pattern with exactly one literal changed (negations are left alone:
    /// changing what must *not* match usually still passes).
    static func mutations(of pattern: Pattern) -> [Pattern] {
        switch pattern {
        case .equals(.text(let text)): return [.equals(.text(text + "-changed"))]
        case .equals(.none): return [.equals(.text("not-nil"))]
        case .list(let items):
            return items.indices.flatMap { index in
                mutations(of: items[index]).map { changed in
                    var copy = items
                    copy[index] = changed
                    return Pattern.list(copy)
                }
            }
        case .capture(let name, let inner): return mutations(of: inner).map { .capture(name, $0) }
        default: return []
        }
    }

    @Test(.backgroundThread, arguments: ScenarioLibraryTests.files)
    func everyExpectedValueIsChecked(file: String) async throws {
        let scenario = try ScenarioLibrary.load(file)
        var mutations = 0
        for (index, step) in scenario.steps.enumerated() {
            for changed in Self.mutations(of: step) {
                var copy = scenario
                copy.steps[index] = changed
                let result = await ScenarioRunner().run(copy)
                mutations += 1
                #expect(
                    result.failure?.line == step.line,
                    "changing line \(step.line) of \(scenario.name) was not caught there: \(result.failure?.description ?? "passed")")
            }
        }
        #expect(mutations > 0, "\(scenario.name) has no literal expectation to change")
    }
}

/// The language article's first example must run as printed: someone new copies it first.
@Suite("The scenario language article")
struct ScenarioLanguageArticleTests {
    @Test func theArticlesExampleRunsAndPasses() async throws {
        let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(
                "Sources/EntitlementScenarios/EntitlementScenarios.docc/ScenarioLanguage.md")
        let text = try String(contentsOf: article, encoding: .utf8)
        let between = try #require(text.components(separatedBy: "<!-- scenario-example-begin -->").dropFirst().first)
        let block = try #require(between.components(separatedBy: "<!-- scenario-example-end -->").first)
        let script = block.replacingOccurrences(of: "```text\n", with: "").replacingOccurrences(of: "```", with: "")
        let result = await ScenarioRunner().run(try ScenarioParser.parse(script, file: "ScenarioLanguage.md"))
        #expect(result.passed, "\(result.failure?.description ?? "")")
    }
}
