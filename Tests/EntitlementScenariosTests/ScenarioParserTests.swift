import EntitlementEngine
import EntitlementScenarios
import EntitlementSimulator
import EntitlementTestSupport
import Testing

@Suite("Scenario parser: strict, with file:line:column errors")
struct ScenarioParserTests {
    func error(_ text: String) -> ScenarioParseError? {
        do {
            _ = try ScenarioParser.parse(text, file: "t.scenario")
            return nil
        } catch {
            return error
        }
    }

    /// Each refused line: its text, and where and why it is refused (typed, so the literal type-checks at once).
    static let refusals: [(line: String, lineNumber: Int, column: Int, message: String)] = [
        ("> getAuthorization \"news", 2, 20, "unterminated string"),
        ("> fetchToken", 2, 3, "unknown API call 'fetchToken'"),
        ("< setToken *", 2, 3, "setToken takes 2 arguments (token resource), got 1; end with '...' to skip the rest"),
        ("< setToken * news extra", 2, 3, "setToken takes 2 arguments (token resource), got 3; end with '...' to skip the rest"),
        ("< setTokn * news", 2, 3, "unknown callback 'setTokn'"),
        ("! clock advances soon", 2, 18, "'soon' is not a duration (numbers with d, h, m, s or ms, largest first: 90s, 10m, 59m30s)"),
        ("! clock advances 30s59m", 2, 18, "'30s59m' is not a duration (numbers with d, h, m, s or ms, largest first: 90s, 10m, 59m30s)"),
        ("! clock advances 1m1m", 2, 18, "'1m1m' is not a duration (numbers with d, h, m, s or ms, largest first: 90s, 10m, 59m30s)"),
        ("! clock advances 5", 2, 18, "'5' is not a duration (numbers with d, h, m, s or ms, largest first: 90s, 10m, 59m30s)"),
        ("! clock advances 9999999999999d", 2, 18, "'9999999999999d' is longer than the engine's clock can count"),
        ("! backend fails tokenz with timeout", 2, 17, "unknown backend operation 'tokenz' (configuration, createSession, resumeSession, session, partnerSession, profiles, profile, profileByCode, partnerProfile, authorize, preauthorize, logout)"),
        ("! wizard waves", 2, 3, "unknown actor 'wizard' (user, web view, clock, backend, storage, attacker, platform, second-screen, provider, server, subscriber, engine, host, app)"),
        ("> @tv checkAuthentication", 2, 3, "unknown engine 'tv' (declare it with `engine tv`; known: main)"),
        ("engine main", 2, 8, "'main' cannot name another engine"),
        ("engine tv storage phone", 2, 19, "unknown engine 'phone' (main, or one declared before)"),
        ("engine tv synced", 2, 11, "'synced' goes after 'storage ENGINE'"),
        ("engine tv colour blue", 2, 11, "unknown engine option 'colour' (device, storage, synced, platform-sso)"),
        ("engine tv\n< any order {\n< @tv status * * *\n< }", 4, 1, "an '< any order {' block expects one engine's callbacks"),
        ("engine news\n< @news any order {\n< @main status * * *\n< }", 4, 1, "an '< any order {' block expects one engine's callbacks"),
        ("! app on setTokn will call checkAuthentication", 2, 10, "unknown callback 'setTokn'"),
        ("! app on setToken will call fetch", 2, 29, "unknown API call 'fetch'"),
        ("! storage fails loads", 2, 17, "expected 'fails saves'"),
        ("set platform-sso\n! platform user answers dance", 3, 25, "unknown platform picker action 'dance'"),
        ("! second-screen user enters code $c", 2, 34, "expected 'as'"),
        ("! platform user will cancel", 2, 3, "the device has no platform account: add `set platform-sso` first"),
        ("< navigateToUrl ~\"([\"", 2, 18, "invalid regular expression"),
        ("< setToken $=* news", 2, 12, "'$' must be followed by a name"),
        ("> setSelectedProvider", 2, 22, "expected an MVPD id or nil"),
        ("> checkAuthentication now", 2, 23, "unexpected text at the end of the line"),
        ("> getMetadata ZIP", 2, 15, "unknown metadata key 'ZIP' (TTL_AUTHN, TTL_AUTHZ/<resource>, DEVICEID, user/<name>)"),
        ("< setToken \"a\\q\" news", 2, 12, "unknown escape '\\q' in string"),
        ("> checkAuthentication\nuser zoe password p mvpd acme-cable", 3, 1, "declarations and settings must come before the first step"),
        ("world default", 2, 1, "'world' must be the first declaration"),
        ("set colour blue", 2, 5, "unknown setting 'colour'"),
        ("ignore sendTrackingDatum", 2, 8, "unknown callback 'sendTrackingDatum'"),
        ("⇢ authorise x", 2, 3, "unknown backend operation 'authorise'"),
        ("⇢ authorize", 2, 3, "⇢ authorize takes 1 argument (resource), got 0"),
        ("⇢ configuration now", 2, 3, "⇢ configuration takes 0 arguments (no arguments), got 1"),
        ("< any order {\n< selectedProvider nil", 2, 3, "'< any order {' is never closed with '< }'"),
        ("< any order {\n> checkAuthentication\n< }", 3, 1, "an '< any order {' block holds expectations only"),
        ("< any order {\n< any order {\n< }", 3, 3, "expectation blocks do not nest"),
        ("< one of {\n< selectedProvider nil", 2, 3, "'< one of {' is never closed with '< }'"),
        ("< }", 2, 3, "'< }' closes nothing"),
        ("repeat 2 {\n> checkAuthentication", 2, 1, "'repeat 2 {' is never closed with '}'"),
        ("repeat 0 {\n}", 2, 8, "repeat takes 1 to 10000 times, not 0"),
        ("repeat 2\n}", 2, 9, "expected '{'"),
        ("}", 2, 1, "'}' closes nothing"),
        ("repeat 10000 {\nrepeat 10000 {\n> checkAuthentication\n}\n}", 6, 1, "the repeat block makes more than 100000 steps"),
        ("mvpd x \"X\" turbo", 2, 12, "unknown MVPD option 'turbo' (sso, temppass, per-requestor, degraded, authn-ttl, authz-ttl, login-hops, no-logout-page)"),
    ]

    @Test(arguments: refusals)
    func refusesWithLineAndColumn(line: String, lineNumber: Int, column: Int, message: String) throws {
        let failure = try #require(error("ignore sendTrackingData\n" + line))
        expectEqual(failure.file, "t.scenario")
        expectEqual(failure.line, lineNumber)
        expectEqual(failure.column, column)
        #expect(failure.message.hasPrefix(message), "\(failure.message)")
        #expect(failure.description.hasPrefix("t.scenario:\(lineNumber):\(column): error: "))
    }

    @Test func everyBadLineIsReportedNotOnlyTheFirst() throws {
        let text = "> setRequestor sim-requestor\n> fetchToken\n< setRequestorComplete success\n< setToken *\nset device d\n"
        let problem = try #require(error(text))
        expectEqual(problem.count, 3)
        #expect(problem.description == """
            t.scenario:2:3: error: unknown API call 'fetchToken'
            t.scenario:4:3: error: setToken takes 2 arguments (token resource), got 1; end with '...' to skip the rest
            t.scenario:5:1: error: declarations and settings must come before the first step
            """)
        let flood = String(repeating: "> nope\n", count: 80)
        let many = try #require(error(flood))
        #expect(many.count == 80 && many.following.count == ScenarioParseError.reportLimit - 1 && many.omitted == 30)
        #expect(many.description.hasSuffix("t.scenario: 30 more errors not shown"))
    }

    @Test func indentationCountsInColumns() throws {
        let failure = try #require(error("    > fetchToken"))
        #expect(failure.line == 1 && failure.column == 7)
    }

    @Test func declarationsBuildTheWorld() throws {
        let scenario = try ScenarioParser.parse(
            """
            # A world of one's own.
            world empty
            requestor tv mvpds cable, sat resources news, sports
            mvpd cable "Cable Co" sso authn-ttl 2h authz-ttl 30m login-hops 2 no-logout-page
            mvpd sat "Sat Co" temppass per-requestor
            user zoe password "s3cret pw" mvpd cable entitled news, sports denies movies "Not in your plan." metadata zip [12345, 67890] householdID hh-z
            set redirect-timeout 90s
            set queue-limit 7
            set device dev-9
            ignore sendTrackingData
            allow pending calls
            > setRequestor tv
            """, file: "w.scenario")
        expectEqual(scenario.world.requestors, [.init(id: "tv", mvpdIDs: ["cable", "sat"], resources: ["news", "sports"])])
        let cable = try #require(scenario.world.provider("cable"))
        #expect(cable.displayName == "Cable Co" && cable.platformSSO && cable.authenticationTTL == .seconds(7200))
        #expect(cable.authorizationTTL == .seconds(1800) && cable.extraLoginHops == 2 && !cable.hasLogoutPage)
        let sat = try #require(scenario.world.provider("sat"))
        #expect(sat.tempPass && sat.perRequestor && !sat.platformSSO)
        let zoe = try #require(scenario.world.user("zoe"))
        #expect(zoe.password == "s3cret pw" && zoe.mvpdID == "cable" && zoe.entitlements == ["news", "sports"])
        expectEqual(zoe.denials, ["movies": "Not in your plan."])
        expectEqual(zoe.metadata, ["zip": .list(["12345", "67890"]), "householdID": .text("hh-z")])
        #expect(scenario.settings.redirectTimeout == .seconds(90) && scenario.settings.queueLimit == 7)
        #expect(scenario.deviceID == "dev-9" && scenario.ignored == ["sendTrackingData"] && scenario.allowsPendingCalls)
        #expect(scenario.steps.count == 1 && scenario.name == "w")
    }

    @Test func providerDeclarationsBuildTheChain() throws {
        let scenario = try ScenarioParser.parse(
            """
            provider kids server grants cartoon-1 denies gore-1 "Not for kids." pin "4321" protects horror-1
            provider magazine subscription renews every 2h
            subscriber ann password "pw" of magazine issues issue-1, issue-2 lapsed message "Gold."
            chain magazine, kids, tv-provider
            """, file: "p.scenario")
        let kids = try #require(scenario.world.chainProviders.first { $0.id == "kids" })
        #expect(kids.kind == .server && kids.pin == "4321" && kids.pinProtected == ["horror-1"])
        expectEqual(kids.grants, ["cartoon-1", "horror-1"], "a PIN-protected resource is granted once approved")
        expectEqual(kids.denials, ["gore-1": "Not for kids."])
        let magazine = try #require(scenario.world.chainProviders.first { $0.id == "magazine" })
        #expect(magazine.kind == .subscription && magazine.renews && magazine.verificationInterval == .seconds(7200))
        #expect(scenario.world.subscribers == [
            .init(username: "ann", password: "pw", providerID: "magazine", issues: ["issue-1", "issue-2"], lapsed: true, message: "Gold.")
        ])
        let unknown = #expect(throws: ScenarioParseError.self) {
            try ScenarioParser.parse("provider kids server pins \"1\" protects x\n", file: "p.scenario")
        }
        expectEqual(unknown?.description.contains("(one-at-a-time, server, subscription, grants, denies, pin, renews, every, message)"), true)
    }

    @Test func patternsParse() throws {
        let scenario = try ScenarioParser.parse(
            """
            < setToken $t=~"^media\\." news
            < setToken !$t *
            < sendTrackingData mvpdSelection [acme, *, "a b", $t]
            < status CODE ...
            < selectedProvider nil
            < nothing
            """, file: "p.scenario")
        guard case .expect(let first) = scenario.steps[0].kind, case .expect(let third) = scenario.steps[2].kind,
            case .expect(let fourth) = scenario.steps[3].kind, case .expectNothing = scenario.steps[5].kind
        else {
            Issue.record("unexpected steps \(scenario.steps)")
            return
        }
        expectEqual(first.arguments, [.capture("t", .matches("^media\\.")), .equals(.text("news"))])
        expectEqual(third.arguments[1], .list([.equals(.text("acme")), .any, .equals(.text("a b")), .equals(.reference("t"))]))
        #expect(fourth.acceptsMore && fourth.arguments == [.equals(.text("CODE"))])
    }

    @Test(arguments: [
        ("59m30s", 3_570_000), ("1h30m", 5_400_000), ("2d12h", 216_000_000), ("1s500ms", 1500), ("1h1ms", 3_600_001),
        ("500ms", 500), ("90s", 90_000),
    ])
    func compoundDurationsAddUp(text: String, milliseconds: Int64) throws {
        let scenario = try ScenarioParser.parse("! clock advances \(text)\n", file: "t.scenario")
        guard case .act(.advanceClock(let duration)) = scenario.steps.first?.kind else {
            Issue.record("not a clock advance")
            return
        }
        expectEqual(duration, .milliseconds(milliseconds))
    }

    /// The longest duration that fits runs: the clock stops at the end of time instead of trapping.
    @Test func theLongestClockAdvanceRuns() async throws {
        let text = "ignore sendTrackingData\n> setRequestor sim-requestor\n< setRequestorComplete success\n! clock advances 106751991000d\n> checkAuthentication\n< setAuthenticationStatus 0 USER_NOT_AUTHENTICATED_ERROR\n"
        let result = await ScenarioRunner().run(try ScenarioParser.parse(text, file: "t.scenario"))
        #expect(result.passed, "\(result.failure?.description ?? "")")
    }
}
